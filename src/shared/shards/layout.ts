// Laying a key out over its shards: the phase of its fixed windows, each shard's exact share of
// the config, and how rows written under another layout (shard count, kind, phase or period) are
// carried over to the current one without gaining a token. Pure: no clock, no randomness.
import { evaluate, phaseOf, startOf, stateOf, windowIndex, windowStart, type Params, type State } from "../kinds/algebra.js";
import type { Calendar } from "../core/calendar.js";
import { minus, splitTotal } from "../core/split.js";
import { kindOf, type RateLimitConfig } from "../shapes/validators.js";
import type { CalendarSpec } from "../shapes/calendar-validators.js";
import type { StoredRow } from "../shapes/stored.js";
import { math } from "../core/math.js";
import { calendarIn, calendarTerms, configHash, configTerms, sameCalendar, termsConfig, termsHash, termsOf } from "./terms.js";
export { calendarIn, configHash, configTerms, sameCalendar, termsConfig, termsHash };
import { decodeLog, encodeLog, logTotal, mergeLogs, splitLog, withTaken, type Entry } from "../kinds/window-log.js";

/** The FNV-1a hash of a string, as a fraction in [0, 1). */
function hashFraction(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 2 ** 32;
}

/**
 * resolvePhase returns the phase (ms, in [0, period)) of a fixed window (or of a sliding window's
 * two counting windows): `config.start`'s, or,
 * without one, a stable hash of name and key, so keys refill at different instants (no thundering
 * herd at midnight) while each key keeps its windows across calls and resets. Token buckets and
 * exact sliding windows have phase 0 (they have no windows to align), and so do calendar quotas
 * (the calendar places their windows, the same for every key in a zone).
 */
export function resolvePhase(config: RateLimitConfig, name: string, key: string | undefined): number {
  if (config.kind === "token bucket" || kindOf(config) === "exact sliding window" || calendarIn(config) !== undefined) return 0;
  if (config.start !== undefined) return phaseOf(config.start, config.period);
  const id = key === undefined ? `${name}\u0000` : `${name}\u0001${key}`;
  return math.floor(hashFraction(id) * config.period);
}

/**
 * isShardOf reports whether `shard` is a shard of a layout of `n` shards: a whole number from 0 to
 * n - 1. A row or take at any other number (which no write of ours makes) belongs to no shard.
 */
export function isShardOf(shard: number, n: number): boolean {
  return Number.isInteger(shard) && shard >= 0 && shard < n;
}

/**
 * shardParams returns the params of shard `i` of a config, with fixed windows starting at `phase`
 * (ms): its exact share of `rate`, `capacity` and `maxReserved` (see {@link splitTotal}). Its
 * `terms` (text) are built when first read: only a row that doesn't carry the current terms'
 * fingerprint needs them, and building them on every call cost more than the decision.
 */
export function shardParams(config: RateLimitConfig, phase: number, i: number): Params {
  return new ShardParams(config, phase, i);
}

/** {@link shardParams}' params: plain fields, and `terms` built on first read. */
class ShardParams implements Params {
  readonly kind: Params["kind"];
  readonly rate: number;
  readonly period: number;
  readonly capacity: number;
  readonly maxReserved: number;
  readonly phase: number;
  readonly cal?: Calendar;
  readonly #config: RateLimitConfig;
  #terms: string | undefined;

  constructor(config: RateLimitConfig, phase: number, i: number) {
    const n = config.shards ?? 1;
    this.kind = kindOf(config);
    this.rate = splitTotal(config.rate, n, i);
    this.period = config.period;
    this.capacity = splitTotal(config.capacity ?? config.rate, n, i);
    // A calendar quota never reserves ahead: with `reserve` it takes only what is there (see `calendarValidator`).
    this.maxReserved = calendarIn(config) !== undefined ? 0 : splitTotal(config.maxReserved ?? Infinity, n, i);
    this.phase = phase;
    const cal = calendarIn(config);
    if (cal !== undefined) this.cal = cal;
    this.#config = config;
  }

