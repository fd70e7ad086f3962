// Blocks and lockouts (README, "Overrides, blocks and lockouts"): an account locked for a day by
// its tenth wrong password in an hour, and an admin's block of an account until an instant.
// #region blocks
import { v } from "convex/values";
import { DAY, HOUR, RateLimiter, rateLimitReturns } from "convex-rate-limiter";
import { components } from "../_generated/api.js";
import { internalMutation, query } from "../_generated/server.js";

const rateLimiter = new RateLimiter(components.rateLimiter, {
  // Ten wrong passwords an hour per account; the one that leaves less than one locks it for a day.
  wrongPasswords: { kind: "token bucket", rate: 10, period: HOUR, lockout: DAY },
});

/** mayTry says whether `account` may try a password now; if not, `retryAfter` ms from now. */
export const mayTry = query({
  args: { account: v.string() },
  returns: rateLimitReturns,
  handler: async (ctx, { account }) => await rateLimiter.check(ctx, "wrongPasswords", { key: account }),
});

/** wrongPassword counts a wrong password for `account`: call it from your sign-in mutation. */
export const wrongPassword = internalMutation({
  args: { account: v.string() },
  returns: rateLimitReturns,
  handler: async (ctx, { account }) => await rateLimiter.limit(ctx, "wrongPasswords", { key: account }),
});

/** block refuses every attempt on `account` for `days` days, whatever its count; unblock ends it. */
export const block = internalMutation({
  args: { account: v.string(), days: v.number() },
  returns: v.null(),
  handler: async (ctx, { account, days }) => {
    const until = Date.now() + days * DAY;
    await rateLimiter.setOverride(ctx, "wrongPasswords", { key: account }, { blockedUntil: until }, { note: "abuse" });
    return null;
  },
});
export const unblock = internalMutation({
  args: { account: v.string() },
  returns: v.boolean(),
  handler: async (ctx, { account }) => await rateLimiter.removeOverride(ctx, "wrongPasswords", { key: account }),
});
// #endregion blocks
