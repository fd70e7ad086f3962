// How hot a limit may run: the sizing rule with the mutation's time in it, and what a limit's rows
// say of the rate it is written at. Pure; `npm run simulate -- --plan` derives and checks the rule
// (docs/hot-limits.md, "The sizing rule").
//
// A transactional take conflicts when another take committed to the row it read while its own
// mutation ran. So what fails users is writes per shard × the mutation's time: in the model, shards
// written at most once per five mutation times (w × s ≤ 1/5) failed at most 0.51 % of requests at
// 90 %, 150 % and 300 % of the rate, from 10 to 100 ms and 200 to 1,000 QPS, seeds 1 to 4 (once
// per four: up to 1.00 %; twice as often as that: 2 to 4 % at 90 % load). Refusals write nothing
// and never conflict, but over the limit every request that reads a shard as a token comes back
// races for it: the shards follow the peak's requests, not the admissions.
import { invalid } from "../validation/validate.js";

/**
 * SHARD_DUTY: the most writes one shard may take per mutation time, on average (w × s): one per
 * five mutation times. Derived from `npm run simulate -- --plan` (see the file's opening comment).
 */
export const SHARD_DUTY = 0.2;

/**
 * MIN_SHARD_TOKENS: the fewest tokens of capacity a shard should hold (per token a request takes)
 * for the rule to pick transactional mode. Smaller shards run dry while others hold tokens (at
 * about one token a shard, a fifth of requests were refused at 90 % load in the model), so the
 * rule picks asynchronous mode instead, or a shorter limited transaction.
 */
export const MIN_SHARD_TOKENS = 2;

/** The mutation time (ms) the rule assumes when none is stated. */
export const DEFAULT_MUTATION_MS = 25;

/** validateMutationMs throws an `InvalidRateLimit` error naming `mutationMs` unless it is absent or a finite number of ms > 0. */
export function validateMutationMs(mutationMs: number | undefined): void {
  if (mutationMs === undefined) return;
  if (!(Number.isFinite(mutationMs) && mutationMs > 0)) throw invalid("mutationMs", mutationMs, "must be a finite number of ms > 0");
}

/**
 * maxWritesPerShard returns the most admissions per second one shard may take for a mutation of
 * `mutationMs` ms (from the limit's read to its commit): {@link SHARD_DUTY} / `mutationMs`, in
 * writes per second: 8 per second at 25 ms, 4 at 50 ms.
 */
export function maxWritesPerShard(mutationMs: number): number {
  return (SHARD_DUTY * 1000) / mutationMs;
}

/**
 * shardsFor returns the shards a transactional limit written `writesPerSecond` times a second
 * needs for a mutation of `mutationMs` ms: ⌈writes × mutation time / {@link SHARD_DUTY}⌉, at least 1.
 */
export function shardsFor(writesPerSecond: number, mutationMs: number): number {
  return Math.max(1, Math.ceil((writesPerSecond * mutationMs) / 1000 / SHARD_DUTY - 1e-9));
}

/** What the rule recommends for a hot limit. */
export type SizingPlan =
  /** Transactional (exact) over `shards` shards. */
  | { mode: "transactionally"; shards: number; writesPerSecond: number }
  /**
   * Asynchronous, unsharded: the shards an exact limit would need (`exactShards`) leave each
   * fewer than {@link MIN_SHARD_TOKENS} tokens. An exact limit fits again with a limited
   * transaction of at most `exactMutationMs` ms (decide in a short mutation, work later).
   */
  | { mode: "asynchronously"; shards: 1; writesPerSecond: number; exactShards: number; exactMutationMs: number };

/**
 * planFor returns the mode and shards for a limit of `rate` tokens per second (capacity `capacity`,
 * default `rate`) at a peak of `qps` requests a second of `count` tokens (default 1), each limited
 * by a mutation of `mutationMs` ms. The shards are sized for the peak's writes, `qps`, even when
 * the rate admits fewer: over the limit, every request that reads a shard as a token comes back
 * races for it, so the races grow with the requests, not the admissions. Transactional over
 * {@link shardsFor}(qps, mutationMs) shards when each keeps {@link MIN_SHARD_TOKENS} requests'
 * worth of capacity; otherwise asynchronous, unsharded.
 */
export function planFor(args: { qps: number; rate: number; capacity?: number; count?: number; mutationMs: number }): SizingPlan {
  const count = args.count ?? 1;
  const capacity = args.capacity ?? args.rate;
  const writesPerSecond = args.qps;
  const shards = shardsFor(writesPerSecond, args.mutationMs);
  const fits = Math.max(1, Math.floor(capacity / (MIN_SHARD_TOKENS * count)));
  if (shards <= fits) return { mode: "transactionally", shards, writesPerSecond };
  return {
    mode: "asynchronously",
    shards: 1,
    writesPerSecond,
    exactShards: shards,
    exactMutationMs: Math.floor((fits * SHARD_DUTY * 1000) / writesPerSecond),
  };
}

