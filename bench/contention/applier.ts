// The applier loop of asynchronous mode in the contention model, ours (`applier.getBatch`, then
// `applier.applyBatch`) and upstream's worker alike: where the loop stands between iterations, the
// stale snapshot its batch query reads, the batch, and an iteration's transaction. What an
// iteration writes for its batch is each limiter's own (ours.ts, upstream.ts).
import { settledAttempt, type Attempt, type Driver, type ReadCount } from "./engine.js";
import type { ReadEntry, Store, StoreOp, TakeDoc } from "./store.js";

/** Where an applier's loop stands between its iterations: its cursor and its last batch snapshot. */
type ApplierState = { cursor: number; lastSnapshot: number; lastCommit: number };

/**
 * What an applier's iteration writes for its `batch` at `now`: it adds what it reads to `reads`
 * and `count`, and returns the writes (none for an empty batch).
 */
export type ApplyBatch = (batch: readonly TakeDoc[], now: number, reads: ReadEntry[], count: ReadCount) => StoreOp[];

/**
 * batchSnapshot is the snapshot an applier's work query reads (batch-worker runs it with
 * `useStaleSnapshot`): `lag` ms before `now`, but never before the loop's previous snapshot or
 * its previous commit (a loop iteration starts after the previous one committed).
 */
function batchSnapshot(state: ApplierState, now: number, lag: number): number {
  return Math.max(now - lag, state.lastSnapshot, state.lastCommit);
}

/**
 * nextBatch is an applier's batch: up to `batchSize` takes visible at `snapshot` from the cursor
 * on, in commit order (ties by id), as both appliers' snapshot queries read them.
 */
function nextBatch(store: Store, state: ApplierState, snapshot: number, batchSize: number): TakeDoc[] {
  return store
    .takesAt(snapshot)
    .filter((t) => t.insertedAt >= state.cursor)
    .sort((a, b) => a.insertedAt - b.insertedAt || a.id - b.id)
    .slice(0, batchSize);
}

/**
 * applierLoop is an applier over `store` that hasn't run yet, as the engine drives it: each
 * iteration at `now` reads its batch, up to `batchSize` takes from the cursor, on a snapshot `lag`
 * ms stale (see batchSnapshot; one query, no read set), then `apply` writes it. Once the
 * iteration commits, the loop's cursor moves past the batch, as of that snapshot.
 */
export function applierLoop(store: Store, batchSize: number, apply: ApplyBatch): NonNullable<Driver["applier"]> {
  const state: ApplierState = { cursor: -Infinity, lastSnapshot: -Infinity, lastCommit: -Infinity };
  return (now, lag) => {
    const snapshot = batchSnapshot(state, now, lag);
    const count = { queries: 1, dependent: 0 };
    const batch = nextBatch(store, state, snapshot, batchSize);
    const reads: ReadEntry[] = [];
    const ops = apply(batch, now, reads, count);
    const last = batch[batch.length - 1];
    return settledAttempt(now, reads, ops, count, (at) => {
      state.lastSnapshot = snapshot;
      state.lastCommit = at;
      if (last) state.cursor = last.insertedAt;
    });
  };
}
