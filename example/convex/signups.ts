// Free-trial sign-ups: one global fixed window (no key) caps how many accounts are created per
// hour across the whole app.
//
// `signUp` creates an account. It throws a `RateLimited` `ConvexError` (its `data.retryAfter` is in
// ms) once this hour's sign-ups are used up, and a plain `ConvexError` when the name is taken. The
// limit is taken first: throwing rolls the whole mutation back, so a sign-up refused for a taken
// name doesn't use up the window.
//
// `getRateLimit` and `getServerTime` are what the sign-up button's `useRateLimit` reads
// (src/live/SignUpButton.tsx) to count down to the next window while sign-ups are full. They read
// the one global window: no key, so a client can't ask for another.
// #region signUp
import { ConvexError, v } from "convex/values";
import { mutation } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";

export const signUp = mutation({
  args: { name: v.string(), password: v.string() },
  returns: v.id("users"),
  handler: async (ctx, { name, password }) => {
    await rateLimiter.limit(ctx, "freeTrialSignUp", { throws: true });
    const taken = await ctx.db.query("users").withIndex("name", (q) => q.eq("name", name)).unique();
    if (taken !== null) throw new ConvexError(`the name ${name} is taken`);
    return await ctx.db.insert("users", { name, password });
  },
});
export const { getRateLimit, getServerTime } = rateLimiter.hookAPI("freeTrialSignUp");
// #endregion signUp
