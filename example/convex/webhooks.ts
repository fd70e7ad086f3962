// Webhooks to a partner who takes at most 10 a minute: an action waits its turn before each call,
// in line with every other call queued for the partner, instead of being refused.
import { v } from "convex/values";
import { internal } from "./_generated/api.js";
import { internalAction, internalMutation } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";

// #region waitUntilAllowed
/**
 * notify calls the partner's webhook for `event` once their limit allows it: it takes its place
 * in line and sleeps until its turn (at most a minute, else it gives up, taking nothing). A real app
 * `fetch`es the partner here; this one records the call. Returns how long it waited (ms), or null
 * when the wait would have been longer than a minute.
 */
export const notify = internalAction({
  args: { event: v.string() },
  returns: v.union(v.number(), v.null()),
  handler: async (ctx, { event }) => {
    const turn = await rateLimiter.waitUntilAllowed(ctx, "partnerWebhooks");
    if (!turn.ok) return null;
    await ctx.runMutation(internal.webhooks.record, { event });
    return turn.waited;
  },
});
// #endregion waitUntilAllowed

/** record notes a webhook call, and when it was made. */
export const record = internalMutation({
  args: { event: v.string() },
  returns: v.null(),
  handler: async (ctx, { event }) => {
    await ctx.db.insert("webhookCalls", { event, at: Date.now() });
    return null;
  },
});
