// The config of a calendar quota (`kind: "calendar"`), the shape users write; the component runs it
// as the fixed window `calendarWindow` makes of it (validators.ts, `fixedWindowValidator.calendar`).
import { v, type Infer } from "convex/values";
import { literals } from "convex-helpers/validators";
import { applyUpdates, commonConfigFields, type fixedWindowValidator } from "./validators.js";

/**
 * A calendar quota: `rate` tokens per calendar day, week or month in a time zone, e.g. 1,000 AI
 * messages a month, reset on the customer's billing day at midnight in their zone. It is a fixed
 * window whose windows are the calendar's periods: the allowance is granted whole at each
 * period's start, nothing carries over (no rollover: it holds at most `rate`), and a period is as
 * long as the calendar makes it (a day in a zone with daylight saving is 23 or 25 hours, a month
 * 28 to 31 days). Results and `getValue` carry `resetsAt`, the instant the current period ends.
 * See docs/reference.md, "Calendar quotas".
 *
 * Pro: meters as plans are sold ("1,000 a month from your billing day"), in the customer's zone.
 * Con: the whole allowance can go in one burst at a period's start; pair it with a short limit
 * (e.g. 10 a minute) in `limitAll`.
 *
 * No `capacity` (no rollover), no `maxReserved`: a request with `reserve` never borrows from a
 * period that hasn't started, it takes only what is there now (as `maxReserved: 0` would), so
 * a `limitAll` that reserves a token budget ahead can include a monthly quota, which admits or
 * refuses but never queues. No `start` (the calendar places the periods).
 */
export const calendarValidator = v.object({
  kind: v.literal("calendar"),
  /** The allowance: tokens per period. Must be finite and > 0. */
  rate: v.number(),
  /** The calendar period the allowance is per: `"day"`, `"week"` or `"month"`. */
  period: literals("day", "week", "month"),
  /**
   * The IANA time zone the periods are local to, e.g. `"America/New_York"`. Default `"UTC"`. A
   * period that starts at a local time a daylight-saving change skips starts when the gap ends;
   * one that starts at a local time that happens twice starts at its first occurrence.
   */
  timeZone: v.optional(v.string()),
  /**
   * Where each period starts, in local time. A `"month"`: the day of the month, 1 to 31, clamped
   * to the month's last day (31 is every month's last day), at midnight; default 1. A `"week"`:
   * the weekday, 0 Sunday, 1 Monday … 6 Saturday, at midnight; default 1 (Monday). A `"day"`: the
   * hour, 0 to 23; default 0 (midnight).
   */
  anchor: v.optional(v.number()),
  /** How many rows the limit is spread over; each shard gets its share of `rate`. Defaults to 1. */
  shards: commonConfigFields.shards,
  applyUpdates,
  dryRun: commonConfigFields.dryRun,
  metrics: commonConfigFields.metrics,
  lockout: commonConfigFields.lockout,
});
/**
 * CalendarConfig is a calendar quota's config (see {@link calendarValidator}). The fields other kinds
 * have and it refuses are typed `never`, so `capacity: 2` on a calendar quota fails to compile (a
 * union's other members would otherwise accept it).
 */
export type CalendarConfig = Infer<typeof calendarValidator> & { capacity?: never; maxReserved?: never; start?: never };

/** Where a calendar quota's periods start, as its fixed window records it (see `calendarOf`). */
export type CalendarSpec = NonNullable<Infer<typeof fixedWindowValidator>["calendar"]>;
