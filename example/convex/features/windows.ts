// Sliding windows (README, "The strategies"): the exact one, never more than `rate` in any window,
// and the approximate one (`exact: false`), constant in size at any rate.
// #region windows
import { ConvexError, v } from "convex/values";
import { HOUR, MINUTE, RateLimiter, rateLimitReturns } from "convex-rate-limiter";
import { components } from "../_generated/api.js";
import { internalMutation, mutation } from "../_generated/server.js";

const rateLimiter = new RateLimiter(components.rateLimiter, {
  // Exact: never more than 100 emails in any hour; each email's slot comes back an hour after it
  // (a few ms later at most once the row's log is compacted, past 32 entries: never sooner).
  emails: { kind: "sliding window", rate: 100, period: HOUR },
  // Approximate: 600 searches a minute per user, weighing the previous minute's count by how much of
  // it the window still covers; requests bunched at a minute's end can let up to 2 × 600 − 1
  // through in some minute.
  searches: { kind: "sliding window", rate: 600, period: MINUTE, exact: false },
});

/** sendEmail takes one of the app's 100 emails an hour; throws a `RateLimited` error when none is left. */
export const sendEmail = internalMutation({
  args: { to: v.string() },
  returns: v.null(),
  handler: async (ctx) => {
    await rateLimiter.limit(ctx, "emails", { throws: true });
    // Then schedule the action that sends it.
    return null;
  },
});

/** search counts one search for the signed-in user. */
export const search = mutation({
  args: {},
  returns: rateLimitReturns,
  handler: async (ctx) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) throw new ConvexError("sign in to search");
    return await rateLimiter.limit(ctx, "searches", { key: identity.tokenIdentifier });
  },
});
// #endregion windows
