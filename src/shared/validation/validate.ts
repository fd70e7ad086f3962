// Validation of configs and requests. Every error is a ConvexError whose data names the field and
// the value, so it survives production redaction. Nothing is written before these checks pass.
import { ConvexError } from "convex/values";
import { minus, pairAccepts, smallestPair, splitTotal } from "../core/split.js";
import { kindOf, type InvalidRateLimitError, type RateLimitConfig } from "../shapes/validators.js";
import type { ConcurrencyConfig } from "../shapes/concurrency-validators.js";
import { math } from "../core/math.js";
import { ANCHOR_RANGE, isTimeZone } from "../core/calendar.js";

/** The longest `name` or `key` accepted, in UTF-16 code units. Keeps index keys small. */
export const MAX_NAME_LENGTH = 1024;
/** The most shards a limit may be split over. */
export const MAX_SHARDS = 1024;

/** A value as an error shows it: a string quoted, an object or array as JSON (not "[object Object]"), at most 80 characters. */
function show(value: unknown): string {
  const s = typeof value === "string" || (typeof value === "object" && value !== null) ? jsonOr(value) : String(value);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** JSON of `value`, or String(value) where JSON has none (a cycle, a bigint inside). */
function jsonOr(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Builds the `InvalidRateLimit` error for `field`. */
export function invalid(
  field: string,
  value: unknown,
  problem: string,
): ConvexError<InvalidRateLimitError> {
  const shown = show(value);
  return new ConvexError({
    kind: "InvalidRateLimit",
    field,
    value: shown,
    message: `${field} = ${shown}: ${problem}`,
  });
}

/**
 * namingLimit returns `error` with the limit it concerns named at the end of its message, `count =
 * -1: must be a finite number ≥ 0 (limit "sendMessage")`, as every config error of the
 * `RateLimiter` constructor says: an `InvalidRateLimit` `ConvexError` keeps its kind, field and
 * value, and a message named already is left as it is. Any other error is returned unchanged.
 */
export function namingLimit(error: unknown, name: string): unknown {
  const data: unknown = error instanceof ConvexError ? error.data : undefined;
  if (!isInvalidData(data)) return error;
  const suffix = ` (limit ${JSON.stringify(name)})`;
  if (data.message.endsWith(suffix)) return error;
  return new ConvexError<InvalidRateLimitError>({ ...data, message: `${data.message}${suffix}` });
}

function isInvalidData(data: unknown): data is InvalidRateLimitError {
  return (
    typeof data === "object" &&
    data !== null &&
    "kind" in data &&
    data.kind === "InvalidRateLimit" &&
    "message" in data &&
    typeof data.message === "string"
  );
}

function requireNumber(
  field: string,
  value: number,
  ok: (x: number) => boolean,
  problem: string,
): void {
  if (!(Number.isFinite(value) && ok(value))) throw invalid(field, value, problem);
}

/**
 * Checks a config. Throws an `InvalidRateLimit` `ConvexError` naming the first bad field.
 * Rules: `rate` > 0; `period` ≥ 1 ms; `capacity` ≥ 0; `maxReserved` ≥ 0; `start` finite; all
 * finite; a sliding window has no `maxReserved`, and a `capacity` only equal to `rate`; `shards`
 * a whole number from 1 to {@link MAX_SHARDS}, and no more shards than whole tokens of `rate`
 * (and of `capacity`, unless it is 0), so every shard can serve a count of 1; an exact sliding
 * window has no `start` (its log is bounded whatever the rate: no cap on `rate`).
 */
export function validateConfig(config: RateLimitConfig): void {
  requireNumber("config.rate", config.rate, (x) => x > 0, "must be a finite number > 0");
  requireNumber("config.period", config.period, (x) => x >= 1, "must be a finite number of ms ≥ 1");
  if (config.capacity !== undefined) {
    requireNumber("config.capacity", config.capacity, (x) => x >= 0, "must be a finite number ≥ 0");
  }
  if (config.maxReserved !== undefined) {
    requireNumber("config.maxReserved", config.maxReserved, (x) => x >= 0, "must be a finite number ≥ 0");
  }
  if (config.kind !== "token bucket" && config.start !== undefined) {
    requireNumber("config.start", config.start, () => true, "must be a finite number of ms");
  }
  if (config.kind === "sliding window") {
    if (config.capacity !== undefined && config.capacity !== config.rate) {
      throw invalid(
        "config.capacity",
        config.capacity,
        `a sliding window holds at most its rate (${config.rate}) in any window; leave capacity out`,
      );
    }
    if (config.maxReserved !== undefined) {
      throw invalid(
        "config.maxReserved",
        config.maxReserved,
        "a sliding window can't reserve ahead (reserved work would run past its window's limit); use a token bucket",
      );
    }
  }
  const shards = config.shards ?? 1;
  const exact: unknown = (config as { exact?: unknown }).exact;
  if (exact !== undefined && typeof exact !== "boolean") throw invalid("config.exact", exact, "must be true or false");
  requireNumber(
    "config.shards",
    shards,
    (x) => Number.isInteger(x) && x >= 1 && x <= MAX_SHARDS,
    `must be a whole number from 1 to ${MAX_SHARDS}`,
  );
  if (shards > 1) {
    const capacity = config.capacity ?? config.rate;
    if (math.floor(config.rate) < shards) {
      throw invalid(
        "config.shards",
        shards,
        `rate ${config.rate} can't give each of ${shards} shards a whole token; ${atMost(config.rate)}`,
      );
    }
    if (capacity > 0 && math.floor(capacity) < shards) {
      throw invalid(
        "config.shards",
        shards,
        `capacity ${capacity} can't give each of ${shards} shards a whole token; ${atMost(capacity)}`,
      );
    }
  }
  if (kindOf(config) === "exact sliding window") validateExact(config, shards);
  if (config.kind === "fixed window" && config.calendar !== undefined) validateCalendarWindow(config);
  if (config.lockout !== undefined) validateLockout(config.lockout, shards, config.applyUpdates);
}

/**
 * validateCalendarSpec checks where a calendar quota's periods start (`timeZone` and `anchor`),
 * naming the field under `prefix` (`config`, or `config.calendar` for the fixed window a quota
 * runs as).
 */
export function validateCalendarSpec(cal: { period: string; timeZone: string; anchor: number }, prefix: string): void {
  if (!isTimeZone(cal.timeZone)) {
    throw invalid(`${prefix}.timeZone`, cal.timeZone, "is not a time zone this runtime knows: use an IANA name such as \"America/New_York\" or \"UTC\"");
  }
  const range = ANCHOR_RANGE[cal.period as keyof typeof ANCHOR_RANGE];
  if (range === undefined) throw invalid(`${prefix}.period`, cal.period, "must be \"day\", \"week\" or \"month\"");
  const [lo, hi] = range;
  if (!(Number.isInteger(cal.anchor) && cal.anchor >= lo && cal.anchor <= hi)) {
    const what = cal.period === "day" ? "the hour a day starts at" : cal.period === "week" ? "the weekday a week starts on (0 Sunday … 6 Saturday)" : "the day of the month a month starts on (clamped to the month's last day)";
    throw invalid(`${prefix}.anchor`, cal.anchor, `is ${what}: a whole number from ${lo} to ${hi}`);
  }
}

/**
 * A lockout lasts a finite whole number of ms ≥ 1, on one shard (a lock on one shard's row would
 * go unseen by requests drawing another), written transactionally (asynchronous mode writes no
 * row on the hot path, so it couldn't lock).
 */
function validateLockout(lockout: number, shards: number, applyUpdates: string | undefined): void {
  requireNumber("config.lockout", lockout, (x) => Number.isInteger(x) && x >= 1, "must be a whole number of ms ≥ 1");
  if (shards > 1) throw invalid("config.shards", shards, "a limit with lockout locks the key's one row; use 1 shard");
  if (applyUpdates === "asynchronously") {
    throw invalid("config.applyUpdates", applyUpdates, "a limit with lockout writes its lock with the take; use \"transactionally\"");
  }
}

/** The advice for `tokens` that can't be split over the shards asked for: as many shards as whole tokens. */
function atMost(tokens: number): string {
  const most = math.floor(tokens);
  return most <= 1 ? "use 1 shard" : `use at most ${most} shards`;
}

/**
 * The fixed window a calendar quota runs as (see `calendarWindow`): its calendar valid, and none
 * of what a calendar quota refuses (`start`, `capacity`, `maxReserved`).
 */
function validateCalendarWindow(config: RateLimitConfig & { kind: "fixed window" }): void {
  validateCalendarSpec(config.calendar!, "config.calendar");
  if (config.start !== undefined) throw invalid("config.start", config.start, "a calendar quota's periods start where its calendar says; leave start out");
  if (config.capacity !== undefined) throw invalid("config.capacity", config.capacity, "a calendar quota has no capacity: nothing rolls over; leave it out");
  if (config.maxReserved !== undefined) throw invalid("config.maxReserved", config.maxReserved, "a calendar quota can't reserve ahead; leave it out");
}

/** An exact sliding window's own rules (see {@link validateConfig}). */
function validateExact(config: RateLimitConfig, shards: number): void {
  if (config.kind === "sliding window" && config.start !== undefined) {
    throw invalid("config.start", config.start, "an exact sliding window has no windows to align; leave start out, or set exact: false");
  }
}

/**
 * Checks a request's `count` against a (valid) config: finite, ≥ 0 (and no `reserve` on a sliding
 * window), and one that can ever succeed: one that a full limit accepts by the very test the
 * decision uses. Unsharded: at most
 * `capacity` (plus `maxReserved` when reserving). Sharded: what the weakest pair of full shards
 * accepts together (by `pairAccepts`, the planner's own test), so a fresh limit serves every count
 * validation passes.
 */
export function validateCount(count: number, config: RateLimitConfig, reserve: boolean): void {
  validateCountValue(count);
  if (reserve && config.kind === "sliding window") {
    throw invalid("reserve", reserve, "a sliding window can't reserve ahead; use a token bucket for reservations");
  }
  const shards = config.shards ?? 1;
  const capacity = config.capacity ?? config.rate;
  // A calendar quota reserves nothing ahead: with `reserve` it takes only what is there.
  const calendar = config.kind === "fixed window" && config.calendar !== undefined;
  const maxReserved = reserve && !calendar ? (config.maxReserved ?? Infinity) : 0;
  if (shards === 1) {
    if (!(minus(capacity, count) >= -maxReserved)) throw neverSucceeds(count, "the capacity", capacity, maxReserved);
    return;
  }
  // Both splits favour low shard numbers, so the weakest pairs are among the last three shards.
  const cap = (i: number) => splitTotal(capacity, shards, i);
  const res = (i: number) => splitTotal(maxReserved, shards, i);
  for (let i = math.max(0, shards - 3); i < shards; i++) {
    for (let j = i + 1; j < shards; j++) {
      const floor = reserve && count > 0 ? -(res(i) + res(j)) : 0;
      if (!pairAccepts(cap(i), cap(j), count, floor)) {
        throw neverSucceeds(count, "what two shards hold together", smallestPair(capacity, shards), maxReserved);
      }
    }
  }
}

function neverSucceeds(count: number, what: string, most: number, maxReserved: number) {
  const reserved = maxReserved > 0 ? ` plus what may be reserved (${maxReserved} in all)` : "";
  return invalid("count", count, `can never succeed: it exceeds ${what} (${most})${reserved}`);
}

/** Checks a limit's `name` (non-empty, at most {@link MAX_NAME_LENGTH}) and `key` (at most that long). */
export function validateNameAndKey(name: string, key: string | undefined): void {
  if (name.length === 0) throw invalid("name", name, "must not be empty");
  if (name.length > MAX_NAME_LENGTH) {
    throw invalid("name", name, `is ${name.length} characters; at most ${MAX_NAME_LENGTH} are allowed`);
  }
  if (key !== undefined && key.length > MAX_NAME_LENGTH) {
    throw invalid("key", key, `is ${key.length} characters; at most ${MAX_NAME_LENGTH} are allowed`);
  }
}

/**
 * Checks a request's `count` as a number: finite and ≥ 0, whatever the config. Given the limit's
 * `name`, the error names it too (see {@link namingLimit}).
 */
export function validateCountValue(count: number, name?: string): void {
  if (Number.isFinite(count) && count >= 0) return;
  const error = invalid("count", count, "must be a finite number ≥ 0");
  throw name === undefined ? error : namingLimit(error, name);
}

/** Checks a request's `tier`: a non-empty string of at most `MAX_NAME_LENGTH` characters. */
export function validateTier(tier: string): void {
  if (tier.length === 0) throw invalid("tier", tier, "must not be empty; leave it out for no tier");
  if (tier.length > MAX_NAME_LENGTH) throw invalid("tier", tier, `is ${tier.length} characters; at most ${MAX_NAME_LENGTH} are allowed`);
}

/** Checks `sampleShards`: a whole number ≥ 1 (values above `shards` read every shard). */
export function validateSampleShards(sampleShards: number | undefined): void {
  if (sampleShards === undefined) return;
  requireNumber(
    "sampleShards",
    sampleShards,
    (x) => Number.isInteger(x) && x >= 1,
    "must be a whole number ≥ 1",
  );
}

/** The most leases a concurrency limit may hold at once per key: each acquire reads them all. */
export const MAX_IN_FLIGHT = 1000;

/**
 * Checks a concurrency limit's config: `capacity` a whole number from 1 to {@link MAX_IN_FLIGHT},
 * `lease` a finite number of ms ≥ 1. Throws an `InvalidRateLimit` `ConvexError` naming the field.
 */
export function validateConcurrencyConfig(config: ConcurrencyConfig): void {
  requireNumber(
    "config.capacity",
    config.capacity,
    (x) => Number.isInteger(x) && x >= 1 && x <= MAX_IN_FLIGHT,
    `must be a whole number of leases from 1 to ${MAX_IN_FLIGHT}`,
  );
  requireNumber("config.lease", config.lease, (x) => x >= 1, "must be a finite number of ms ≥ 1");
}

/** Checks `extend`'s `by`, when given: a finite number of ms ≥ 1. */
export function validateExtendBy(by: number | undefined): void {
  if (by === undefined) return;
  requireNumber("by", by, (x) => x >= 1, "must be a finite number of ms ≥ 1");
}

/**
 * validateWaitConfig checks that a limit can wait until allowed (`runWhenAllowed`,
 * `waitUntilAllowed`), which reserves tokens ahead: token buckets can, a fixed window on one shard,
 * and an exact sliding window on one shard, written transactionally (its take is logged at the instant the
 * work may run; a take split over shards, or recorded for the applier, would be logged now). An
 * approximate sliding window can't: it counts windows, and can't hold a take at a future instant.
 * Neither can a calendar quota (its period's allowance is never borrowed) nor a limit with a
 * `lockout` (the last token's take locks the key). Throws an `InvalidRateLimit` `ConvexError`
 * naming the field that prevents it.
 */
export function validateWaitConfig(config: RateLimitConfig): void {
  // A calendar quota grants its period's allowance whole at the period's start; queued work would borrow the next's.
  if ((config.kind as string) === "calendar" || (config.kind === "fixed window" && config.calendar !== undefined)) {
    throw invalid("config.kind", "calendar", "a calendar quota can't wait: the next period's allowance can't be borrowed ahead of its start; refuse and retry at resetsAt, or use a token bucket");
  }
  if (config.lockout !== undefined) {
    throw invalid("config.lockout", config.lockout, "a limit with a lockout can't wait: the take of the last token locks the key, so queued work could never follow; use a limit without lockout");
  }
  if (config.kind === "fixed window" && (config.shards ?? 1) > 1) {
    throw invalid("config.shards", config.shards, "a fixed window waits on one shard: work that runs in a later window may use only what a shard carries into it, which a take split over shards can't tell; use 1 shard, or a token bucket");
  }
  if (config.kind !== "sliding window") return;
  if (config.exact === false) {
    throw invalid("config.exact", false, "an approximate sliding window can't wait: it counts aligned windows and can't hold a take at a future instant; use the exact window (exact: true), a token bucket or a fixed window");
  }
  if ((config.shards ?? 1) > 1) {
    throw invalid("config.shards", config.shards, "an exact sliding window waits on one shard: a take split over shards can't be logged ahead; use 1 shard");
  }
  if (config.applyUpdates === "asynchronously") {
    throw invalid("config.applyUpdates", config.applyUpdates, "an exact sliding window waits transactionally: a take recorded for the applier is logged at its decision, not ahead; use \"transactionally\"");
  }
}
