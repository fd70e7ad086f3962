// Deciding a request against a sharded limit with the power of two choices. Pure: the caller
// supplies the rows it read and the random draws; the planner says what to read next or what to
// write.
import {
  decideRow,
  delayUntil,
  evaluate,
  leastDelay,
  paramsOf,
  phaseOf,
  windowStart,
  type Params,
  type State,
} from "./algebra.js";
import { splitTotal } from "./split.js";
import type { RateLimitConfig } from "./validators.js";

/**
 * A shard is "comfortable" when, after serving the request, it still holds at least this fraction
 * of its capacity. Only then does a request read a single shard; otherwise it reads a second one
 * and takes from the fuller (or both). Lower means fewer reads (less contention) but less
 * balancing; `npm run bench` measures the trade-off. See the README's "Sharding" section.
 */
export const COMFORT_FRACTION = 0.25;

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
 * The phase (ms, in [0, period)) of a fixed window: `config.start`'s, or, without one, a stable
 * hash of name and key, so keys refill at different instants (no thundering herd at midnight)
 * while each key keeps its windows across calls and resets. Token buckets have phase 0.
 */
export function resolvePhase(config: RateLimitConfig, name: string, key: string | undefined): number {
  if (config.kind !== "fixed window") return 0;
  if (config.start !== undefined) return phaseOf(config.start, config.period);
  const id = key === undefined ? `${name}\u0000` : `${name}\u0001${key}`;
  return Math.floor(hashFraction(id) * config.period);
}

/** The params of shard `i` of a config: its exact share of `rate`, `capacity` and `maxReserved`. */
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
 * Shard `i`'s share of a config, as a config of its own (no `shards`, `start` resolved), so that
 * `calculateRateLimit(row, shardConfig(...))` answers exactly what that shard would.
 */
export function shardConfig(config: RateLimitConfig, phase: number, i: number): RateLimitConfig {
  const p = shardParams(config, phase, i);
  const common = {
    rate: p.rate,
    period: p.period,
    capacity: p.capacity,
    ...(Number.isFinite(p.maxReserved) ? { maxReserved: p.maxReserved } : {}),
  };
  return config.kind === "fixed window"
    ? { kind: "fixed window", ...common, start: phase }
    : { kind: "token bucket", ...common };
}

/** A shard row as the planner sees it: its number, what is stored (null: none), and its params. */
export type ShardRead = { shard: number; state: State | null; p: Params };

/** A row to write: shard `shard` holds `state`. */
export type ShardWrite = { shard: number; state: State };

/** The planner's verdict. `shards` lists the shards used (when ok) or read (when refused). */
export type Plan =
  | { ok: true; retryAfter?: number; writes: ShardWrite[]; shards: number[] }
  | { ok: false; retryAfter: number; writes: []; shards: number[] };

/** Picks two distinct shards from two uniform draws in [0, 1). */
export function pickTwo(n: number, r1: number, r2: number): [number, number] {
  const a = Math.min(n - 1, Math.floor(r1 * n));
  if (n === 1) return [a, a];
  const b = (a + 1 + Math.min(n - 2, Math.floor(r2 * (n - 1)))) % n;
  return [a, b];
}

/**
 * The decision flow of one request, as a generator so one flow serves both the component (which
 * reads rows from the database, asynchronously) and in-memory models (tests, the benchmark): it
 * yields the number of each shard it needs and is sent back that shard's `ShardRead`. It asks for
 * a second shard only when the first can't serve comfortably. A shard may be asked for again;
 * answer with its current state (the component's view may have switched to a migrated layout).
 */
export function* planRequest(
  n: number,
  now: number,
  count: number,
  reserve: boolean,
  random: () => number,
): Generator<number, Plan, ShardRead> {
  const [first, second] = pickTwo(n, random(), random());
  const a = yield first;
  if (n === 1 || isComfortable(a, now, count)) return planOne(yield first, now, count, reserve);
  const b = yield second;
  return planTwo(yield first, b, now, count, reserve);
}

/** Decides against one row: the whole unsharded limit, or a sharded one's comfortable first pick. */
export function planOne(read: ShardRead, now: number, count: number, reserve: boolean): Plan {
  const d = decideRow(read.state, read.p, now, count, reserve);
  const shards = [read.shard];
  if (!d.ok) return { ok: false, retryAfter: d.retryAfter, writes: [], shards };
  const writes = d.next ? [{ shard: read.shard, state: d.next }] : [];
  return d.retryAfter === undefined
    ? { ok: true, writes, shards }
    : { ok: true, retryAfter: d.retryAfter, writes, shards };
}

/** Whether the first shard read can serve the request and stay comfortable: then read no more. */
export function isComfortable(read: ShardRead, now: number, count: number): boolean {
  const cur = evaluate(read.state, read.p, now);
  return cur.value - count >= COMFORT_FRACTION * read.p.capacity;
}

