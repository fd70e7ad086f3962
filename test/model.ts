// A small in-memory model of the component for pure-layer tests: a Map-backed store of shard rows,
// and a decide/apply pair that runs the very decision flow the component runs (`planRequest` from
// src/shared/shards/plan.ts, driven by its `runPlan`), over the Map instead of the database.
import type { State } from "../src/shared/kinds/algebra.js";
import { resolvePhase, shardParams } from "../src/shared/shards/layout.js";
import { planRequest, type Plan, type ShardRead } from "../src/shared/shards/plan.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import { validateConfig, validateCount } from "../src/shared/validation/validate.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

/** One limit's rows: shard number → stored state. A missing shard is a full one. */
export type Store = Map<number, State>;

/** A request as the model takes it (the component's `RateLimitArgs`, minus `throws`). */
export type Request = {
  name: string;
  key?: string;
  config: RateLimitConfig;
  count?: number;
  reserve?: boolean;
};

/** The rows a decision read, and its plan. */
export type Decision = { plan: Plan; reads: ShardRead[] };

/**
 * Decides a request against the store without writing, through the component's own flow
 * (`planRequest`): two draws pick a pair, the first shard is read, and the second only when the
 * first isn't comfortable. Throws the same validation errors. The model keeps one shard count per store, so
 * `decide`'s relayout of rows written under another count never arises here.
 */
export function decideModel(store: Store, req: Request, now: number, random: () => number): Decision {
  validateConfig(req.config);
  const count = req.count ?? 1;
  const reserve = req.reserve ?? false;
  validateCount(count, req.config, reserve);
  const phase = resolvePhase(req.config, req.name, req.key);
  const reads: ShardRead[] = [];
  const read = (shard: number): ShardRead => {
    const r = { shard, state: store.get(shard) ?? null, p: shardParams(req.config, phase, shard) };
    if (!reads.some((x) => x.shard === shard)) reads.push(r);
    return r;
  };
  const plan = runPlan(planRequest(req.config.shards ?? 1, now, count, reserve, random), read);
  return { plan, reads };
}

/** Writes a plan's rows into the store (what the `rateLimit` mutation does). */
export function applyModel(store: Store, plan: Plan): void {
  for (const w of plan.writes) store.set(w.shard, { ...w.state });
}

/** A copy of the store, for comparing before and after. */
export function snapshot(store: Store): [number, State][] {
  return [...store.entries()].map(([k, s]) => [k, { ...s }] as [number, State]).sort((x, y) => x[0] - y[0]);
}
