// Calendar quotas (README, "Calendar quotas"): an LLM plan of 1,000 messages a month per user, from
// each user's billing day at midnight in their own time zone, taken together with 10 a minute
// through limitAll; `resetsAt` says when the month's allowance comes back.
// #region calendar
import { ConvexError, v } from "convex/values";
import { MINUTE, RateLimiter } from "convex-rate-limiter";
import { components } from "../_generated/api.js";
import { internalMutation, mutation, query } from "../_generated/server.js";

const rateLimiter = new RateLimiter(components.rateLimiter, {
  messagesPerMinute: { kind: "token bucket", rate: 10, period: MINUTE },
  // The plan: 1,000 a month, from the 1st at midnight UTC until a user's own cycle is set.
  messagesPerMonth: { kind: "calendar", rate: 1000, period: "month" },
});

/** sendMessage counts one message for the signed-in user against both limits, or neither. */
export const sendMessage = mutation({
  args: {},
  returns: v.object({ ok: v.boolean(), retryAfter: v.optional(v.number()), resetsAt: v.optional(v.number()) }),
  handler: async (ctx) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) throw new ConvexError("sign in to send messages");
    const user = identity.tokenIdentifier;
    const { ok, retryAfter, results } = await rateLimiter.limitAll(ctx, [
      { name: "messagesPerMinute", key: user },
      { name: "messagesPerMonth", key: user },
    ]);
    // The month's end, in the user's cycle: "1,000 more on 17 March".
    return { ok, retryAfter, resetsAt: results[1]?.resetsAt };
  },
});

/**
 * setBillingCycle starts `user`'s months on their subscription's day of the month (1 to 31; 31 is
 * each month's last day), at midnight in their IANA time zone. Call it when they subscribe; it
 * grants nothing: what they used this month counts until the month they were in ends.
 */
export const setBillingCycle = internalMutation({
  args: { user: v.string(), day: v.number(), timeZone: v.string() },
  returns: v.null(),
  handler: async (ctx, { user, day, timeZone }) => {
    const month = { kind: "calendar", rate: 1000, period: "month", anchor: day, timeZone } as const;
    await rateLimiter.setOverride(ctx, "messagesPerMonth", { key: user }, { config: month }, { note: "billing cycle" });
    return null;
  },
});

/** quota says how many messages the signed-in user has left this month, and when it resets (UTC ms). */
export const quota = query({
  args: {},
  returns: v.object({ left: v.number(), resetsAt: v.optional(v.number()) }),
  handler: async (ctx) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) throw new ConvexError("sign in to see your quota");
    const { value, resetsAt } = await rateLimiter.getValue(ctx, "messagesPerMonth", { key: identity.tokenIdentifier });
    return { left: value, resetsAt };
  },
});
// #endregion calendar
