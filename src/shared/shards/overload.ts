// Shedding under overload: how a hot limit refuses the excess instead of failing it through
// optimistic-concurrency conflicts. Convex checks only a transaction that writes: one that writes
// nothing (a refusal) is never checked, and inserts don't conflict with each other. So what fails
// users under overload is admissions racing for the same last tokens, and exact decisions that
// read what every take writes. Two pure policies, measured in `npm run simulate` (see
// docs/hot-limits.md, "Under overload"):
// - a sharded request near empty reads one shard, or takes from a second only what it can spare
//   (`nearEmptyRule`, `planNearEmpty`, used by `planRequest`);
// - on quiet shards, which no overload writes often enough to race for, a request its pair
//   refuses reads a few more shards instead (`readOn`);
// - an asynchronous request that its stale snapshot shows near the limit, while others are taking,
//   is refused on that snapshot instead of being decided again on the contended current state
//   (`shedPlan`, `staleVerdict`).
import { delayUntil, evaluate, withValue } from "../kinds/algebra.js";
import type { Plan, ShardRead } from "./shard.js";
import { minus } from "../core/split.js";
import type { RateLimitResult } from "../shapes/validators.js";
import { math } from "../core/math.js";

/**
 * The longest a snapshot may lag the caller's own (ms) for an asynchronous limit to decide on it;
 * an older one is not trusted, and the request is decided on the current state instead.
 */
export const MAX_STALENESS_MS = 1000;

/**
 * NO_COMBINE_COUNTS: a pair of shards each holding at least this many requests' worth of capacity
 * never combines partial tokens. When neither shard alone can serve a request, the pair refuses
 * instead of taking from both: a shard that size refills a whole request soon, and under overload
 * a combined take writes two rows that every request near empty is reading, so it races twice (in
 * `npm run simulate`, 200 QPS over 20 shards at 150 % load failed 1.31 % of requests with
 * combining, 0.21 % without). Smaller shards strand partial tokens without it, so they combine.
 */
export const NO_COMBINE_COUNTS = 4;

/**
 * ALONE_COUNTS: near empty, a request whose first shard holds at least this many requests' worth
 * of capacity is decided on that shard alone when it can serve (no second read), and when it
 * can't, takes from a second shard only a request the second can spare (it keeps one more). Under
 * overload every shard is near empty and the last token of each is raced by the requests that
 * drew it first; a second read joins that race and puts two rows in the read set (1,000 QPS over
 * 50 shards at 150 % load: 6.05 % failed without it, 0.76 % with it). At moderate load a shard that
 * size runs dry only when the whole limit does, so this costs no refusals there, where smaller
 * shards need the second read to stay balanced.
 */
export const ALONE_COUNTS = 10;

/**
 * How a request decides when its first shard can't serve comfortably: `pair` reads a second shard
 * and takes from the fuller or from both (the power of two choices); `no combining` reads a second
 * but never takes from both; `alone` reads a second only when the first can't serve, and then
 * takes from it only what it can spare. A reservation always decides on the pair: it may take into
 * debt, which a refusal here would forbid.
 */
export type NearEmptyRule = "pair" | "no combining" | "alone";

/**
 * nearEmptyRule returns the rule for a request of `count` tokens whose first shard is `first`,
 * and once the second shard is read, `second`: a second shard too small to refill a request soon
 * (under {@link NO_COMBINE_COUNTS} requests' worth) is decided on as a `pair` whatever the first
 * (partial tokens would strand on it). The planner asks before reading the second shard (is the
 * rule `alone`?) and again after; only this function compares a shard with the thresholds.
 */
export function nearEmptyRule(first: ShardRead, count: number, reserve: boolean, second?: ShardRead): NearEmptyRule {
  if (reserve || !(count > 0)) return "pair";
  if (second !== undefined && !(second.p.capacity >= NO_COMBINE_COUNTS * count)) return "pair";
  if (first.p.capacity >= ALONE_COUNTS * count) return "alone";
  if (first.p.capacity >= NO_COMBINE_COUNTS * count) return "no combining";
  return "pair";
}

