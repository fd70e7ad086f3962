// Failed logins: a token bucket of 10 an hour per account. A correct password resets it, so only
// wrong guesses count, and an attacker gets ten guesses an hour at any one account.
// #region failedLogins
import { v } from "convex/values";
import { mutation } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";

/**
 * logIn checks a password (a toy check against the `users` table).
 *
 * Throws a `RateLimited` `ConvexError` (`data.retryAfter`, ms) without looking at the password
 * when the account has had ten wrong guesses within the last hour. Otherwise returns
 * `{ ok: true }` for the right password, or `{ ok: false, retryAfter }` for a wrong one, where
 * `retryAfter` (ms) says when the next guess is allowed (absent: right away).
 */
export const logIn = mutation({
  args: { name: v.string(), password: v.string() },
  returns: v.union(
    v.object({ ok: v.literal(true) }),
    v.object({ ok: v.literal(false), retryAfter: v.optional(v.number()) }),
  ),
  handler: async (ctx, { name, password }) => {
    // Before the attempt: refuse outright if this account is out of guesses. `check` takes nothing.
    await rateLimiter.check(ctx, "failedLogins", { key: name, throws: true });
    const user = await ctx.db
      .query("users")
      .withIndex("name", (q) => q.eq("name", name))
      .unique();
    if (user !== null && user.password === password) {
      // Success: forget the earlier wrong guesses.
      await rateLimiter.reset(ctx, "failedLogins", { key: name });
      return { ok: true as const };
    }
    // Failure: count it. Return, don't throw: a throw would roll this mutation back, and the
    // failure with it.
    await rateLimiter.limit(ctx, "failedLogins", { key: name });
    // Tell the client when its next guess is allowed (no retryAfter: right away).
    const { retryAfter } = await rateLimiter.check(ctx, "failedLogins", { key: name });
    return { ok: false as const, retryAfter };
  },
});
// #endregion failedLogins
