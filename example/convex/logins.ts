// Sign-in, limited per address and per account. Per address (signInsPerAddress): every attempt,
// right or wrong, 100 an hour from one address, then the address is banned for a day; its
// network's entries (allow and deny lists) apply first. Per account (failedLogins): a token bucket
// of 10 wrong guesses an hour, with a lockout of a day. A correct password resets it, so only
// wrong guesses count; the wrong guess that leaves less than one locks the account for a day, so
// an attacker gets ten quick guesses at any one account, then none for a day.
// #region failedLogins
import { v } from "convex/values";
import { mutation } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";

/**
 * logIn checks a password (a toy check against the `users` table).
 *
 * Throws a `RateLimited` `ConvexError` (`data.retryAfter`, ms) without looking at the password
 * while the address is banned or its network blocked (`data.name`: "signInsPerAddress"), or the
 * account is locked (for a day from the wrong guess that left it less than one guess, or by an
 * admin's block). Otherwise returns `{ ok: true }` for the right password, or `{ ok: false,
 * retryAfter }` for a wrong one, where `retryAfter` (ms) says when the next guess is allowed
 * (absent: right away; a day after the guess that locked the account).
 */
export const logIn = mutation({
  args: { name: v.string(), password: v.string() },
  returns: v.union(
    v.object({ ok: v.literal(true) }),
    v.object({ ok: v.literal(false), retryAfter: v.optional(v.number()) }),
  ),
  handler: async (ctx, { name, password }) => {
    // #region perAddress
    // Per address first: a banned address (or blocked network) learns nothing about accounts.
    // Server-to-server calls have no address; they share one key.
    const address = await rateLimiter.requestKey(ctx, { by: "ip", fallback: "no address" });
    await rateLimiter.limit(ctx, "signInsPerAddress", { key: address, throws: true });
    // #endregion perAddress
    // Before the attempt: refuse outright if this account is locked. `check` takes nothing.
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
    // Failure: count it (the guess that leaves less than one locks the account). Return, don't
    // throw: a throw would roll this mutation back, and the failure and the lock with it.
    await rateLimiter.limit(ctx, "failedLogins", { key: name });
    // Tell the client when its next guess is allowed (no retryAfter: right away; locked: the
    // lock's end).
    const { retryAfter } = await rateLimiter.check(ctx, "failedLogins", { key: name });
    return { ok: false as const, retryAfter };
  },
});
// #endregion failedLogins