/**
 * Splits `total` tokens between two shards so they end balanced: in proportion to their rates
 * (so debts are repaid at the same moment), clamped to each shard's bounds, and in whole tokens
 * when the total is whole (so fixed windows never strand fractions).
 */
function balance(total: number, a: Params, b: Params): [number, number] {
  let va = (total * a.rate) / (a.rate + b.rate);
  if (Number.isInteger(total)) va = Math.round(va);
  va = Math.min(a.capacity, Math.max(-a.maxReserved, va));
  let vb = total - va;
  if (vb > b.capacity) {
    vb = b.capacity;
    va = total - vb;
  } else if (vb < -b.maxReserved) {
    vb = -b.maxReserved;
    va = total - vb;
  }
  return [va, vb];
}

/**
 * Decides against two shards (power of two choices). Takes from the fuller one when it can serve
 * the request alone; otherwise from both together, leaving them balanced (also into reserved debt,
 * with `reserve`). Refused when the pair together can't: `retryAfter` is then when the same
 * pair, with no other traffic, could serve it; a retry may land on other shards, which can only
 * be fuller than refused ones in expectation, not for certain.
 */
export function planTwo(a: ShardRead, b: ShardRead, now: number, count: number, reserve: boolean): Plan {
  const ca = evaluate(a.state, a.p, now);
  const cb = evaluate(b.state, b.p, now);
  const floor = reserve && count > 0 ? -(a.p.maxReserved + b.p.maxReserved) : 0;
  const shards = [a.shard, b.shard];
  if (!pairAccepts(ca.value, cb.value, count, floor)) {
    const rate = (a.p.rate + b.p.rate) / a.p.period;
    const guess = Math.max(ca.ts, cb.ts, now) - now + (count + floor - ca.value - cb.value) / rate;
    const accepts = (t: number) =>
      pairAccepts(evaluate(a.state, a.p, t).value, evaluate(b.state, b.p, t).value, count, floor);
    return { ok: false, retryAfter: leastDelay(accepts, now, guess, count), writes: [], shards };
  }
  const [fuller, fullerCur] = cb.value > ca.value ? [b, cb] : [a, ca];
  if (fullerCur.value - count >= 0) {
    if (count === 0) return { ok: true, writes: [], shards: [fuller.shard] };
    return {
      ok: true,
      writes: [{ shard: fuller.shard, state: { value: fullerCur.value - count, ts: fullerCur.ts } }],
      shards: [fuller.shard],
    };
  }
  if (count === 0) return { ok: true, writes: [], shards };
  const [va, vb] = balance(ca.value + cb.value - count, a.p, b.p);
  const next: [State, State] = [
    { value: va, ts: ca.ts },
    { value: vb, ts: cb.ts },
  ];
  const writes = [
    { shard: a.shard, state: next[0] },
    { shard: b.shard, state: next[1] },
  ];
  if (va >= 0 && vb >= 0) return { ok: true, writes, shards };
  const repaid = Math.max(
    va < 0 ? delayUntil(next[0], a.p, now, 0, undefined, count) : 0,
    vb < 0 ? delayUntil(next[1], b.p, now, 0, undefined, count) : 0,
  );
  return { ok: true, retryAfter: repaid, writes, shards };
}

/**
 * Whether a pair holding `va` and `vb` tokens serves `count`: the fuller alone without debt, or
 * both together down to `floor` (minus their combined `maxReserved` when reserving, else 0).
 * The planner, its retry search and validation all use this one test, so they can't disagree.
 */
export function pairAccepts(va: number, vb: number, count: number, floor: number): boolean {
  return Math.max(va, vb) - count >= 0 || va + vb - count >= floor;
}

/**
 * A stored row as {@link relayout} sees it: `shards` and `kind` are the layout it was written
 * under, when recorded (rows written by @convex-dev/rate-limiter have neither).
 */
export type StoredRow = { shard: number; value: number; ts: number; shards?: number; kind?: RateLimitConfig["kind"] };

/**
 * Whether a row's `ts` means what the current config takes it to mean: written under the same
 * kind (assumed when not recorded) and, for a fixed window, a window start of the current phase
 * and period. Otherwise the config's kind, `start` or `period` changed under the row.
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
export function carriedOver(row: StoredRow, p: Params): State {
  const lastUpdate = (row.kind ?? p.kind) === "token bucket" ? row.ts : row.ts + p.period;
  return { value: Math.min(row.value, p.capacity), ts: lastUpdate };
}

/**
 * The states of every shard of a limit whose rows were written under another layout: another
 * shard count, kind, or fixed-window phase or period. The limit's total at `now` under the old
 * layout (where a missing row was a full shard) is split over the new shards exactly as
 * `capacity` is, so changing the layout never gains tokens and loses only what no longer fits.
 * A row whose clock changed (see {@link sameClock}) is carried over by {@link carriedOver}.
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