/**
 * QUIET_SHARD_MS: a shard that refills a request's worth no faster than once per this many ms is
 * quiet. Near empty, a shard is written about as often as it refills, however many requests
 * arrive (a refusal writes nothing), so even under overload a request that reads a few quiet
 * shards rarely meets a write to them. `node tools/run.mjs bench/contention/quiet-shards.ts` (rule-sized
 * per-minute limits, seeds 1 to 4): on quiet shards, reading on failed 0.007 to 0.030 % of
 * requests at 1,000 % load, against 0 to 0.006 % without; at 1 s, shards refilling every 1.5 s
 * failed up to 0.10 % (against 0.02 %) at 300 % load and 100 ms mutations. The overload rules
 * above guard the shards written faster: no cell of `npm run simulate` (limits per second, a
 * whole token a shard) is quiet.
 */
export const QUIET_SHARD_MS = 2000;

/**
 * READ_ON_SHARDS: how many more shards a request reads, one at a time, when its pair of quiet
 * shards ({@link QUIET_SHARD_MS}) refuses it; it takes from the first that can serve it alone.
 * Near empty, a limit's last tokens lie on a few shards, and a pair misses them: an exact sliding
 * window's tokens come back one at a time, each on the shard that took it, W after, and a pair
 * finds a shard with a token one draw in five over 10 shards. `npm run bench -- --only sliding`,
 * the exact window over 10 shards against the reference sliding log: the five shapes' least share
 * admitted was 94.1 % reading no more, 97.4 % reading one more, 98.3 % reading two more (seeds
 * 1 to 3); section 2's token buckets and fixed windows (6 tokens a shard) refuse less too.
 * Refusals read more rows (up to four), and write nothing.
 */
export const READ_ON_SHARDS = 2;

/**
 * readOn returns how many more shards a request of `count` tokens reads when the pair it drew
 * (`first`, one of `n` shards) refuses it: {@link READ_ON_SHARDS} (as many as there are) on quiet
 * shards, otherwise none. A reservation reads no more here: its pair may take into debt, and
 * refuses only a debt the limit can't take (fractions that strand it are gathered by
 * `planReserved`, plan.ts, from at most `GATHER_SHARDS` shards).
 */
export function readOn(first: ShardRead, count: number, reserve: boolean, n: number): number {
  if (reserve || !(count > 0)) return 0;
  // A zero rate refills never: quiet.
  if (!((count * first.p.period) / first.p.rate >= QUIET_SHARD_MS)) return 0;
  return math.max(0, math.min(READ_ON_SHARDS, n - 2));
}

/** holds reports whether `read` alone holds `need` tokens at `now`: it can serve them without debt. */
export function holds(read: ShardRead, now: number, need: number): boolean {
  return minus(evaluate(read.state, read.p, now).value, need) >= 0;
}

/** Whole ms until `read` holds `need` tokens with no other traffic; Infinity if it never can. */
function waitFor(read: ShardRead, now: number, need: number): number {
  return read.p.capacity >= need ? delayUntil(read.state, read.p, now, need) : Infinity;
}

/** A take of `count` from one shard, as the planner writes it. */
function takeFrom(read: ShardRead, now: number, count: number): Plan {
  const cur = evaluate(read.state, read.p, now);
  return { ok: true, writes: [{ shard: read.shard, state: withValue(cur, read.p, minus(cur.value, count)) }], shards: [read.shard] };
}

/**
 * planNearEmpty decides a request of `count` tokens (no reservation) on the pair `a` (drawn first,
 * which can't serve comfortably) and `b`, under `rule` (not `pair`, which is `planTwo`'s):
 * - `no combining`: take from the fuller when it alone can serve; otherwise refused until either
 *   alone can.
 * - `alone` (`a` can't serve alone, or the request would have taken from it unread of `b`): take
 *   from `b` when it holds `count` to spare after the take; otherwise refused until `a` alone can
 *   serve or `b` holds twice `count`.
 * A refusal's `retryAfter` is when, with no other traffic, the same pair serves it under the rule.
 */
export function planNearEmpty(rule: Exclude<NearEmptyRule, "pair">, a: ShardRead, b: ShardRead, now: number, count: number): Plan {
  const shards = [a.shard, b.shard];
  if (rule === "no combining") {
    // As planTwo: the fuller, `a` on a tie.
    const fuller = evaluate(b.state, b.p, now).value > evaluate(a.state, a.p, now).value ? b : a;
    if (holds(fuller, now, count)) return takeFrom(fuller, now, count);
    return { ok: false, retryAfter: math.min(waitFor(a, now, count), waitFor(b, now, count)), writes: [], shards };
  }
  if (holds(a, now, count)) return takeFrom(a, now, count);
  if (holds(b, now, 2 * count)) return takeFrom(b, now, count);
  return { ok: false, retryAfter: math.min(waitFor(a, now, count), waitFor(b, now, 2 * count)), writes: [], shards };
}

