// A shard as the planner reads and writes it, and the planner's verdict: the shapes the shard
// planner (plan.ts) and the overload rules (overload.ts) share.
import type { Params, State } from "../kinds/algebra.js";

/** A shard row as the planner sees it: its number, what is stored (null: none), and its params. */
export type ShardRead = { shard: number; state: State | null; p: Params };

/** A row to write: shard `shard` holds `state`. */
export type ShardWrite = { shard: number; state: State };

/**
 * The planner's verdict. `shards` lists the shards used (when ok) or read (when refused; a
 * refused peek lists the shards in debt).
 */
export type Plan =
  | { ok: true; retryAfter?: number; writes: ShardWrite[]; shards: number[] }
  | { ok: false; retryAfter: number; writes: []; shards: number[] };
