// validate.ts's edges, on its pure checks: values JSON can't show, namingLimit's other errors, a calendar quota's and waiting's refusals (field, value and whole message), and the boundary values each check accepts.
import { ConvexError } from "convex/values";
import { describe, expect, test } from "vitest";
import { errorData } from "./error-data.js";
import {
  invalid,
  namingLimit,
  validateCalendarSpec,
  validateConfig,
  validateCount,
  validateSampleShards,
  validateTier,
  validateWaitConfig,
} from "../src/shared/validation/validate.js";
import type { InvalidRateLimitError, RateLimitConfig } from "../src/shared/shapes/validators.js";

/** The InvalidRateLimit data `check` throws (any other error is rethrown; no throw fails the test). */
const errorOf = (check: () => void) => errorData(check) as InvalidRateLimitError;

/** The error data for `field` = `value` (as shown) with `problem`. */
const data = (field: string, value: string, problem: string): InvalidRateLimitError => ({
  kind: "InvalidRateLimit",
  field,
  value,
  message: `${field} = ${value}: ${problem}`,
});

const DAY_MS = 86_400_000;
const utcDay = { period: "day" as const, timeZone: "UTC", anchor: 0 };
/** A calendar quota as the fixed window it runs as (what calendarWindow makes of `kind: "calendar"`). */
const quota = (extra: Record<string, unknown> = {}) =>
  ({ kind: "fixed window", rate: 10, period: DAY_MS, calendar: utcDay, ...extra }) as RateLimitConfig;
const bucket = (extra: Record<string, unknown> = {}) => ({ kind: "token bucket", rate: 10, period: 1000, ...extra }) as RateLimitConfig;

describe("a value an error shows", () => {
  test("an object JSON can't write (a bigint inside, a cycle) is shown as String shows it", () => {
    expect(invalid("config.calendar", { anchor: 1n }, "is odd").data).toEqual(data("config.calendar", "[object Object]", "is odd"));
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(invalid("config.x", cycle, "is odd").data).toEqual(data("config.x", "[object Object]", "is odd"));
  });

  test("null is shown as null", () => {
    expect(invalid("config.start", null, "is odd").data).toEqual(data("config.start", "null", "is odd"));
  });
});

describe("namingLimit leaves alone a ConvexError that isn't an InvalidRateLimit with a message", () => {
  test.each<[string, ConvexError<never>]>([
    ["no data (null)", new ConvexError(null as never)],
    ["another kind with a message", new ConvexError({ kind: "RateLimited", message: "slow down" } as never)],
    ["a message that isn't a string", new ConvexError({ kind: "InvalidRateLimit", message: 5 } as never)],
  ])("%s", (_, error) => {
    expect(namingLimit(error, "sendMessage")).toBe(error);
  });
});

describe("validateConfig's edges", () => {
  test("a period of 1 ms is accepted", () => {
    expect(() => validateConfig(bucket({ period: 1 }))).not.toThrow();
  });

  test("capacity 0 (reserve only) is accepted over several shards: only a positive capacity must give each a token", () => {
    expect(() => validateConfig(bucket({ capacity: 0, shards: 2 }))).not.toThrow();
  });

  test("a calendar quota's window is accepted, and its calendar checked under config.calendar", () => {
    expect(() => validateConfig(quota())).not.toThrow();
    expect(errorOf(() => validateConfig(quota({ calendar: { ...utcDay, anchor: 24 } })))).toEqual(
      data("config.calendar.anchor", "24", "is the hour a day starts at: a whole number from 0 to 23"),
    );
  });

  test.each<[string, Record<string, unknown>, InvalidRateLimitError]>([
    ["start", { start: 5 }, data("config.start", "5", "a calendar quota's periods start where its calendar says; leave start out")],
    ["capacity", { capacity: 10 }, data("config.capacity", "10", "a calendar quota has no capacity: nothing rolls over; leave it out")],
    ["maxReserved", { maxReserved: 3 }, data("config.maxReserved", "3", "a calendar quota can't reserve ahead; leave it out")],
  ])("a calendar quota's window refuses %s", (_, extra, expected) => {
    expect(errorOf(() => validateConfig(quota(extra)))).toEqual(expected);
  });

  // The client's cleanup passes its `limits` option to validateConfig without the shape check (the
  // component's validator refuses the stray field): the calendar's rules are a fixed window's only.
  test("a token bucket with a stray calendar keeps its capacity: the calendar's refusals are a fixed window's", () => {
    expect(() => validateConfig(bucket({ capacity: 5, calendar: utcDay }))).not.toThrow();
  });
});

describe("validateCalendarSpec", () => {
  test("a period that isn't day, week or month is named under the prefix", () => {
    const cal = { period: "year", timeZone: "UTC", anchor: 0 };
    expect(errorOf(() => validateCalendarSpec(cal, "config"))).toEqual(data("config.period", '"year"', 'must be "day", "week" or "month"'));
  });

  test.each<[string, number, number, string]>([
    ["day", 23, 24, "is the hour a day starts at: a whole number from 0 to 23"],
    ["week", 6, 7, "is the weekday a week starts on (0 Sunday … 6 Saturday): a whole number from 0 to 6"],
    ["month", 31, 32, "is the day of the month a month starts on (clamped to the month's last day): a whole number from 1 to 31"],
  ])("a %s's last anchor (%d) is accepted, the next (%d) refused in its own words", (period, last, next, problem) => {
    expect(() => validateCalendarSpec({ period, timeZone: "UTC", anchor: last }, "config")).not.toThrow();
    expect(errorOf(() => validateCalendarSpec({ period, timeZone: "UTC", anchor: next }, "config"))).toEqual(data("config.anchor", String(next), problem));
  });
});

