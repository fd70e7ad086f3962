// Concurrency leases (README, "Concurrency limits"): at most 2 exports running per user, each
// holding a slot from `acquire` until its action `release`s it, or its lease runs out.
// #region leases
import { ConvexError, v } from "convex/values";
import { MINUTE, RateLimiter } from "convex-rate-limiter";
import { internal, components } from "../_generated/api.js";
import { internalAction, mutation } from "../_generated/server.js";

const rateLimiter = new RateLimiter(components.rateLimiter, {
  // A crashed export's slot frees itself 10 minutes after it was taken.
  runningExports: { kind: "concurrency", capacity: 2, lease: 10 * MINUTE },
});

/** startExport takes one of the signed-in user's 2 slots and runs the export; refused while both are held. */
export const startExport = mutation({
  args: {},
  returns: v.union(v.object({ ok: v.literal(true) }), v.object({ ok: v.literal(false), retryAfter: v.number() })),
  handler: async (ctx) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) throw new ConvexError("sign in to export");
    const slot = await rateLimiter.acquire(ctx, "runningExports", { key: identity.tokenIdentifier });
    if (!slot.ok) return { ok: false as const, retryAfter: slot.retryAfter };
    // If this mutation failed from here on, the slot would be rolled back with it.
    await ctx.scheduler.runAfter(0, internal.features.leases.runExport, { lease: slot.lease });
    return { ok: true as const };
  },
});

/** runExport does the work, then gives the slot back, whatever happened. */
export const runExport = internalAction({
  args: { lease: v.string() },
  returns: v.null(),
  handler: async (ctx, { lease }) => {
    try {
      // The export's work goes here; past 10 minutes, keep the slot with `rateLimiter.extend(ctx, lease)`.
    } finally {
      await rateLimiter.release(ctx, lease); // idempotent: a second release is harmless
    }
    return null;
  },
});
// #endregion leases
