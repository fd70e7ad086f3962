// Laying a key out over its shards: the phase of its fixed windows, each shard's exact share of
// the config, and how rows written under another layout (shard count, kind, phase or period) are
// carried over to the current one without gaining a token. Pure: no clock, no randomness.
import { evaluate, paramsOf, phaseOf, windowStart, type Params, type State } from "./algebra.js";
import { splitTotal } from "./split.js";
import type { RateLimitConfig } from "./validators.js";

/** The FNV-1a hash of a string, as a fraction in [0, 1). */
function hashFraction(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 2 ** 32;
}

/**
 * resolvePhase returns the phase (ms, in [0, period)) of a fixed window: `config.start`'s, or,
 * without one, a stable hash of name and key, so keys refill at different instants (no thundering
 * herd at midnight) while each key keeps its windows across calls and resets. Token buckets have
 * phase 0.
 */
export function resolvePhase(config: RateLimitConfig, name: string, key: string | undefined): number {
  if (config.kind !== "fixed window") return 0;
  if (config.start !== undefined) return phaseOf(config.start, config.period);
  const id = key === undefined ? `${name}\u0000` : `${name}\u0001${key}`;
  return Math.floor(hashFraction(id) * config.period);
}

/**
 * shardParams returns the params of shard `i` of a config, with fixed windows starting at `phase`
 * (ms): its exact share of `rate`, `capacity` and `maxReserved` (see {@link splitTotal}).
 */
export function shardParams(config: RateLimitConfig, phase: number, i: number): Params {
  const whole = paramsOf(config, phase);
  const n = config.shards ?? 1;
  return {
    ...whole,
    rate: splitTotal(whole.rate, n, i),
    capacity: splitTotal(whole.capacity, n, i),
    maxReserved: splitTotal(whole.maxReserved, n, i),
  };
}

/**
 * shardConfig returns shard `i`'s share of a config, as a config of its own (no `shards`, `start`
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
  return config.kind === "fixed window"
    ? { kind: "fixed window", ...common, start: phase }
    : { kind: "token bucket", ...common };
}

/**
 * StoredRow is a stored row as {@link relayout} sees it: `value` tokens at `ts` (ms); `shards` and
 * `kind` are the layout it was written under, when recorded (rows written by
 * @convex-dev/rate-limiter have neither).
 */
export type StoredRow = { shard: number; value: number; ts: number; shards?: number; kind?: RateLimitConfig["kind"] };

/**
 * sameClock reports whether a row's `ts` means what the current config takes it to mean: written
 * under the same kind (assumed when not recorded) and, for a fixed window, a window start of the
 * current phase and period. Otherwise the config's kind, `start` or `period` changed under the row.
 */
export function sameClock(row: StoredRow, p: Params): boolean {
  if ((row.kind ?? p.kind) !== p.kind) return false;
  return p.kind !== "fixed window" || windowStart(row.ts, p) === row.ts;
}

/**
 * A row written under another clock (kind, or fixed-window phase or period), as a state of the
 * current one: its tokens as of the last instant it can have been updated, which is its own `ts`
 * for a token bucket, and the end of its window for a fixed window (taking the window to be
 * `p.period` long). From there the current config refills it. The anchor comes from the row, not
 * from the reader's clock, so every read agrees, whether or not anything writes the change, and
 * no window of a new phase can refill a key that just emptied one of the old.
 */
function carriedOver(row: StoredRow, p: Params): State {
  const lastUpdate = (row.kind ?? p.kind) === "token bucket" ? row.ts : row.ts + p.period;
  return { value: Math.min(row.value, p.capacity), ts: lastUpdate };
}

/**
 * relayout returns the states of every shard of a limit whose rows were written under another
 * layout: another shard count, kind, or fixed-window phase or period. The limit's total at `now`
 * (ms) under the old layout (where a missing row was a full shard) is split over the new shards
 * exactly as `capacity` is, so changing the layout never gains tokens and loses only what no
 * longer fits. A row whose clock changed (see {@link sameClock}) is carried over by
 * {@link carriedOver}.
 */
export function relayout(rows: StoredRow[], config: RateLimitConfig, phase: number, now: number): State[] {
  const n = config.shards ?? 1;
  // Rows that don't record their layout (written by @convex-dev/rate-limiter) are taken to be the
  // smallest layout that has them: shards it can't see are not counted, never counted full.
  const old = rows.find((r) => r.shards !== undefined)?.shards ?? Math.max(...rows.map((r) => r.shard)) + 1;
  const oldConfig = { ...config, shards: old };
  let total = 0;
  // The latest instant the old rows were evaluated to: a carried-over row anchored in the future
  // gains nothing until then, so neither may the new rows.
  let latest = now;
  for (let i = 0; i < old; i++) {
    const row = rows.find((r) => r.shard === i);
    const p = shardParams(oldConfig, phase, i);
    const cur = evaluate(row && !sameClock(row, p) ? carriedOver(row, p) : (row ?? null), p, now);
    total += cur.value;
    latest = Math.max(latest, cur.ts);
  }
  const params = Array.from({ length: n }, (_, i) => shardParams(config, phase, i));
  const values = params.map((p, i) => Math.min(splitTotal(total, n, i), p.capacity));
  // What a full shard couldn't take goes to shards with room, so only what fits nowhere is lost.
  let left = total - values.reduce((sum, v) => sum + v, 0);
  for (let i = 0; i < n && left > 0; i++) {
    const add = Math.min(left, params[i]!.capacity - values[i]!);
    if (add > 0) {
      values[i]! += add;
      left -= add;
    }
  }
  return params.map((p, i) => ({
    value: values[i]!,
    ts: p.kind === "fixed window" ? windowStart(latest, p) : latest,
  }));
}
