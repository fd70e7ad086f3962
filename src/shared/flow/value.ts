// Reporting a limit's state without writing: `getValue`, and the hook's view of it.
import { evaluate, startOf, windowIndex } from "../kinds/algebra.js";
import { shardConfig } from "../shards/layout.js";
import { sampleDistinct, type ShardRead } from "../shards/plan.js";
import type { KeyFlow } from "../shapes/rows.js";
import { inForce, type InForce } from "../overrides/overrides.js";
import type { Override } from "../shapes/override-validators.js";
import { validateNameAndKey, validateSampleShards, validateTier } from "../validation/validate.js";
import { checkConfig } from "../validation/validate-config.js";
import { newView, shardOf } from "./view.js";
import { scaledTotal } from "./details.js";
import { isAsync, type GetValueArgs, type GetValueResult, type GetValueReturnsWithDetails, type RateLimitConfig } from "../shapes/validators.js";
import { DEFAULT_MUTATION_MS, heatOf, validateMutationMs } from "../metrics/heat.js";

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
  validateMutationMs(args.mutationMs);
  if (args.tier !== undefined) validateTier(args.tier);
  return yield* inForce(args, now, random, (resolved, own, draw) => valueUnder<Id>(args, resolved, own, now, draw));
}

/**
 * Reports the state under what is in force for the key (see {@link getValueFlow}): its config,
 * which override set it (`by`), and a block or lockout in force (`blockedUntil`).
 */
function* valueUnder<Id>(args: GetValueArgs, resolved: InForce, own: Override | undefined, now: number, random: () => number): KeyFlow<Id, GetValueResult> {
  const { config } = resolved;
  if (resolved.by !== "config") checkConfig(config);
  const view = newView<Id>({ name: args.name, key: args.key, config }, now, own, resolved.by !== "config");
  const picked = sampleDistinct(view.n, args.sampleShards ?? 1, random);
  for (const shard of picked) yield* shardOf(view, shard);
  // Asked again: a later read may have switched the view to a migrated layout.
  const reads: ShardRead[] = [];
  for (const shard of picked) reads.push((yield* shardOf(view, shard)).read);
  const summary: GetValueReturnsWithDetails = summarize(reads, config, view.phase, now);
  if (resolved.by !== "config") summary.by = resolved.by;
  if (resolved.network !== undefined) summary.network = resolved.network;
  if (resolved.allow) {
    // Exempt: never refused, so neither a block below the network nor a lockout is reported.
    summary.allowed = true;
    if (args.details) return summary;
    const { total: _total, ...plain } = summary;
    return plain;
  }
  const { block } = resolved;
  const locked = view.lockedUntil;
  if (block !== undefined && block.until > now && !(locked > block.until)) {
    summary.blockedUntil = block.until;
    summary.blockedBy = block.by;
  } else if (locked > now) {
    summary.blockedUntil = locked;
    summary.blockedBy = "lockout";
  }
  if (args.details) {
    // An asynchronous limit's rows are written by its applier, not by its requests: no stamps to read.
    const heat = isAsync(config) ? null : heatOf(reads, config, now, args.mutationMs ?? DEFAULT_MUTATION_MS);
    return heat ? { ...summary, heat } : summary;
  }
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
    // A calendar quota's: when the period the shard stands in ends (see `resetsAt`).
    ...(best.read.p.cal === undefined ? {} : { resetsAt: startOf(windowIndex(best.cur.ts, best.read.p) + 1, best.read.p) }),
    total: {
      // Scaled from the sample; a sample of zero capacity (capacity 0) can't be scaled.
      value: scaledTotal(readValue, readCapacity, capacity, exact),
      capacity,
      exact,
    },
  };
}

