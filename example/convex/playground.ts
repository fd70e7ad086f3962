// PLAYGROUND ONLY. Here clients choose the limit's config, which no real limit should allow: a
// client could give itself any rate it likes. It backs the example UI's Playground and Monitor,
// where visitors try configs and watch the decisions. Real limits are in limits.ts.
//
// What keeps it contained: every call uses the name "playground" (or, for the hook query, a name
// the client picks) with a key the server prefixes with "playground:", so it never touches
// another limit's state.
import { v } from "convex/values";
import { configValidator, MINUTE, type RateLimitConfig } from "convex-rate-limiter";
import { mutation } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";

/** The config the playground starts with, until a client sends its own. */
const defaultConfig: RateLimitConfig = { kind: "token bucket", rate: 10, period: MINUTE, capacity: 5 };

/** The key a playground client's requests use: its own lane, chosen by the client. */
function laneKey(lane: string | undefined): string {
  return `playground:${lane ?? "shared"}`;
}

// #region playgroundHook
/** The hook functions for the playground: `allowClientConfig` lets the UI send its own config. */
export const { getRateLimit, getServerTime } = rateLimiter.hookAPI("playground", {
  config: defaultConfig,
  allowClientConfig: true,
  key: (_ctx, lane) => laneKey(lane),
});
// #endregion playgroundHook

/**
 * request fires one request at the playground limit with the client's config, and returns the
 * decision with the server time it was made at (`at`, ms).
 */
export const request = mutation({
  args: {
    lane: v.optional(v.string()),
    config: configValidator,
    count: v.optional(v.number()),
    reserve: v.optional(v.boolean()),
  },
  returns: v.object({
    ok: v.boolean(),
    retryAfter: v.optional(v.number()),
    shards: v.optional(v.array(v.number())),
    at: v.number(),
  }),
  handler: async (ctx, args) => {
    const { details, ...decision } = await rateLimiter.limit(ctx, "playground", {
      key: laneKey(args.lane),
      config: args.config,
      count: args.count,
      reserve: args.reserve,
      details: true,
    });
    return { ...decision, shards: details.shards, at: Date.now() };
  },
});

/** reset empties a playground lane's state: its next request finds the limit full. */
export const reset = mutation({
  args: { lane: v.optional(v.string()), config: configValidator },
  returns: v.null(),
  handler: async (ctx, args) => {
    await rateLimiter.reset(ctx, "playground", { key: laneKey(args.lane), config: args.config });
    return null;
  },
});
