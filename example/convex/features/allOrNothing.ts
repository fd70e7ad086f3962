// Several limits, all or nothing (README, "Use a limit"): an upload counts against the user's
// allowance and their team's, both or neither; `checkAll` asks the same without taking.
// #region allOrNothing
import { ConvexError, v } from "convex/values";
import { DAY, RateLimiter } from "convex-rate-limiter";
import { components } from "../_generated/api.js";
import { mutation, query, type QueryCtx } from "../_generated/server.js";

/** What `upload` and `canUpload` return: `ok`, else `retryAfter` ms until both limits would allow it. */
const decision = v.object({ ok: v.boolean(), retryAfter: v.optional(v.number()) });

const rateLimiter = new RateLimiter(components.rateLimiter, {
  uploadsPerUser: { kind: "token bucket", rate: 20, period: DAY },
  uploadsPerTeam: { kind: "fixed window", rate: 100, period: DAY },
});

/** The limits an upload by the signed-in user takes from; their team is a custom claim of their auth token. */
async function uploadLimits(ctx: QueryCtx) {
  const identity = await ctx.auth.getUserIdentity();
  if (identity === null || typeof identity.team !== "string") throw new ConvexError("sign in with a team");
  return [
    { name: "uploadsPerUser", key: identity.tokenIdentifier },
    { name: "uploadsPerTeam", key: identity.team },
  ] as const;
}

/** upload takes one upload from both limits, or from neither. */
export const upload = mutation({
  args: {},
  returns: decision,
  handler: async (ctx) => {
    const { ok, retryAfter } = await rateLimiter.limitAll(ctx, await uploadLimits(ctx));
    // A throw from here on would give both limits their upload back.
    return { ok, retryAfter };
  },
});

/** canUpload decides as `upload` would, taking nothing: for the upload button. */
export const canUpload = query({
  args: {},
  returns: decision,
  handler: async (ctx) => {
    const { ok, retryAfter } = await rateLimiter.checkAll(ctx, await uploadLimits(ctx));
    return { ok, retryAfter };
  },
});
// #endregion allOrNothing
