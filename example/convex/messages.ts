// Chat messages, limited per sender: a token bucket of 10 a minute with bursts of up to 3.
// A signed-in user is limited by their identity, across all their tabs and devices; an anonymous
// visitor by their session ID, as Convex recommends for users who haven't logged in.
// #region messages
import { ConvexError, v } from "convex/values";
import { query, type QueryCtx } from "./_generated/server.js";
import type { DataModel } from "./_generated/dataModel.js";
import { rateLimiter } from "./limits.js";
import { sessionMutation } from "./sessions.js";

/** The most characters a message may have. */
const MAX_LENGTH = 1000;

/**
 * senderKey names whose bucket a message comes out of: the signed-in user, else the session.
 * The prefixes keep the two apart, so no session ID can pose as a user's ID.
 */
async function senderKey(ctx: QueryCtx, sessionId: string | undefined): Promise<string> {
  const identity = await ctx.auth.getUserIdentity();
  if (identity !== null) return `user:${identity.tokenIdentifier}`;
  if (sessionId !== undefined) return `session:${sessionId}`;
  throw new ConvexError("sign in, or send a session ID");
}

/**
 * send posts a message. Throws a `RateLimited` `ConvexError` (`data.retryAfter`, ms) when the
 * sender is out of tokens: three may go at once, then one every six seconds.
 */
export const send = sessionMutation({
  args: { body: v.string() },
  returns: v.id("messages"),
  handler: async (ctx, { body }) => {
    if (body.length === 0 || body.length > MAX_LENGTH) {
      throw new ConvexError(`a message has 1 to ${MAX_LENGTH} characters`);
    }
    const author = await senderKey(ctx, ctx.sessionId);
    await rateLimiter.limit(ctx, "sendMessage", { key: author, throws: true });
    return await ctx.db.insert("messages", { author, body });
  },
});

/** list returns the latest messages, newest first. */
export const list = query({
  args: { limit: v.optional(v.number()) },
  returns: v.array(
    v.object({ _id: v.id("messages"), _creationTime: v.number(), author: v.string(), body: v.string() }),
  ),
  handler: async (ctx, args) => {
    return await ctx.db.query("messages").order("desc").take(Math.min(args.limit ?? 20, 100));
  },
});

// #region hookAPI
/**
 * The functions the chat box's `useRateLimit(api.messages.getRateLimit, { key: sessionId })`
 * subscribes to, to show when the next message may go. The server picks the key with the same
 * `senderKey` that `send` is limited by; the key a client sends is only taken as its session ID.
 */
export const { getRateLimit, getServerTime } = rateLimiter.hookAPI<DataModel>("sendMessage", {
  key: senderKey,
});
// #endregion hookAPI
// #endregion messages
