// Several limits in one mutation, taken all or nothing: each invitation counts against the
// sender's own allowance (20 a day) and against the app's outgoing email budget (100 in any hour).
// A request that either limit refuses takes nothing from the other.
// #region allOrNothing
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
    // Both limits are decided first, then taken together or not at all; `retryAfter` is when
    // both would allow it.
    const taken = await rateLimiter.limitAll(ctx, [
      { name: "invitesPerUser", key: from, count },
      { name: "outboundEmails", count },
    ]);
    if (!taken.ok) return { ok: false as const, retryAfter: taken.retryAfter };
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
// #endregion allOrNothing