  get terms(): string {
    const c = this.#config;
    return (this.#terms ??= termsOf(this.kind, c.rate, c.period, c.capacity ?? c.rate, c.shards ?? 1, this.phase, this.cal));
  }
}

/**
 * expandRow returns a compact row (one that stores `h`, a {@link termsHash} fingerprint) with the
 * layout it was written under filled in, when `config` is the config the fingerprint stands for
 * and `phase` its phase for the row's key: the shard count, kind, the shard's own rate, period and
 * capacity, and `terms` in full, exactly as a row recording them in full reads. Any other row (in
 * full, an earlier version's; without a layout, upstream's; or `config` not the fingerprint's) is
 * returned as it is: a compact row's fingerprint matches no current terms, so a row whose terms
 * are unknown is carried over as one of unknown layout, never trusted.
 */
export function expandRow<R extends StoredRow>(row: R, config: RateLimitConfig | undefined, phase: number): R {
  if (row.h === undefined || config === undefined || configHash(config) !== row.h) return row;
  return expandUnder(row, config, phase);
}

/** {@link expandRow} for a row whose fingerprint is known to be `config`'s terms'. */
export function expandUnder<R extends StoredRow>(row: R, config: RateLimitConfig, phase: number): R {
  const p = shardParams(config, phase, row.shard);
  return { ...row, shards: config.shards ?? 1, kind: p.kind, rate: p.rate, period: p.period, capacity: p.capacity, terms: p.terms! };
}

/**
 * shardConfig returns shard `i`'s share of a config, as a config of its own (`shards: 1`, `start`
 * resolved to `phase`), so that `calculateRateLimit(row, shardConfig(...))` answers exactly what
 * that shard would.
 */
export function shardConfig(config: RateLimitConfig, phase: number, i: number): RateLimitConfig {
  const p = shardParams(config, phase, i);
  const common = {
    rate: p.rate,
    period: p.period,
    capacity: p.capacity,
    shards: 1,
    ...(Number.isFinite(p.maxReserved) ? { maxReserved: p.maxReserved } : {}),
  };
  if (config.kind === "token bucket") return { kind: "token bucket", ...common };
  if (config.kind === "sliding window") {
    return config.exact === false ? { kind: "sliding window", ...common, exact: false, start: phase } : { kind: "sliding window", ...common, exact: true };
  }
  const cal = calendarIn(config);
  // A calendar quota's windows come from its calendar: it has no start, and reserves nothing ahead.
  if (cal !== undefined) {
    const { maxReserved: _none, ...rest } = common;
    return { kind: "fixed window", ...rest, calendar: cal };
  }
  return { kind: config.kind, ...common, start: phase };
}

/**
 * The params a row records it was written under, when it records them all: a calendar quota's
 * with the calendar its whole terms record (a fixed window's windows are the calendar's then).
 */
function recordedParams(row: StoredRow): Params | undefined {
  const { kind, rate, period, capacity } = row;
  if (kind === undefined || rate === undefined || period === undefined || capacity === undefined) return undefined;
  const cal = kind === "fixed window" && row.terms !== undefined ? recordedCalendar(row.terms) : undefined;
  if (cal !== undefined) return { kind, rate, period, capacity, maxReserved: Infinity, phase: 0, cal };
  const phase = kind === "fixed window" ? phaseOf(row.ts, period) : 0;
  return { kind, rate, period, capacity, maxReserved: Infinity, phase };
}

/** The calendar whole terms record (their seventh member), if any. */
function recordedCalendar(terms: string): CalendarSpec | undefined {
  try {
    const parsed: unknown = JSON.parse(terms);
    return Array.isArray(parsed) && parsed.length === 7 ? calendarTerms(parsed[6]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * sameClock reports whether a row means what the current params take it to mean: written under
 * the same kind (assumed when not recorded), the same whole-limit `terms` and the shard's own
 * `rate`, `period` and `capacity` (each when recorded) and, for a fixed window, at a window start
 * of the current phase and period.
 * Otherwise the config changed under the row, and it is carried over (see {@link carriedOver}).
 */
export function sameClock(row: StoredRow, p: Params): boolean {
  if ((row.kind ?? p.kind) !== p.kind) return false;
  // The whole limit's terms (when both sides know them): a change that left this shard's own
  // share as it was still changes the key, and the first row read must show it.
  if (row.terms !== undefined && p.terms !== undefined && row.terms !== p.terms) return false;
  const own = recordedParams(row);
  if (own && (own.rate !== p.rate || own.period !== p.period || own.capacity !== p.capacity)) return false;
  return p.kind !== "fixed window" || windowStart(row.ts, p) === row.ts;
}

/**
 * A row written under other terms, as a state of the current ones. The anchor is the row's own
 * promise, never the reader's clock, so the carried-over state is a function of the stored row
 * alone: every read agrees whether or not anything writes the change (a peek, a check or a
 * throwing call writes nothing), and a `retryAfter` computed from it holds at the retry. The
 * row's value stands until its promise ends: a fixed window's at the end of its own window (its
 * recorded `period`; without one, `p.period`), a token bucket's or a sliding window's at its own
 * `ts` (its last update). From then on the current terms refill it (see {@link heldUntil}).
 * (Capping a raised token bucket by what its old terms give by the reader's `now` would grant
 * less, but the cap moves with every reader: a refusal's `retryAfter`, computed at one instant,
 * would be refused again at the retry if nothing wrote in between.)
 */
function carriedOver(row: StoredRow, p: Params): State {
  const own = recordedParams(row);
  if (p.kind === "exact sliding window" && row.kind === "exact sliding window" && row.log !== undefined) {
    const kept = keptLog(row.log, row.ts, own, p);
    if (kept !== undefined) return kept;
  }
  const owed = own === undefined ? undefined : owedUntil(row, own, p);
  if (owed !== undefined) return owed;
  const value = math.min(row.value, p.capacity);
  if ((row.kind ?? p.kind) === "fixed window") return heldUntil(value, ownWindowEnd(row, own, p), p);
  return heldUntil(value, row.ts, p);
}

/**
 * A row that owes (work reserved ahead: queued by `runWhenAllowed`, or `reserve`), carried into
 * terms `p` of its own kind: its debt is a promise too. The work it was taken for runs when the
 * row's own terms (`own`) repay it, so until then the old schedule stands, and the new terms
 * refill only from there, as they refill any row from the end of its promise. So a raised rate
 * never repays the queued work's tokens faster (the next run never comes sooner than the old
 * schedule allows), and a lowered one never makes the queue's debt last longer than it would have.
 * - Token bucket: repaid at `T = ts + (-value) × period / rate` of its own terms. Carried as the
 *   debt the new rate repays at that same instant: the value scaled by the ratio of the rates per
 *   ms, stamped at the row's `ts`, so every reader before `T` still sees a debt.
 * - Fixed window (same period, windows starting where the old ones did): its own rate repays it at
 *   the start of some later window, which then holds what the old terms leave it; carried so that
 *   every window before that one holds nothing, and that window what the old terms left (at most
 *   the new capacity and the new rate: one state refilled a rate per window can't hold more there
 *   and nothing in the window before). With other windows (period or phase changed), nothing is
 *   granted before the end of the window the old terms repay it in, and the first new window
 *   starting then or later holds the new rate (capped by the capacity).
 * Into terms of the other kind, see {@link owedAcross}. Undefined (carried as before) for a row
 * that doesn't owe, a calendar quota's, or when either rate is 0 (a debt the old terms never
 * repay, or new terms that grant nothing).
 */
function owedUntil(row: StoredRow, own: Params, p: Params): State | undefined {
  if (!(row.value < 0) || !(own.rate > 0 && p.rate > 0)) return undefined;
  if (own.kind !== p.kind) return owedAcross(row, own, p);
  if (p.kind === "token bucket") return { value: (row.value * p.rate * own.period) / (own.rate * p.period), ts: row.ts };
  if (p.kind !== "fixed window" || own.cal !== undefined || p.cal !== undefined) return undefined;
  const w0 = windowIndex(row.ts, p);
  const repaid = fixedRepaid(row, own);
  if (repaid === undefined) {
    // Repaid past 2^53 ms, where instants and window counts are no longer exact (`n - 1` may be
    // `n`): carried as a token bucket's debt is, scaled by the rates per ms (repaid about when
    // the old terms would repay it, ages away), and never below the most negative finite number.
    return { value: math.max(-Number.MAX_VALUE, (row.value * p.rate * own.period) / (own.rate * p.period)), ts: startOf(w0, p) };
  }
  if (p.period === own.period && windowStart(repaid, p) === repaid) {
    const left = math.min(evaluate(stateOf(row), own, repaid).value, p.capacity, p.rate);
    return { value: minus(left, (windowIndex(repaid, p) - w0) * p.rate), ts: startOf(w0, p) };
  }
  const end = repaid + own.period;
  const first = windowStart(end, p) === end ? windowIndex(end, p) : windowIndex(end, p) + 1;
  return { value: minus(math.min(p.rate, p.capacity), (first - w0) * p.rate), ts: startOf(w0, p) };
}

/**
 * A row that owes, carried into terms of the other kind (a token bucket's debt into a fixed
 * window, or a fixed window's into a token bucket): its debt is a promise as within a kind. Its
 * promise ends where its own terms repay it (a token bucket's at `ts + (-value) × period / rate`,
 * a fixed window's at the end of the window they repay it in), nothing is granted before, and
 * the new terms refill from there: a token bucket from 0 at that instant (its debt counted in the
 * new rate's tokens, stamped at the row's `ts`, so every reader before then sees it owe), a fixed
 * window from the first of its windows starting then or later, which holds the new rate (capped
 * by the capacity), every window before it nothing. Undefined (carried as before) for a sliding
 * window, a calendar quota's terms, or a promise ending past 2^53 ms.
 */
function owedAcross(row: StoredRow, own: Params, p: Params): State | undefined {
  const kinds = ["token bucket", "fixed window"];
  if (!kinds.includes(own.kind) || !kinds.includes(p.kind) || own.cal !== undefined || p.cal !== undefined) return undefined;
  let end: number;
  if (own.kind === "token bucket") end = row.ts + (-row.value * own.period) / own.rate;
  else {
    const repaid = fixedRepaid(row, own);
    if (repaid === undefined) return undefined;
    end = repaid + own.period;
  }
  if (!(end <= Number.MAX_SAFE_INTEGER)) return undefined;
  if (p.kind === "token bucket") return { value: -((end - row.ts) * p.rate) / p.period, ts: row.ts };
  const w0 = windowIndex(row.ts, p);
  const first = windowStart(end, p) === end ? windowIndex(end, p) : windowIndex(end, p) + 1;
  return { value: minus(math.min(p.rate, p.capacity), (first - w0) * p.rate), ts: startOf(w0, p) };
}

/**
 * The start (ms) of the first of a fixed window's own windows (`own`) whose rates repay `row`'s
 * debt, as `evaluate` adds them: the quotient, then a step or two either way for its rounding;
 * undefined past 2^53 ms, where instants and window counts are no longer exact. */
function fixedRepaid(row: StoredRow, own: Params): number | undefined {
  const k = windowIndex(row.ts, own);
  let n = math.max(1, math.ceil(-row.value / own.rate));
  if (!(startOf(k + n + 1, own) <= Number.MAX_SAFE_INTEGER)) return undefined;
  for (let step = 0; step < 4 && n > 1 && evaluate(stateOf(row), own, startOf(k + n - 1, own)).value >= 0; step++) n--;
  while (!(evaluate(stateOf(row), own, startOf(k + n, own)).value >= 0)) n++;
  return startOf(k + n, own);
}

/**
 * The end (ms) of the fixed window a row stands at: `ts` plus its recorded period, or, for a
 * calendar quota's row, the end of its calendar period (its recorded calendar's; without one, the
 * current params' windows, `p`). A calendar's period ends where its calendar says, whatever the
 * nominal length a row records.
 */
function ownWindowEnd(row: StoredRow, own: Params | undefined, p: Params): number {
  const windows = own?.cal !== undefined ? own : own === undefined && p.cal !== undefined ? p : undefined;
  if (windows !== undefined) return startOf(windowIndex(row.ts, windows) + 1, windows);
  return row.ts + (own?.period ?? p.period);
}

/**
 * An exact window's row carried into an exact window of other terms (`p`), keeping its log: each
 * take leaves the window no earlier than under its own period (`own`; moved later by the difference
 * when the period shortens), and a raised capacity's extra tokens are taken at the row's `ts`, so
 * its value at `ts` is no higher than it was. A lowered capacity leaves the log as it was (the
 * value drops, and may owe). Undefined for bytes that aren't a log.
 */
function keptLog(log: ArrayBuffer, ts: number, own: Params | undefined, p: Params): State | undefined {
  const entries = decodeLog(log);
  if (entries === undefined) return undefined;
  const later = math.max(0, (own?.period ?? p.period) - p.period);
  let kept = later > 0 ? entries.map((e) => ({ at: e.at + later, count: e.count })) : entries;
  const extra = p.capacity - (own?.capacity ?? p.capacity);
  if (extra > 0) kept = withTaken(kept, ts, extra);
  const state: State = { value: p.capacity - logTotal(kept), ts };
  if (kept.length > 0) state.log = encodeLog(kept);
  return state;
}

/**
 * A state of params `p` holding `value` until `end` (ms) and refilled by `p` only from then on.
 * For a fixed window, `ts` is the start of the window just before `end` when a window starts
 * exactly there (so it opens), else of the window containing `end`: no window that starts before
 * `end` opens, even one starting between whole ms.
 */
function heldUntil(value: number, end: number, p: Params): State {
  if (p.kind !== "fixed window") return { value, ts: end };
  const k = windowIndex(end, p);
  return { value, ts: startOf(windowStart(end, p) === end ? k - 1 : k, p) };
}

/** `total` split over `params` in proportion to their rates, exactly (the last takes the rest). */
function byRate(total: number, params: readonly Params[]): number[] {
  const rate = params.reduce((sum, p) => sum + p.rate, 0);
  const parts = params.map((p) => (total * p.rate) / rate);
  parts[parts.length - 1] = total - parts.slice(0, -1).reduce((sum, v) => sum + v, 0);
  return parts;
}

/**
 * Whether an old shard of an exact window can be carried by its log ({@link carriedLogs}): a
 * missing row (full), or an exact window's row with a log (or none, full) under params that give
 * it some rate. A row of another kind has no log, and a shard the new config gives no rate under
 * the old shard count would hold its tokens used forever.
 */
function hasLog({ row, p, state }: { row: StoredRow | undefined; p: Params; state: State | null }): boolean {
  if (row === undefined) return true;
  if ((row.kind ?? p.kind) !== "exact sliding window" || !(p.rate > 0)) return false;
  if (row.log !== undefined) return decodeLog(row.log) !== undefined;
  return state !== null && state.log === undefined && state.value >= p.capacity;
}

/**
 * An exact window's shards carried over to `params`, another shard count: the old shards' logs as
 * of `at` (a row without one: its tokens used taken at its `ts`, see `carriedLog`) are put
 * together and shared out over the new shards in proportion to their capacities (`splitLog`),
 * each take keeping its instant, so every token comes back when it would have under the old
 * layout, never later than the old rule (which took every token used to have been taken at
 * `stamp`), and sooner when taken earlier. A raised capacity's extra tokens are taken at `stamp`,
 * so the key holds no more at `stamp` than it did; a lowered one keeps the takes, and the shards
 * may owe until they leave (as a change at the same shard count does, see `keptLog`): no window
 * admits more than the new rate. States stamped at `stamp`.
 */
function carriedLogs(olds: readonly { p: Params; state: State | null }[], at: number, stamp: number, params: readonly Params[]): State[] {
  const logs: (readonly Entry[])[] = [];
  let before = 0;
  for (const { p, state } of olds) {
    before += p.capacity;
    const cur = evaluate(state, p, at);
    if (cur.log !== undefined) logs.push(decodeLog(cur.log) ?? []);
  }
  let union: readonly Entry[] = mergeLogs(logs);
  const shares = params.map((p) => p.capacity);
  const extra = shares.reduce((sum, c) => sum + c, 0) - before;
  if (extra > 0) union = withTaken(union, stamp, extra, Infinity, Infinity);
  return splitLog(union, shares).map((log, i) => {
    if (log.length === 0) return { value: params[i]!.capacity, ts: stamp };
    return { value: minus(params[i]!.capacity, logTotal(log)), ts: stamp, log: encodeLog(log) };
  });
}

/**
 * relayout returns the states of every shard of a limit whose rows were written under another
 * layout or other terms: another shard count, kind, rate, period, capacity or fixed-window phase.
 * Rows whose terms changed (see {@link sameClock}) are carried over by {@link carriedOver}; a
 * missing row is a full shard. The limit's total under the old layout is split over the new
 * shards: tokens exactly as `capacity` is, so no shard gets a fraction it can't spend; a debt (and
 * a sliding window's count of its previous window) in proportion to the shards' rates, so every
 * shard repays its part at the instant the whole debt would have been repaid. Changing the config
 * never gains tokens and loses only what no longer fits.
 *
 * The total is taken at the latest instant a row was written at (for a fixed window, no later than
 * the start of the window a carried-over row's promise ends in, so no window opens before a reader
 * reaches it), not at the reader's `now`, and the new shards are stamped there or where a promise
 * ends, whichever is later: the result is a function of the stored rows alone, so readers at
 * different instants see one state evaluated to their own instants, exactly as if it had been
 * written, and a `retryAfter` from a call that wrote nothing holds at the retry. A shard whose
 * promise ended before another's gains nothing between the two (the new shards have one stamp).
 * `now` (ms) only stamps a layout none of whose rows the old layout has (all full).
 */
export function relayout(rows: StoredRow[], config: RateLimitConfig, phase: number, now: number): State[] {
  const n = config.shards ?? 1;
  // Rows that don't record their layout (written by @convex-dev/rate-limiter) are taken to be the
  // smallest layout that has them: shards it can't see are not counted, never counted full.
  // No rows at all: every shard of the new layout is full.
  const old = rows.length === 0 ? n : (rows.find((r) => r.shards !== undefined)?.shards ?? math.max(...rows.map((r) => r.shard)) + 1);
  const oldConfig = { ...config, shards: old };
  const olds = Array.from({ length: old }, (_, i) => {
    const row = rows.find((r) => r.shard === i);
    const p = shardParams(oldConfig, phase, i);
    return { row, p, state: row ? (sameClock(row, p) ? stateOf(row) : carriedOver(row, p)) : null };
  });
  // A fixed window counts a row at the earlier of its stamp and its carried-over state's window
  // start: a row may be stamped where a promise ends, after now, and evaluating there would open a
  // window that starts there for a reader before it (the clock-skew rule reads a state stamped
  // later as now). Never later than the row's stamp, so no other row is evaluated further.
  const written = olds.flatMap((o) => (o.row ? [config.kind === "fixed window" ? math.min(o.row.ts, o.state!.ts) : o.row.ts] : []));
  const at = written.length > 0 ? math.max(...written) : now;
  let total = 0;
  let prev = 0;
  // The latest of the evaluated states' `ts`: `at`, a window start for a fixed window, or a later
  // promise end.
  let stamp = -Infinity;
  for (const { p, state } of olds) {
    // Evaluated to `at`, no later: a state whose promise ends after `at` keeps its value and `ts`.
    const cur = evaluate(state, p, at);
    total += cur.value;
    prev += cur.prev ?? 0;
    stamp = math.max(stamp, cur.ts);
  }
  // An exact window of the same shard count keeps each shard's own state, its log carried over
  // (see `carriedOver`): the old layout's params are the new ones.
  if (old === n && kindOf(config) === "exact sliding window") return olds.map(({ p, state }) => evaluate(state, p, at));
  const params = Array.from({ length: n }, (_, i) => shardParams(config, phase, i));
  if (kindOf(config) === "exact sliding window" && olds.every(hasLog)) return carriedLogs(olds, at, stamp, params);
  // Otherwise (a row of another kind, or a layout the new config can't give every old shard a
  // token of rate in) an exact window's log isn't carried: its tokens used are taken at `stamp`
  // (see `carriedLog`).
  const prevs = kindOf(config) === "sliding window" && prev > 0 ? byRate(prev, params) : undefined;
  const stateAt = (value: number, i: number): State => (prevs ? { value, ts: stamp, prev: prevs[i]! } : { value, ts: stamp });
  if (total < 0) return byRate(total, params).map(stateAt);
  const values = params.map((p, i) => math.min(splitTotal(total, n, i), p.capacity));
  // What a full shard couldn't take goes to shards with room, so only what fits nowhere is lost.
  let left = total - values.reduce((sum, v) => sum + v, 0);
  for (let i = 0; i < n && left > 0; i++) {
    const add = math.min(left, params[i]!.capacity - values[i]!);
    if (add > 0) {
      values[i]! += add;
      left -= add;
    }
  }
  return values.map(stateAt);
}
