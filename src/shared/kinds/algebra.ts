// The rate-limit algebra: pure functions of (state, params, now, count). The decision code takes
// time as an argument and draws no random numbers; only the two public conveniences built on it
// (predict.ts: `calculateRateLimit` and `decideRateLimit`) default `now` to `Date.now()`. The
// server and the React hook call the same code.
import { kindOf, type RateLimitConfig } from "../shapes/validators.js";
import { minus } from "../core/split.js";
import { invalid } from "../validation/validate.js";
import { math } from "../core/math.js";
import { phaseOf, startOf, windowIndex, windowStart } from "./windows.js";
import { entriesOf, evaluate, roomFor, stateOf, valueAt, withValue, type Params, type State } from "./state.js";
import { encodeLog, freedAt, scanLog, takenLog, withTaken } from "./window-log.js";
export { phaseOf, startOf, windowIndex, windowStart };
export { entriesOf, evaluate, roomFor, stateOf, valueAt, withValue, type Params, type State };

/**
 * SECOND is one second in ms (1000), for configs: `{ rate: 10, period: SECOND }`. Periods, and
 * every other duration and instant in this package, are in ms.
 */
export const SECOND = 1000;
/** MINUTE is one minute in ms (60 000). */
export const MINUTE = 60 * SECOND;
/** HOUR is one hour in ms (3 600 000). */
export const HOUR = 60 * MINUTE;
/** DAY is one day in ms (86 400 000). */
export const DAY = 24 * HOUR;
/** WEEK is one week in ms (604 800 000). */
export const WEEK = 7 * DAY;

/**
 * leastDelay returns the least whole number of ms d ≥ 1 such that `ok(now + d)`, for a predicate
 * that turns true at some instant and stays true. `guess` is a float estimate of d (ms); it is
 * corrected by evaluating `ok` itself, so the answer agrees with the evaluation to the millisecond
 * whatever float rounding did to the estimate. `count` (default NaN) only names the request in the
 * error thrown when the wait doesn't fit in a number.
 */
