// Several limits in one mutation, taken all or nothing: each invitation counts against the
// sender's own allowance (20 a day) and against the app's outgoing email budget (100 an hour).
// A request that either limit refuses takes nothing from the other.
import { ConvexError, v } from "convex/values";
import { mutation } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";

/**
 * send invites `emails` on behalf of the signed-in user. Returns `{ ok: true }`, or
 * `{ ok: false, retryAfter }` when either limit refuses, where after `retryAfter` ms both would
 * allow it (if nothing else takes their tokens meanwhile). Throws a `ConvexError` when someone
 * was already invited by this user, and then nothing is taken from either limit.
 */
export const send = mutation({
  args: { emails: v.array(v.string()) },
  returns: v.union(
    v.object({ ok: v.literal(true) }),
    v.object({ ok: v.literal(false), retryAfter: v.number() }),
  ),
  handler: async (ctx, { emails }) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) throw new ConvexError("sign in to send invitations");
    const from = identity.tokenIdentifier;
    const count = emails.length;
    // #region allOrNothing
    // 1. Check every limit without taking anything, so a refusal leaves all of them untouched.
    const checks = [
      await rateLimiter.check(ctx, "invitesPerUser", { key: from, count }),
      await rateLimiter.check(ctx, "outboundEmails", { count }),
    ];
    const waits = checks.flatMap((c) => (c.ok ? [] : [c.retryAfter]));
    if (waits.length > 0) return { ok: false as const, retryAfter: Math.max(...waits) };
    // 2. Take them all. Should one refuse after all (a sharded limit may read other shards than its
    // check did), `throws` ends the mutation and rolls back the ones already taken.
    await rateLimiter.limit(ctx, "invitesPerUser", { key: from, count, throws: true });
    await rateLimiter.limit(ctx, "outboundEmails", { count, throws: true });
    // #endregion allOrNothing
    for (const email of emails) {
      const existing = await ctx.db
        .query("invites")
        .withIndex("from_email", (q) => q.eq("from", from).eq("email", email))
        .first();
      // Any throw after the limits were taken gives their tokens back with the rest.
      if (existing !== null) throw new ConvexError(`${email} was already invited`);
      await ctx.db.insert("invites", { from, email });
    }
    return { ok: true as const };
  },
});
