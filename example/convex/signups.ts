// Free-trial sign-ups: one global fixed window (no key) caps how many accounts are created per
// hour across the whole app.
// #region freeTrialSignUp
import { ConvexError, v } from "convex/values";
import { mutation } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";

/**
 * signUp creates a free-trial account. Refused with a `RateLimited` `ConvexError` (its
 * `data.retryAfter` is in ms) once this hour's sign-ups are used up, and with a plain
 * `ConvexError` when the name is taken.
 */
export const signUp = mutation({
  args: { name: v.string(), password: v.string() },
  returns: v.id("users"),
  handler: async (ctx, { name, password }) => {
    // No key: one window shared by everyone. `throws` ends the mutation when it's used up.
    await rateLimiter.limit(ctx, "freeTrialSignUp", { throws: true });
    const existing = await ctx.db
      .query("users")
      .withIndex("name", (q) => q.eq("name", name))
      .unique();
    // Throwing rolls the whole mutation back, so a refused sign-up doesn't use up the window.
    if (existing) throw new ConvexError(`the name ${name} is taken`);
    return await ctx.db.insert("users", { name, password });
  },
});
// #endregion freeTrialSignUp
