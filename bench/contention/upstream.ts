// Upstream's limiter under test in the contention model: @convex-dev/rate-limiter 0.4.0's own
// decision code, driven by the engine (engine.ts) under the same arrivals and seed as ours.
// - Transactional: `checkRateLimitOrThrow` (component/internal.ts) over a fake database reader
//   that serves the model's store at the transaction's snapshot and records the read set; its
//   updates are patched or inserted as `lib.rateLimit` does.
// - Asynchronous (unsharded only: upstream refuses a sharded asynchronous limit): the client's
//   `limit` runs `checkRateLimit` on a stale snapshot (no read set), and when it admits, enqueues
//   a pending update (an insert); there is no exact fallback. Its worker (`worker.processBatch`)
//   reads the batch on a stale snapshot, then the row, folds the updates with upstream's own
//   `calculateRateLimit`, writes the row and deletes the updates.
// Upstream reads `Date.now()` and `Math.random()` inside; both are set for the call and restored.
// Upstream's sources are imported by path: its package exports don't name them.
import { checkRateLimitOrThrow } from "../../node_modules/@convex-dev/rate-limiter/src/component/internal.js";
import type { DatabaseReader } from "../../node_modules/@convex-dev/rate-limiter/src/component/_generated/server.js";
import {
  calculateRateLimit,
  SINGLETON_SHARD,
  type RateLimitArgs as UpstreamArgs,
} from "../../node_modules/@convex-dev/rate-limiter/src/shared.js";
import type { RateLimitConfig } from "../../src/shared/shapes/validators.js";
import type { ApplyBatch } from "./applier.js";
import type { Attempt, ReadCount } from "./engine.js";
import type { ReadEntry, Store, StoreOp } from "./store.js";

/** upstreamConfig is our config as upstream takes it (the same fields; `shards` left out when 1). */
export function upstreamConfig(config: RateLimitConfig): UpstreamArgs["config"] {
  const { kind, rate, period, capacity, shards, applyUpdates } = config;
  if (kind !== "token bucket") throw new Error("the model drives token buckets only");
  return {
    kind,
    rate,
    period,
    ...(capacity === undefined ? {} : { capacity }),
    ...(shards === undefined || shards === 1 ? {} : { shards }),
    ...(applyUpdates === undefined ? {} : { applyUpdates }),
  };
}

/** Runs `f` with `Date.now()` at `now` and `Math.random` drawing from `random`, then restores both. */
async function withGlobals<T>(now: number, random: () => number, f: () => Promise<T>): Promise<T> {
  const [dateNow, mathRandom] = [Date.now, Math.random];
  Date.now = () => now;
  Math.random = random;
  try {
    return await f();
  } finally {
    Date.now = dateNow;
    Math.random = mathRandom;
  }
}

type IndexRange = { shard?: number };

/**
 * fakeDb is the `DatabaseReader` upstream's decision code needs: `query("rateLimits")
 * .withIndex("name", eq name, key[, shard])` then `.unique()`, `.first()` or `.collect()`,
 * answered from `store` at `snapshot` (one key: name and key aren't checked). Each query issued
 * counts once and, unless `readSet` is null (a stale snapshot), joins the read set as the index
 * range it covers.
 */
export function fakeDb(store: Store, snapshot: number, readSet: ReadEntry[] | null, count: ReadCount): DatabaseReader {
  const run = (range: IndexRange) => {
    const lo = range.shard ?? -Infinity;
    const hi = range.shard ?? Infinity;
    count.queries++;
    if (readSet) {
      readSet.push({ table: "rows", lo, hi });
      count.dependent++;
    }
    return store.rowsAt(snapshot, lo, hi).map((r) => ({ _id: r.id, _creationTime: 0, name: "", shard: r.shard, value: r.value, ts: r.ts }));
  };
  const db = {
    query(table: string) {
      if (table !== "rateLimits") throw new Error(`the fake database has no table ${table}`);
      return {
        withIndex(index: string, build: (q: { eq(field: string, value: unknown): unknown }) => unknown) {
          if (index !== "name") throw new Error(`the fake database has no index ${index}`);
          const range: IndexRange = {};
          const q = {
            eq(field: string, value: unknown) {
              if (field === "shard") range.shard = Number(value);
              return q;
            },
          };
          build(q);
          return {
            unique: async () => {
              const docs = run(range);
              if (docs.length > 1) throw new Error("unique() found more than one row");
              return docs[0] ?? null;
            },
            first: async () => run(range)[0] ?? null,
            collect: async () => run(range),
          };
        },
      };
    },
  };
  // Only the calls upstream's decision code makes are implemented; the cast is the boundary.
  return db as unknown as DatabaseReader;
}

