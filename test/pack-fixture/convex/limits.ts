// A tiny app module that limits sends with the installed package's RateLimiter.
import { mutationGeneric, queryGeneric } from "convex/server";
import { v } from "convex/values";
import { MINUTE, RateLimiter } from "convex-rate-limiter";
import { components } from "./_generated/api.js";

export const rateLimiter = new RateLimiter(components.rateLimiter, {
  // Two sends a minute per user, so the third within a minute waits 30 s.
  send: { kind: "token bucket", rate: 2, period: MINUTE },
});

const result = v.union(
  v.object({ ok: v.literal(true) }),
  v.object({ ok: v.literal(false), retryAfter: v.number() }),
);

/** send consumes one of the user's sends. */
export const send = mutationGeneric({
  args: { user: v.string() },
  returns: result,
  handler: async (ctx, { user }) => {
    const status = await rateLimiter.limit(ctx, "send", { key: user });
    return status.ok ? { ok: true as const } : { ok: false as const, retryAfter: status.retryAfter };
  },
});

/** canSend says whether a send would pass now, without consuming one. */
export const canSend = queryGeneric({
  args: { user: v.string() },
  returns: result,
  handler: async (ctx, { user }) => {
    const status = await rateLimiter.check(ctx, "send", { key: user });
    return status.ok ? { ok: true as const } : { ok: false as const, retryAfter: status.retryAfter };
  },
});
