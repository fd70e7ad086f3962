// Which keys carry no information, and what a key holds, for the admin functions (src/component/
// admin.ts): the clean-up deletes idle keys, the listing reports every key's state. Pure: the
// caller reads a key's rows and takes and passes the clock.
import { v, type Infer } from "convex/values";
import { evaluate, stateOf } from "../kinds/algebra.js";
import { expandRow, isShardOf, resolvePhase, sameClock, shardParams } from "../shards/layout.js";
import { requestFlow } from "../flow/request.js";
import { answerRead, runPlan, type KeyInMemory } from "../shapes/rows.js";
import type { RateLimitConfig } from "../shapes/validators.js";
import type { StoredRow, Take } from "../shapes/stored.js";

/**
 * isIdleKey reports whether deleting every row of one key (one name and key) changes no decision
 * from `now` (ms) on: whether the key as stored holds exactly what a key with no rows holds, a full
 * limit, at `now` and at every later instant. `rows` are all the key's rows, `pending` the takes
 * recorded for it and not yet applied, `config` the limit's current config and `phase` its
 * fixed-window phase (`resolvePhase`). Idle exactly when all of these hold:
 *
 * - The key has rows (without any it is already "no row") and no pending takes: a take would be
 *   folded into the row it finds, and into a missing (full) one it folds differently.
 * - No row carries the key's own override (its rows are where requests find it; the clean-up
 *   never deletes an override) or a lockout still in force.
 * - Every row is written under the current layout and terms: shard count, kind and, where the row
 *   records them, rate, period and capacity (`sameClock`), on a whole shard number below the shard
 *   count. A row of another layout isn't provably idle: the next request carries it over
 *   (`relayout`), which the clean-up doesn't second-guess; that request rewrites the key under the
 *   current layout, and a later clean-up can then delete it.
 * - Every row is full at `now` (value ≥ its shard's capacity, so no debt either) and its `ts` is
 *   not after `now`. A full row only stays full, and evaluates, like a missing one, to
 *   `{ value: capacity, ts: now }` (a token bucket) or the current window's start (a fixed window)
 *   at every instant from `now` on. A row stamped in the future (clock skew, a carried-over
 *   layout) would hold a later `ts`, so it isn't idle until then.
 *
 * A key's rows are deleted all together or not at all. Its first write creates every shard, so no
 * request on an existing key finds a row missing; deleting only the idle shards would make the
 * next request on each of them look at a sibling row (is the key new, or laid out differently?).
 *
 * Decisions are identical for requests that run after the clean-up commits: any such request on
 * the key read the key's rows, so (optimistic concurrency) it started after the clean-up did,
 * with a clock no earlier than its `now`. That holds while the config stays `config`: a later
 * config change meets a deleted key as a new one, full under the new config, where a kept row
 * would be carried over (`relayout`), which never grants tokens (e.g. a raised capacity starts
 * a kept key at what it held, a deleted one at the new capacity).
 */
export function isIdleKey(
  read: { rows: readonly StoredRow[]; pending: readonly Take[] },
  config: RateLimitConfig,
  phase: number,
  now: number,
): boolean {
  const { pending } = read;
  if (read.rows.length === 0 || pending.length > 0) return false;
  // A key with its own override keeps its rows, which carry it; a locked-out key keeps its lock.
  if (read.rows.some((row) => row.o !== undefined || (row.u !== undefined && row.u > now))) return false;
  const n = config.shards ?? 1;
  // A compact row of other terms stays compact, with no shard count: not idle.
  const rows = read.rows.map((row) => expandRow(row, config, phase));
  return rows.every((row) => {
    if (!isShardOf(row.shard, n) || row.shards !== n) return false;
    const p = shardParams(config, phase, row.shard);
    if (!sameClock(row, p) || !(row.ts <= now)) return false;
    return evaluate(stateOf(row), p, now).value >= p.capacity;
  });
}

/** One key of a limit as the admin listing reports it, evaluated at the query's time. */
export const keyStatusValidator = v.object({
  /** The key; absent for the limit's global (keyless) bucket. */
  key: v.optional(v.string()),
  /** Tokens available now across every shard; negative while tokens are reserved ahead (debt). */
  value: v.number(),
  /** The whole limit's capacity, under the config given. */
  capacity: v.number(),
  /** Whole ms until the key is full again with no other traffic; 0 when it is full now. */
  fullIn: v.number(),
  /** Whether the clean-up would delete the key's rows now (see `isIdleKey`). */
  idle: v.boolean(),
  /** How many rows the key has stored (one per shard). */
  rows: v.number(),
  /** Takes recorded for the key and not yet applied (asynchronous mode), markers of a change of terms included. */
  pending: v.number(),
});
export type KeyStatus = Infer<typeof keyStatusValidator>;

/**
 * keyStatus reports one key at `now` (ms) from all its rows and pending takes: what a peek
 * (`count` 0, with details) would see, so every shard is evaluated exactly as the next request
 * would (a layout change carried over, pending takes folded in), and whether it is idle.
 */
export function keyStatus<Id>(
  name: string,
  key: string | undefined,
  read: KeyInMemory<Id>,
  config: RateLimitConfig,
  now: number,
): KeyStatus {
  const args = { name, ...(key === undefined ? {} : { key }), config, count: 0, details: true };
  // A peek reads every shard of a sharded limit, so its draws never matter.
  const outcome = runPlan(requestFlow<Id>(args, now, () => 0), (q) => answerRead(read, q));
  // `details: true` makes the flow return details (requestFlow).
  const details = outcome.result.details!;
  return {
    ...(key === undefined ? {} : { key }),
    value: details.remaining,
    capacity: details.capacity,
    fullIn: details.resetAfter,
    idle: isIdleKey(read, config, resolvePhase(config, name, key), now),
    rows: read.rows.length,
    pending: read.pending.length,
  };
}