/**
 * upstreamTransactional is one attempt of upstream's `lib.rateLimit`: `checkRateLimitOrThrow` on
 * the transaction's own snapshot, then each update patched (existing row) or inserted.
 */
export async function upstreamTransactional(
  store: Store,
  args: UpstreamArgs,
  now: number,
  random: () => number,
): Promise<Attempt> {
  const reads: ReadEntry[] = [];
  const count = { queries: 0, dependent: 0 };
  const { status, updates } = await withGlobals(now, random, () => checkRateLimitOrThrow(fakeDb(store, now, reads, count), args));
  const ops = updates.map(({ existing, value, ts, shard }): StoreOp =>
    existing ? { op: "patchRow", id: existing._id as unknown as number, fields: { value, ts } } : { op: "insertRow", shard, fields: { value, ts } },
  );
  return { snapshot: now, now, reads, ops, count, outcome: status.ok ? "admitted" : "refused", decidedOn: "current" };
}

/**
 * upstreamAsynchronous is one attempt of upstream's client `limit` with `applyUpdates:
 * "asynchronously"`: `checkRateLimit` on a snapshot `lag` ms old (no read set); refused, nothing
 * is written; admitted, one pending update is inserted (`enqueueUpdates`). No exact fallback.
 */
export async function upstreamAsynchronous(
  store: Store,
  args: UpstreamArgs,
  now: number,
  lag: number,
  random: () => number,
): Promise<Attempt> {
  const count = { queries: 0, dependent: 0 };
  const { status } = await withGlobals(now, random, () => checkRateLimitOrThrow(fakeDb(store, now - lag, null, count), args));
  const ops: StoreOp[] = status.ok ? [{ op: "insertTake", shard: SINGLETON_SHARD, count: args.count ?? 1, ts: now }] : [];
  return { snapshot: now, now, reads: [], ops, count, outcome: status.ok ? "admitted" : "refused", decidedOn: "stale" };
}

/**
 * upstreamApplyBatch is what one iteration of upstream's worker (`worker.processBatch`) writes for
 * its batch at `now`: the singleton row read (`getShard`), each update folded in at
 * `max(update.ts, row ts)` with upstream's `calculateRateLimit`, the row written and the updates
 * deleted. The loop around it (`worker.getBatch` on a stale snapshot) is applier.ts's.
 */
export function upstreamApplyBatch(store: Store, config: UpstreamArgs["config"]): ApplyBatch {
  return (batch, now, reads, count) => {
    // The model keeps the batch snapshot after the previous iteration's commit, so the batch holds
    // no update already deleted (upstream would throw deleting one: it doesn't check).
    if (batch.length === 0) return [];
    reads.push({ table: "rows", lo: SINGLETON_SHARD, hi: SINGLETON_SHARD });
    count.queries++;
    count.dependent++;
    const existing = store.rowsAt(now, SINGLETON_SHARD, SINGLETON_SHARD)[0] ?? null;
    let next: { value: number; ts: number } | null = existing && { value: existing.value, ts: existing.ts };
    for (const u of batch) {
      const at = Math.max(u.ts, next?.ts ?? u.ts, existing?.ts ?? u.ts);
      const { value, ts } = calculateRateLimit(next, config, at, u.count);
      next = { value, ts };
    }
    return [
      existing && next
        ? { op: "patchRow", id: existing.id, fields: next }
        : { op: "insertRow", shard: SINGLETON_SHARD, fields: next! },
      ...batch.map((t): StoreOp => ({ op: "deleteTake", id: t.id })),
    ];
  };
}
