// Metrics (README, "Operating limits"): each minute's admitted, reserved and refused requests of a
// limit, and the keys refused most.
// #region metrics
import { ConvexError, v } from "convex/values";
import { HOUR, metricsResult, RateLimiter, rateLimitReturns } from "convex-rate-limiter";
import { components } from "../_generated/api.js";
import { internalMutation, internalQuery, mutation } from "../_generated/server.js";

const rateLimiter = new RateLimiter(components.rateLimiter, {
  downloads: { kind: "token bucket", rate: 100, period: HOUR, metrics: true }, // per user
});

/** download counts one download for the signed-in user. */
export const download = mutation({
  args: {},
  returns: rateLimitReturns,
  handler: async (ctx) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) throw new ConvexError("sign in to download");
    return await rateLimiter.limit(ctx, "downloads", { key: identity.tokenIdentifier });
  },
});

/**
 * foldMetrics sums the events recorded since its last run into per-minute summaries. Run it every
 * minute from convex/crons.ts:
 * `crons.interval("fold rate-limit metrics", { minutes: 1 }, internal.features.metrics.foldMetrics)`.
 */
export const foldMetrics = internalMutation({
  args: {},
  returns: v.null(),
  handler: async (ctx) => {
    await rateLimiter.foldMetrics(ctx);
    return null;
  },
});

/** lastHour returns each minute of the last hour, and the 5 users refused most. Call it from your admin page's query, behind your auth check. */
export const lastHour = internalQuery({
  args: {},
  returns: metricsResult,
  handler: async (ctx) => {
    const now = Date.now();
    return await rateLimiter.metrics(ctx, "downloads", { from: now - HOUR, to: now, topKeys: 5 });
  },
});
// #endregion metrics
