// Dry runs (README, "Dry runs"): a tighter limit tried in shadow mode beside the enforced one.
// #region dryRun
import { ConvexError, v } from "convex/values";
import { MINUTE, RateLimiter } from "convex-rate-limiter";
import { components } from "../_generated/api.js";
import { mutation } from "../_generated/server.js";

const rateLimiter = new RateLimiter(components.rateLimiter, {
  comments: { kind: "token bucket", rate: 10, period: MINUTE }, // enforced: 10 a minute per user
  // On trial: decides and keeps its state as if enforced, admits everyone, and logs each request
  // it would refuse ({"event":"rateLimit.dryRun",…}). Remove `dryRun` to enforce it.
  commentsTighter: { kind: "token bucket", rate: 3, period: MINUTE, dryRun: true },
});

/** comment counts one comment for the signed-in user; throws a `RateLimited` error past 10 a minute. */
export const comment = mutation({
  args: { text: v.string() },
  returns: v.null(),
  handler: async (ctx) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) throw new ConvexError("sign in to comment");
    await rateLimiter.limit(ctx, "comments", { key: identity.tokenIdentifier, throws: true });
    await rateLimiter.limit(ctx, "commentsTighter", { key: identity.tokenIdentifier, throws: true }); // a dry run never refuses
    // Then store the comment in your own table.
    return null;
  },
});
// #endregion dryRun
