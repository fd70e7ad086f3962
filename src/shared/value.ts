// Reporting a limit's state without writing: `getValue`, and the hook's view of it.
import { evaluate } from "./algebra.js";
import { shardConfig } from "./layout.js";
import { sampleDistinct, type ShardRead } from "./plan.js";
import type { KeyFlow } from "./rows.js";
import { validateNameAndKey, validateSampleShards } from "./validate.js";
import { checkConfig } from "./validate-config.js";
import type { GetValueArgs, GetValueResult, GetValueReturnsWithDetails, RateLimitConfig } from "./validators.js";
import { newView, scaledTotal, shardOf } from "./view.js";

/**
 * getValueFlow reports a limit's state at `now` without writing: the emptiest of `sampleShards`
 * shards (default 1, drawn uniformly with `random`; ties go to the smallest share) evaluated at
 * `now`, with that shard's own share of the config (start resolved), so `calculateRateLimit(value,
 * config, t)` is exactly what that shard answers at `t`; and `total`, the whole limit's tokens,
 * exact when every shard was read and otherwise scaled from the sample, when `details` asks.
 */
export function* getValueFlow<Id>(args: GetValueArgs, now: number, random: () => number): KeyFlow<Id, GetValueResult> {
  validateNameAndKey(args.name, args.key);
  checkConfig(args.config);
  validateSampleShards(args.sampleShards);
  const view = newView<Id>(args, now);
  const picked = sampleDistinct(view.n, args.sampleShards ?? 1, random);
  for (const shard of picked) yield* shardOf(view, shard);
  // Asked again: a later read may have switched the view to a migrated layout.
  const reads: ShardRead[] = [];
  for (const shard of picked) reads.push((yield* shardOf(view, shard)).read);
  const summary = summarize(reads, args.config, view.phase, now);
  if (args.details) return summary;
  const { total: _total, ...plain } = summary;
  return plain;
}

/** The `getValue` report of the shards read, evaluated at `now`, with the whole limit's `total`. */
export function summarize(
  reads: readonly ShardRead[],
  config: RateLimitConfig,
  phase: number,
  now: number,
): GetValueReturnsWithDetails {
  const evaluated = reads.map((read) => ({ read, cur: evaluate(read.state, read.p, now) }));
  // With every shard read (what hookAPI does by default), what the emptiest can serve every pair a
  // request may draw can serve too.
  const best = evaluated.reduce((x, y) =>
    y.cur.value < x.cur.value || (y.cur.value === x.cur.value && y.read.p.capacity < x.read.p.capacity) ? y : x,
  );
  const readValue = evaluated.reduce((sum, e) => sum + e.cur.value, 0);
  const readCapacity = evaluated.reduce((sum, e) => sum + e.read.p.capacity, 0);
  const capacity = config.capacity ?? config.rate;
  const exact = reads.length === (config.shards ?? 1);
  // Evaluated at the query's time: predicting forward from it gives exactly what predicting from
  // the stored row would, and a client without a clock offset can use `ts` as a lower bound on
  // the server's clock.
  return {
    value: best.cur.value,
    ts: best.cur.ts,
    ...(best.cur.prev === undefined ? {} : { prev: best.cur.prev }),
    ...(best.cur.log === undefined ? {} : { log: best.cur.log }),
    shard: best.read.shard,
    config: shardConfig(config, phase, best.read.shard),
    total: {
      // Scaled from the sample; a sample of zero capacity (capacity 0) can't be scaled.
      value: scaledTotal(readValue, readCapacity, capacity, exact),
      capacity,
      exact,
    },
  };
}

