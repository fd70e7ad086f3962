// Overrides and tiers (README, "Overrides, blocks and lockouts"): a "pro" tier with ten times the
// free plan's exports, and one user's own terms, set at runtime without a deploy.
// #region tiers
import { ConvexError, v } from "convex/values";
import { HOUR, RateLimiter, rateLimitReturns } from "convex-rate-limiter";
import { components } from "../_generated/api.js";
import { internalMutation, mutation } from "../_generated/server.js";

const rateLimiter = new RateLimiter(components.rateLimiter, {
  exports: { kind: "token bucket", rate: 5, period: HOUR }, // the free plan: 5 an hour per user
});

/** exportData counts one export for the signed-in user, under the terms of their plan. */
export const exportData = mutation({
  args: {},
  returns: rateLimitReturns,
  handler: async (ctx) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) throw new ConvexError("sign in to export");
    // The plan is a custom claim of the user's auth token here; or read it from your own table.
    const tier = identity.plan === "pro" ? "pro" : undefined;
    return await rateLimiter.limit(ctx, "exports", { key: identity.tokenIdentifier, tier });
  },
});

/**
 * setTerms puts the "pro" tier's terms in force (50 exports an hour), and `user`'s own, which
 * beat their tier's. Run it from the dashboard or `npx convex run`; nothing is granted by it: a
 * key's next request carries its tokens over.
 */
export const setTerms = internalMutation({
  args: { user: v.string(), perHour: v.number() },
  returns: v.null(),
  handler: async (ctx, { user, perHour }) => {
    await rateLimiter.setOverride(ctx, "exports", { tier: "pro" }, { config: { kind: "token bucket", rate: 50, period: HOUR } });
    const terms = { kind: "token bucket", rate: perHour, period: HOUR } as const;
    await rateLimiter.setOverride(ctx, "exports", { key: user }, { config: terms }, { note: "their contract" });
    return null;
  },
});
// #endregion tiers
