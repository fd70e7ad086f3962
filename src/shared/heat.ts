// How hot a limit may run: the sizing rule with the mutation's time in it, and what a limit's rows
// say of the rate it is written at. Pure; `npm run simulate -- --plan` derives and checks the rule
// (docs/hot-limits.md, "The sizing rule").
//
// A transactional take conflicts when another take committed to the row it read while its own
// mutation ran. So what fails users is writes per shard × the mutation's time: in the model, a
// shard written at most once per four mutation times (w × s ≤ 1/4) failed under 1 % of requests
// at 90 %, 150 % and 300 % of the rate, at 10 to 100 ms, and one written twice as often failed 2 to
// 4 % at 90 % load. Refusals write nothing and never conflict, so only admissions count, and those
// are at most the limit's rate once it is saturated.

/**
 * SHARD_DUTY: the most writes one shard may take per mutation time, on average (w × s). Derived
 * from `npm run simulate` (see the file's opening comment).
 */
export const SHARD_DUTY = 0.25;

/**
 * MIN_SHARD_TOKENS: the fewest tokens of capacity a shard should hold (per token a request takes)
 * for the rule to pick transactional mode. Smaller shards run dry while others hold tokens (at
 * about one token a shard, a fifth of requests were refused at 90 % load in the model), so the
 * rule picks asynchronous mode instead, or a shorter limited transaction.
 */
export const MIN_SHARD_TOKENS = 2;

/** The mutation time (ms) the rule assumes when none is stated. */
export const DEFAULT_MUTATION_MS = 25;

/**
 * maxWritesPerShard returns the most admissions per second one shard may take for a mutation of
 * `mutationMs` ms (from the limit's read to its commit): {@link SHARD_DUTY} / `mutationMs`, in
 * writes per second. 10 per second at 25 ms, 5 at 50 ms.
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
export type Plan =
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
export function planFor(args: { qps: number; rate: number; capacity?: number; count?: number; mutationMs: number }): Plan {
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