/**
 * SHED_SHARD_COUNTS: a sharded asynchronous limit sheds only when every shard its stale decision
 * used holds at least this many requests' worth of capacity. Smaller shards drift apart (some run
 * dry while others hold tokens), and their margin is about one request, so one pair near its
 * margin says little of the limit: the exact decision, which draws its shards again, serves them
 * better (in `npm run simulate` at 90 % load, shedding on shards of 2.8 and 4.4 requests refused
 * 7.0 and 0.8 points more than it did). On larger shards it sheds, as an unsharded limit does:
 * at 150 % load, 200 QPS over 20 shards of 6.7 requests failed 3.1 % of requests without it.
 */
export const SHED_SHARD_COUNTS = 6;

/**
 * shedPlan returns the refusal an asynchronous request may return on its stale snapshot instead
 * of being decided again on the current state, or undefined when it must be decided again. It
 * applies to a request of `count` > 0 tokens (no reservation, not a dry run) whose stale decision
 * didn't stand on its own, because it refused or would leave less than `margin` × the capacity of
 * a shard it used, and only when `busy`: the snapshot showed takes still waiting for the applier,
 * so others are taking from the key, and an exact decision would read the rows and takes that they
 * and the applier are writing. A refusal on the snapshot stands as it is; an admission inside the
 * margin becomes a refusal until its shards hold `count` plus the margin again (with no other
 * traffic). A refusal never over-admits, so shedding keeps the asynchronous bound
 * (docs/hot-limits.md) as it is. A sharded limit (`shards` > 1) sheds only on shards of
 * {@link SHED_SHARD_COUNTS} requests' worth or more (`reads`: the shards the plan used or read).
 */
export function shedPlan(
  plan: Plan,
  reads: readonly ShardRead[],
  now: number,
  args: { count: number; reserve: boolean; dryRun: boolean; busy: boolean; margin: number; shards: number },
): Plan | undefined {
  const { count, reserve, dryRun, busy, margin, shards } = args;
  if (!busy || reserve || dryRun || !(count > 0)) return undefined;
  if (shards !== 1 && !reads.every((r) => r.p.capacity >= SHED_SHARD_COUNTS * count)) return undefined;
  if (!plan.ok) return plan;
  if (plan.retryAfter !== undefined) return undefined;
  const short = reads.filter((r) => plan.shards.includes(r.shard) && !holds(r, now, count + margin * r.p.capacity));
  if (short.length === 0) return undefined;
  const retryAfter = math.max(...short.map((r) => waitFor(r, now, count + margin * r.p.capacity)));
  return Number.isFinite(retryAfter) ? { ok: false, retryAfter, writes: [], shards: plan.shards } : undefined;
}

/**
 * What an asynchronous request decided on a stale snapshot (`lib.decideOnSnapshot`): its verdict
 * `V` (the result, and whatever else the executor needs of it) and its takes; whether it stands on
 * its own (`safeOnStale`: it admits keeping the margin); and the refusal it may shed instead
 * (`shed`, a verdict from {@link shedPlan}).
 */
export type StaleDecision<T, V extends { result: RateLimitResult }> = V & { takes: T[]; safeOnStale: boolean; shed?: V };

/**
 * staleVerdict says what stands of a decision made on a snapshot `lagMs` older than the caller's
 * own: the decision with its takes, or the refusal it sheds (no takes), or null when the request
 * must be decided again on the current state. Nothing stands on a snapshot older than
 * {@link MAX_STALENESS_MS}. A refusal is shed only from a snapshot that lags (`lagMs` > 0): one
 * that doesn't lag missed nothing committed, and the exact decision, which serializes with
 * concurrent takes, reads the same.
 */
export function staleVerdict<T, V extends { result: RateLimitResult }>(
  decision: StaleDecision<T, V>,
  lagMs: number,
): (V & { takes: T[] }) | null {
  if (!(lagMs <= MAX_STALENESS_MS)) return null;
  const { safeOnStale, shed, ...stands } = decision;
  if (safeOnStale) return stands as unknown as V & { takes: T[] };
  if (shed !== undefined && lagMs > 0) return { ...shed, takes: [] };
  return null;
}