export function leastDelay(
  ok: (t: number) => boolean,
  now: number,
  guess: number,
  count: number = NaN,
): number {
  let hi = Number.isFinite(guess) ? math.max(1, math.ceil(guess)) : 1;
  let lo = 0; // a d known to fail; 0 stands for "nothing below 1 is allowed"
  if (ok(now + hi)) {
    for (let step = 1; hi - step >= 1; step *= 2) {
      // `now + (hi - step)`, not `now + hi - step`: the instant a retry after `hi - step` ms lands
      // on. Past Number.MAX_SAFE_INTEGER ms they differ (floats there are whole numbers spaced
      // more than 1 apart), and the answer must be a wait whose instant `ok` was asked about.
      const d = hi - step;
      if (!ok(now + d)) {
        lo = d;
        break;
      }
      hi = d;
    }
  } else {
    lo = hi;
    for (let step = 1; ; step *= 2) {
      const next = lo + step;
      if (!Number.isFinite(next)) {
        throw invalid("count", count, "can never succeed: the wait would not fit in a number of ms");
      }
      if (ok(now + next)) {
        hi = next;
        break;
      }
      lo = next;
    }
  }
  while (hi - lo > 1) {
    const mid = math.floor((lo + hi) / 2);
    if (mid <= lo || mid >= hi) break; // float granularity: nothing lies between
    if (ok(now + mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * exactWait returns `retryAfter` (ms), a request's wait from `now` (ms), when a retry at `now +
 * retryAfter` is an instant counted in whole ms: at most Number.MAX_SAFE_INTEGER (about the year
 * 287,000). Past it, floats are whole numbers more than 1 ms apart, so no wait can be exact to the
 * ms: such a request, at a `rate` per `period` far below its `count` (or reserving far ahead), can
 * never succeed in any time that can be told, and is an `InvalidRateLimit` error naming `count`.
 */
export function exactWait(retryAfter: number, now: number, count: number, p: Pick<Params, "rate" | "period">): number {
  if (now + retryAfter <= Number.MAX_SAFE_INTEGER) return retryAfter;
  throw invalid(
    "count",
    count,
    `can never succeed in time that can be told: at rate ${p.rate} per ${p.period} ms its wait (${retryAfter} ms) runs past Number.MAX_SAFE_INTEGER ms, where instants are not whole ms apart`,
  );
}

/** A float estimate of how long until `state` holds `need` tokens (a guess for {@link leastDelay}). */
function guessDelay(cur: State, p: Params, now: number, need: number): number {
  const missing = need - cur.value;
  const from = math.max(cur.ts, now) - now;
  switch (p.kind) {
    case "token bucket":
      return from + (missing * p.period) / p.rate;
    case "fixed window": {
      const windows = math.ceil(missing / p.rate);
      return startOf(windowIndex(cur.ts, p) + windows, p) - now;
    }
    case "sliding window":
      // Within the window the value grows at prev / period per ms; past it, the rest follows.
      return from + (missing * p.period) / math.max(cur.prev ?? 0, p.rate / 2);
    case "exact sliding window": {
      // Exactly when the oldest takes that free enough leave the window.
      const at = freedAt(entriesOf(cur, p), cur.value, need, p.period);
      return at === undefined ? from + p.period : at - now;
    }
    default: {
      const never: never = p.kind;
      throw new Error(`unknown kind ${String(never)}`);
    }
  }
}

/**
 * delayUntil returns the least whole number of ms d ≥ 1 after which `state` holds at least `need`
 * tokens, with no other traffic. A full row must pass `test`, or the wait never ends (an error).
 * `test` is the exact condition on the value that the caller decides with (by default
 * `value >= need`); searching on it, rather than on `need`, keeps the answer right where float
 * rounding makes `value - count >= floor` and `value >= count + floor` disagree. `count` names the
 * request in errors (default `need`).
 */
export function delayUntil(
  state: State | null,
  p: Params,
  now: number,
  need: number,
  test: (value: number) => boolean = (value) => minus(value, need) >= 0,
  count: number = need,
): number {
  // A full row is the best there can ever be: if even it fails the test, the wait never ends.
  if (!test(p.capacity)) {
    throw invalid("count", count, `needs ${need} tokens but the capacity is ${p.capacity}`);
  }
  const cur = evaluate(state, p, now);
  return leastDelay((t) => test(valueAt(state, p, t)), now, guessDelay(cur, p, now, need), count);
}

/**
 * RowDecision is the outcome of a request against one row, before anything is written:
 * `retryAfter` is in ms, and `next` is the row to store, if any.
 */
export type RowDecision =
  | { ok: true; retryAfter?: number; next?: State }
  | { ok: false; retryAfter: number };

/**
 * decideRow decides a request of `count` tokens against one row at `now` (ms).
 * - `count` 0 is a peek: ok exactly when the value is ≥ 0; it never writes (`next` is unset).
 * - Without `reserve`: ok when `count` tokens are there; `next` is the row after taking them.
 * - With `reserve`: ok when taking them leaves a debt no deeper than `maxReserved`; then
 *   `retryAfter` (if set) is when the debt is repaid, i.e. when the reserved work may run.
 * - Refused: `retryAfter` is the least whole ms after which the same request succeeds.
 *
 * With `notBefore` (ms), the request waits until allowed (`runWhenAllowed`): its work runs no
 * earlier than `notBefore`, at the first instant the limit allows it, and the reservation counts
 * it there: an exact sliding window logs the take at that instant (see {@link reserveLogged}), a
 * fixed window counts it in the window it runs in (see {@link reserveWindowed}), a token bucket
 * takes into debt now, as `reserve` does. Without it, `reserve` takes into debt now, whatever the
 * kind: an exact sliding window still logs ahead.
 */
export function decideRow(
  state: State | null,
  p: Params,
  now: number,
  count: number,
  reserve: boolean,
  notBefore?: number,
): RowDecision {
  if (reserve && count > 0 && p.kind === "exact sliding window") return reserveLogged(state, p, now, count, notBefore ?? now);
  // An exact window's take: its log trimmed and taken from in one buffer (see `takenLog`).
  if (p.kind === "exact sliding window" && count > 0 && state !== null && state.log !== undefined) {
    const ts = now > state.ts ? now : state.ts;
    const scan = scanLog(state.log, ts - p.period);
    if (scan !== undefined && scan.live > 0 && minus(minus(p.capacity, scan.total), count) >= 0) {
      const log = takenLog(state.log, scan, ts, count);
      if (log !== undefined) return { ok: true, next: { value: minus(p.capacity, scan.total + count), ts, log } };
    }
  }
  const cur = evaluate(state, p, now);
  if (reserve && count > 0 && p.kind === "fixed window" && notBefore !== undefined) return reserveWindowed(cur, p, now, count, notBefore);
  if (count === 0) {
    return cur.value >= 0 ? { ok: true } : { ok: false, retryAfter: delayUntil(state, p, now, 0) };
  }
  const floor = reserve ? -p.maxReserved : 0;
  if (minus(cur.value, count) >= floor) {
    const next = withValue(cur, p, minus(cur.value, count));
    if (next.value >= 0) return { ok: true, next };
    return { ok: true, next, retryAfter: delayUntil(next, p, now, 0, undefined, count) };
  }
  const accepts = (value: number) => minus(value, count) >= floor;
  return { ok: false, retryAfter: delayUntil(state, p, now, count + floor, accepts, count) };
}

/**
 * reserveWindowed reserves `count` tokens of a fixed window for work that waits until allowed,
 * no earlier than `notBefore` (ms; the key's latest queued work). It runs in the window holding
 * `notBefore` (or now) if what that window has left, after the work queued before, holds it; else in
 * a later window, and then it may use only what that window carries into the next (its tokens above
 * `capacity - rate` are lost at the boundary, where the value is clamped to the capacity): the lost
 * tokens are taken with the work's, so no later window counts them. The row keeps the rest as a
 * debt that each window's `rate` repays, so no window runs more than it grants. `retryAfter` is
 * the wait until the work's window (whole ms); unset when it runs now. Refused when the row would
 * then owe more than `maxReserved` (lost tokens counted, as the row keeps them as a debt): its
 * `retryAfter` is the least whole ms after which the same request fits.
 */
function reserveWindowed(cur: State, p: Params, now: number, count: number, notBefore: number): RowDecision {
  const decided = windowed(cur, p, now, count, notBefore);
  if (withinReserved(decided.next, p)) return decided;
  // Refused until a later instant's decision fits: the row gains a rate at each boundary.
  const fits = (t: number) => withinReserved(windowed(evaluate(cur, p, t), p, t, count, notBefore).next, p);
  return { ok: false, retryAfter: leastDelay(fits, now, guessDelay(cur, p, now, count - p.maxReserved), count) };
}

/**
 * Whether a reservation's row owes no more than `maxReserved` (as `decideRow`'s floor counts it).
 * An unlimited `maxReserved` (Infinity) makes the difference Infinity, and a row that owes nothing
 * leaves at least `maxReserved` ≥ 0: both pass with no case of their own.
 */
function withinReserved(next: State, p: Params): boolean {
  return minus(next.value, 0 - p.maxReserved) >= 0;
}

/** {@link reserveWindowed}'s decision at `now`, before `maxReserved` is checked. */
function windowed(cur: State, p: Params, now: number, count: number, notBefore: number): { ok: true; next: State; retryAfter?: number } {
  const at = notBefore > now ? notBefore : now;
  const there = valueAt(cur, p, at);
  if (minus(there, count) >= 0) {
    const next = withValue(cur, p, minus(cur.value, count));
    return at === now ? { ok: true, next } : { ok: true, next, retryAfter: at - now };
  }
  const lost = math.max(0, minus(there, math.max(0, minus(p.capacity, p.rate))));
  const next = withValue(cur, p, minus(minus(cur.value, count), lost));
  return { ok: true, next, retryAfter: delayUntil(next, p, now, 0, undefined, count) };
}

/**
 * reserveLogged reserves `count` tokens of an exact sliding window at `now`: the take is logged at
 * the first whole-ms instant `at`, no earlier than `now` or `notBefore`, at which the window ending
 * there has room for it, counting every take logged after the window's start, those logged ahead
 * included. The row's `ts` stays `now`, so its value (possibly negative) counts the take at once,
 * and every later decision counts it, from `now` on, until it leaves the window at `at + period`:
 * a decision at `t` counts every take logged after `t - period`, the ones ahead too, so it never
 * admits a take that a window holding both would count over the rate. A take logged at the latest
 * instant of the log needs only the window ending there checked: no take lies after it.
 * `retryAfter` is `at - now`, unset when it is 0.
 */
function reserveLogged(state: State | null, p: Params, now: number, count: number, notBefore: number): RowDecision {
  const cur = evaluate(state, p, now);
  const fits = (t: number) => minus(valueAt(state, p, t), count) >= 0;
  const from = notBefore > now ? notBefore : now;
  if (from === now && fits(now)) return { ok: true, next: withValue(cur, p, minus(cur.value, count)) };
  const at = fits(from) ? from : from + delayUntil(state, p, from, count, undefined, count);
  const taken = withTaken(entriesOf(cur, p), at, count);
  return { ok: true, next: { value: roomFor(taken, p), ts: cur.ts, log: encodeLog(taken) }, retryAfter: at - now };
}

/**
 * paramsOf returns the params of a whole config (or of one row, for a config that is one shard's
 * share), with fixed windows starting at `phase` (ms), or at its calendar's periods (its phase
 * then 0, whatever is passed): `capacity` defaults to `rate`, and `maxReserved` to `Infinity`
 * (unlimited).
 */
export function paramsOf(config: RateLimitConfig, phase: number): Params {
  const p: Params = {
    kind: kindOf(config),
    rate: config.rate,
    period: config.period,
    capacity: config.capacity ?? config.rate,
    maxReserved: config.maxReserved ?? Infinity,
    phase,
  };
  if (config.kind === "fixed window" && config.calendar !== undefined) {
    p.cal = config.calendar;
    // Its windows are the calendar's periods, whatever phase the caller derived.
    p.phase = 0;
    // A calendar quota never reserves ahead (see `calendarValidator`).
    p.maxReserved = 0;
  }
  return p;
}
