// The registered functions of concurrency limits: thin loops over the store. Every decision
// (validation, what counts as in flight, what to write, whether to throw) is a pure flow in
// src/shared/flow/concurrency.ts; a handler answers its reads and executes what it returns.
import { ConvexError, v } from "convex/values";
import { acquireFlow, extendFlow, leaseValueFlow, releaseFlow } from "../shared/flow/concurrency.js";
import { runPlanAsync } from "../shared/shapes/rows.js";
import { invalid, validateNameAndKey } from "../shared/validation/validate.js";
import { rateLimitReturns } from "../shared/shapes/validators.js";
import { acquireArgs, acquireCallResult, extendArgs, extendResult, leaseValueArgs, leaseValueResult, type AcquireCallResult } from "../shared/shapes/concurrency-validators.js";
import type { Id } from "./_generated/dataModel.js";
import { mutation, query } from "./_generated/server.js";
import { recordMetric } from "./metrics.js";
import { deleteExpiredLeases, deleteLeases, insertLease, readLeases, writeLeases } from "./store.js";

/** The most expired leases `deleteExpired` deletes per transaction, and its default. */
const MAX_BATCH = 4000;
const DEFAULT_BATCH = 500;

/**
 * Acquires a slot of a concurrency limit for `key`: see `RateLimiter.acquire`. Reads the key's
 * unexpired leases and inserts one when fewer than `capacity` are held; the inserted document's id
 * is the lease's handle. Refused: writes nothing (or throws `RateLimited` with `throws`).
 */
export const acquire = mutation({
  args: acquireArgs,
  returns: acquireCallResult,
  handler: async (ctx, args): Promise<AcquireCallResult> => {
    const now = Date.now();
    const outcome = await runPlanAsync(acquireFlow<Id<"leases">>(args, now), (q) => readLeases(ctx.db, q));
    if (!outcome.ok && outcome.raise && !outcome.raise.inCaller) throw new ConvexError(outcome.raise.error);
    if (outcome.event) await recordMetric(ctx.db, args, outcome.event, now);
    if (!outcome.ok) return { ok: false, retryAfter: outcome.retryAfter, ...(outcome.raise ? { error: outcome.raise.error } : {}) };
    const lease = await insertLease(ctx.db, outcome.insert);
    return { ok: true, lease, expiresAt: outcome.expiresAt };
  },
});

/** Decides an acquire exactly as `acquire` would at this instant, holding nothing: `{ ok }` or `{ ok: false, retryAfter }`. */
export const check = query({
  args: acquireArgs,
  returns: rateLimitReturns,
  handler: async (ctx, args) => {
    const outcome = await runPlanAsync(acquireFlow<Id<"leases">>(args, Date.now()), (q) => readLeases(ctx.db, q));
    if (outcome.ok) return { ok: true as const };
    if (outcome.raise) throw new ConvexError(outcome.raise.error);
    return { ok: false as const, retryAfter: outcome.retryAfter };
  },
});

/**
 * Releases a lease: its slot is free at once. Idempotent and harmless for an unknown, malformed,
 * expired or already released handle. `released` is true when this call freed a slot.
 */
export const release = mutation({
  args: { lease: v.string() },
  returns: v.object({ released: v.boolean() }),
  handler: async (ctx, args) => {
    const { released, ops } = await runPlanAsync(releaseFlow<Id<"leases">>(args.lease, Date.now()), (q) => readLeases(ctx.db, q));
    await writeLeases(ctx.db, ops);
    return { released };
  },
});

/** Extends an unexpired lease to `by` ms from now (default its own length); see `extendFlow`. */
export const extend = mutation({
  args: extendArgs,
  returns: extendResult,
  handler: async (ctx, args) => {
    const { result, ops } = await runPlanAsync(extendFlow<Id<"leases">>(args.lease, args.by, Date.now()), (q) => readLeases(ctx.db, q));
    await writeLeases(ctx.db, ops);
    return result;
  },
});

/** Reads a concurrency limit's state now: leases in flight, capacity and the earliest expiry. */
export const getValue = query({
  args: leaseValueArgs,
  returns: leaseValueResult,
  handler: async (ctx, args) => runPlanAsync(leaseValueFlow<Id<"leases">>(args, Date.now()), (q) => readLeases(ctx.db, q)),
});

/** Removes every lease of a name and key, held or not: every slot is free at once. */
export const reset = mutation({
  args: { name: v.string(), key: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, args) => {
    validateNameAndKey(args.name, args.key);
    await deleteLeases(ctx.db, args);
    return null;
  },
});

/**
 * Deletes up to `batchSize` leases that have expired (default 500, at most 4000), of any name:
 * clean-up of what crashed holders left. They count for nothing already; this only frees storage.
 * `done` is false when there may be more (call again).
 */
export const deleteExpired = mutation({
  args: { batchSize: v.optional(v.number()) },
  returns: v.object({ deleted: v.number(), done: v.boolean() }),
  handler: async (ctx, args) => {
    const batch = args.batchSize ?? DEFAULT_BATCH;
    if (!(Number.isInteger(batch) && batch >= 1 && batch <= MAX_BATCH)) {
      throw invalid("batchSize", batch, `must be a whole number from 1 to ${MAX_BATCH}`);
    }
    const deleted = await deleteExpiredLeases(ctx.db, Date.now(), batch);
    return { deleted, done: deleted < batch };
  },
});