describe("validateCount's edges", () => {
  test("a calendar quota reserves nothing ahead: with reserve, a count above its rate can never succeed", () => {
    expect(() => validateCount(10, quota(), true)).not.toThrow();
    expect(errorOf(() => validateCount(11, quota(), true))).toEqual(data("count", "11", "can never succeed: it exceeds the capacity (10)"));
    // A token bucket without maxReserved may reserve any depth.
    expect(() => validateCount(11, bucket(), true)).not.toThrow();
  });

  test("2.5 over 2 shards (1 and 1.5): the pair's whole 2.5 is accepted, as the planner's pair test serves it", () => {
    expect(() => validateCount(2.5, bucket({ rate: 2.5, shards: 2 }), false)).not.toThrow();
    expect(errorOf(() => validateCount(2.6, bucket({ rate: 2.5, shards: 2 }), false))).toEqual(
      data("count", "2.6", "can never succeed: it exceeds what two shards hold together (2.5)"),
    );
  });
});

describe("a tier's and sampleShards' edges", () => {
  test("a tier of 1024 characters is accepted, one of 1025 refused", () => {
    expect(() => validateTier("t".repeat(1024))).not.toThrow();
    const shown = `"${"t".repeat(76)}...`;
    expect(errorOf(() => validateTier("t".repeat(1025)))).toEqual(data("tier", shown, "is 1025 characters; at most 1024 are allowed"));
  });

  test("sampleShards 1 is accepted", () => {
    expect(() => validateSampleShards(1)).not.toThrow();
  });
});

describe("validateWaitConfig", () => {
  const CALENDAR =
    "a calendar quota can't wait: the next period's allowance can't be borrowed ahead of its start; refuse and retry at resetsAt, or use a token bucket";

  // runWhenAllowed and checkRun call checkWait (so this) on the config as sent, before the flow's
  // shape check: a `kind: "calendar"` config, or a stray `calendar` on another kind, reaches here.
  test.each<[string, RateLimitConfig]>([
    ["a calendar quota as written (kind calendar)", { kind: "calendar", rate: 10, period: "day" } as never],
    ["a calendar quota's fixed window", quota()],
  ])("%s can't wait", (_, config) => {
    expect(errorOf(() => validateWaitConfig(config))).toEqual(data("config.kind", '"calendar"', CALENDAR));
  });

  test.each<[string, RateLimitConfig, InvalidRateLimitError]>([
    [
      "a fixed window on 2 shards",
      { kind: "fixed window", rate: 10, period: 1000, shards: 2 },
      data(
        "config.shards",
        "2",
        "a fixed window waits on one shard: work that runs in a later window may use only what a shard carries into it, which a take split over shards can't tell; use 1 shard, or a token bucket",
      ),
    ],
    [
      "an approximate sliding window",
      { kind: "sliding window", rate: 10, period: 1000, exact: false },
      data(
        "config.exact",
        "false",
        "an approximate sliding window can't wait: it counts aligned windows and can't hold a take at a future instant; use the exact window (exact: true), a token bucket or a fixed window",
      ),
    ],
    [
      "an exact sliding window on 2 shards",
      { kind: "sliding window", rate: 10, period: 1000, shards: 2 },
      data("config.shards", "2", "an exact sliding window waits on one shard: a take split over shards can't be logged ahead; use 1 shard"),
    ],
    [
      "an exact sliding window written asynchronously",
      { kind: "sliding window", rate: 10, period: 1000, exact: true, applyUpdates: "asynchronously" },
      data(
        "config.applyUpdates",
        '"asynchronously"',
        'an exact sliding window waits transactionally: a take recorded for the applier is logged at its decision, not ahead; use "transactionally"',
      ),
    ],
  ])("%s can't wait", (_, config, expected) => {
    expect(errorOf(() => validateWaitConfig(config))).toEqual(expected);
  });

  test.each<[string, RateLimitConfig]>([
    ["a token bucket on 2 shards, asynchronously", bucket({ shards: 2, applyUpdates: "asynchronously" })],
    ["a token bucket with a stray calendar (the shape check names it after)", bucket({ calendar: utcDay })],
    ["a fixed window on 1 shard", { kind: "fixed window", rate: 10, period: 1000, shards: 1 }],
    ["an exact sliding window on 1 shard", { kind: "sliding window", rate: 10, period: 1000, exact: true, shards: 1 }],
    ["an exact sliding window by default", { kind: "sliding window", rate: 10, period: 1000 }],
  ])("%s can wait", (_, config) => {
    expect(() => validateWaitConfig(config)).not.toThrow();
  });
});
