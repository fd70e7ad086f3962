// Outbound emails, queued behind the email provider's limit instead of refused: the provider takes
// 100 in any hour (`outboundEmails`, an exact sliding window, shared with invitations), so each
// email is scheduled at the first instant the limit allows it, in the order they were queued. A
// visitor's queued emails are listed with their send times, and can be cancelled until they go.
import { ConvexError, v, type Infer } from "convex/values";
import { DAY, type RunResult } from "convex-rate-limiter";
import { internal } from "./_generated/api.js";
import { internalMutation } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";
import { sessionMutation, sessionQuery } from "./sessions.js";

/** The most characters an address or a subject may have. */
const MAX_LENGTH = 200;

/** What `queue` returns: the email queued to go at `runAt` (UTC ms), or refused for `retryAfter` ms. */
const queued = v.union(
  v.object({ ok: v.literal(true), emailId: v.id("emails"), runAt: v.number() }),
  v.object({ ok: v.literal(false), retryAfter: v.number() }),
);

// #region queueEmail
/**
 * queue sends an email when the provider's limit allows it: at once if it can go now, else at the
 * first instant it may (`runAt`, UTC ms), after every email queued before it. Returns
 * `{ ok: true, emailId, runAt }`, or `{ ok: false, retryAfter }` when it would wait more than a day
 * (nothing is queued then).
 */
export const queue = sessionMutation({
  args: { to: v.string(), subject: v.string() },
  returns: queued,
  // Typed here: `internal.emails` below refers to this module, so TypeScript can't infer it.
  handler: async (ctx, { to, subject }): Promise<Infer<typeof queued>> => {
    if (!/^[^@\s]+@[^@\s]+$/.test(to) || to.length > MAX_LENGTH || subject.length > MAX_LENGTH) {
      throw new ConvexError(`an address like name@example.com, and at most ${MAX_LENGTH} characters each`);
    }
    const emailId = await ctx.db.insert("emails", { session: ctx.sessionId, to, subject, status: "queued" });
    // The tokens are taken now, in this transaction; `deliver` runs at `runAt` and checks nothing.
    const run: RunResult = await rateLimiter.runWhenAllowed(ctx, "outboundEmails", { maxWait: DAY }, internal.emails.deliver, { emailId });
    if (!run.ok) {
      await ctx.db.delete(emailId);
      return run;
    }
    await ctx.db.patch(emailId, { runAt: run.runAt, runId: run.id });
    return { ok: true as const, emailId, runAt: run.runAt };
  },
});
// #endregion queueEmail

/**
 * deliver sends a queued email when its time comes. It doesn't check the limit: the tokens were
 * taken when it was queued. A real app calls the provider from an action here; this one records
 * when the email went.
 */
export const deliver = internalMutation({
  args: { emailId: v.id("emails") },
  returns: v.null(),
  handler: async (ctx, { emailId }) => {
    await ctx.db.patch(emailId, { status: "sent", sentAt: Date.now() });
    return null;
  },
});

// #region cancelEmail
/**
 * cancel takes back a queued email that hasn't gone yet: its run is cancelled and its place in the
 * provider's limit given back. Returns whether it was cancelled (false once it went, or if it isn't
 * this visitor's).
 */
export const cancel = sessionMutation({
  args: { emailId: v.id("emails") },
  returns: v.boolean(),
  handler: async (ctx, { emailId }) => {
    const email = await ctx.db.get(emailId);
    if (email === null || email.session !== ctx.sessionId || email.status !== "queued" || email.runId === undefined) return false;
    const { cancelled } = await rateLimiter.cancelRun(ctx, email.runId);
    if (cancelled) await ctx.db.patch(emailId, { status: "cancelled" });
    return cancelled;
  },
});
// #endregion cancelEmail

/** outbox lists this visitor's latest emails, newest first: queued (with `runAt`), sent or cancelled. */
export const outbox = sessionQuery({
  args: {},
  returns: v.array(
    v.object({
      _id: v.id("emails"),
      to: v.string(),
      subject: v.string(),
      status: v.union(v.literal("queued"), v.literal("sent"), v.literal("cancelled")),
      runAt: v.optional(v.number()),
      sentAt: v.optional(v.number()),
    }),
  ),
  handler: async (ctx) => {
    const emails = await ctx.db
      .query("emails")
      .withIndex("session", (q) => q.eq("session", ctx.sessionId))
      .order("desc")
      .take(20);
    return emails.map(({ _id, to, subject, status, runAt, sentAt }) => ({ _id, to, subject, status, runAt, sentAt }));
  },
});