/** A shard row as the heat estimate reads it: its stored state (null: never written) and its params. */
export type HeatSample = { state: { value: number; ts: number } | null; p: { kind: string; capacity: number; rate: number; period: number } };

/** How hot a limit runs, as `getValue` reports it with `details: true` (see {@link heatOf}). */
export type Heat = {
  /** Estimated admissions (row writes) per second on one shard. */
  writesPerShard: number;
  /** The shard rows the estimate rests on (those read that were ever written). */
  samples: number;
  /** The mutation time (ms) the rule was applied for. */
  mutationMs: number;
  /** The most writes per second per shard the rule allows at `mutationMs` ({@link maxWritesPerShard}). */
  maxWritesPerShard: number;
  /** Whether `writesPerShard` exceeds `maxWritesPerShard`. */
  hot: boolean;
  /** What the rule recommends for the limit's estimated writes ({@link planFor}), when `hot`. */
  recommend?: { applyUpdates: "transactionally" | "asynchronously"; shards: number };
};

/**
 * heatOf estimates from shard rows read at `now` how many admissions a second one shard takes,
 * and compares it with the rule for mutations of `mutationMs` ms. It reads only what the rows
 * already hold; nothing is written for it:
 * - a token bucket's or sliding window's `ts` is the instant of its last write, so `now − ts` is
 *   how long the shard has gone unwritten: for writes at random instants at w a second that age
 *   averages 1 / w, so over k rows w ≈ k / Σ ages (each row one write over its age);
 * - a fixed window's row holds what its window has taken, `capacity − value` (its window starts
 *   full when `capacity ≤ rate`, the default), over `now − ts` (ts: the window's start).
 * Rows never written carry no sample; a fixed window whose capacity exceeds its rate neither.
 * Returns null with no sample. The estimate is per shard of `shards`; the whole limit's is that
 * times `shards`, and a `hot` limit's recommendation is {@link planFor} at that many requests a
 * second (a lower bound on them: refusals don't write). One row is one sample, so read every
 * shard (`sampleShards: shards`) for a steadier figure; a query re-run on every write (a
 * reactive one) reads its rows just after one, and reads high.
 */
export function heatOf(
  samples: readonly HeatSample[],
  config: { rate: number; period: number; capacity?: number; shards?: number },
  now: number,
  mutationMs: number,
): Heat | null {
  let events = 0;
  let exposure = 0;
  let used = 0;
  for (const { state, p } of samples) {
    if (state === null) continue;
    const age = Math.max(0, now - state.ts);
    if (p.kind === "fixed window") {
      if (p.capacity > p.rate) continue;
      events += Math.max(0, p.capacity - state.value);
    } else {
      events += 1;
    }
    exposure += age;
    used++;
  }
  if (used === 0) return null;
  // Rows all written this very ms: as if each a ms ago, not infinitely hot.
  return heatAt((events * 1000) / Math.max(exposure, used), used, config, mutationMs);
}

/** The heat report of a limit whose shards take `writesPerShard` writes a second, from `samples` samples. */
function heatAt(
  writesPerShard: number,
  samples: number,
  config: { rate: number; period: number; capacity?: number; shards?: number },
  mutationMs: number,
): Heat {
  const max = maxWritesPerShard(mutationMs);
  const heat: Heat = { writesPerShard, samples, mutationMs, maxWritesPerShard: max, hot: writesPerShard > max };
  if (heat.hot) {
    const shards = config.shards ?? 1;
    const rate = (config.rate * 1000) / config.period;
    const capacity = config.capacity ?? config.rate;
    const plan = planFor({ qps: writesPerShard * shards, rate, capacity, mutationMs });
    heat.recommend = { applyUpdates: plan.mode, shards: plan.shards };
  }
  return heat;
}

/** The metrics of one minute, as `RateLimiter.metrics` lists them (the fields the heat needs). */
export type MinuteCounts = { admitted: number; reserved: number };

/**
 * heatOfMetrics estimates the writes a second per shard from a limit's metrics (`metrics: true`):
 * the busiest minute's admissions and reservations (each one write) over its 60 s, over the
 * limit's `shards`, against the rule for mutations of `mutationMs` ms (see {@link heatOf});
 * `samples` is the minutes that saw any. Null when none did. Two caveats: the metrics count every
 * key of the name together, which don't conflict with each other, so this is the heat of a key
 * that took them all (a bound for any one key; exact for a limit used without keys); and a
 * minute's average hides the bursts within it.
 */
export function heatOfMetrics(
  buckets: readonly MinuteCounts[],
  config: { rate: number; period: number; capacity?: number; shards?: number },
  mutationMs: number,
): Heat | null {
  const busy = buckets.filter((b) => b.admitted + b.reserved > 0);
  if (busy.length === 0) return null;
  const busiest = Math.max(...busy.map((b) => b.admitted + b.reserved));
  return heatAt(busiest / 60 / (config.shards ?? 1), busy.length, config, mutationMs);
}
