// A hot global limit: every API call in the app takes from one limit. One row written by every
// request would make concurrent mutations conflict, so the limit is split over 10 shards (see
// `apiCalls` in limits.ts); each call reads one shard, or two when the first runs low.
import { v } from "convex/values";
import { mutation } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";

/**
 * call stands for one call to a metered API. Throws a `RateLimited` `ConvexError`
 * (`data.retryAfter`, ms) when the shards it read are out of tokens; `retryAfter` is computed from
 * those shards, and a retry may land on others.
 */
export const call = mutation({
  args: {},
  returns: v.null(),
  handler: async (ctx) => {
    // #region apiCalls
    // No key and no shard to pick: the limiter chooses the shards itself.
    await rateLimiter.limit(ctx, "apiCalls", { throws: true });
    // #endregion apiCalls
    return null;
  },
});

