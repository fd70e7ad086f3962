// An LLM token budget. Each request reserves its tokens (`count`) up front, even ones not there
// yet, and its work is scheduled for when the limiter says they'll be covered: the budget is never
// exceeded, and no request has to retry. A queue deeper than `maxReserved` refuses new requests.
// Each user's requests count against their own allowance too, ten times larger on the pro plan,
// and against their plan's monthly quota, from their billing day in their time zone.
// #region llmReserve
import { ConvexError, v } from "convex/values";
import { withJitter } from "convex-rate-limiter";
import { internal } from "./_generated/api.js";
import { internalMutation, mutation, query } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";
import { planOf } from "./plans.js";

/**
 * The most ms added at random to a reserved job's delay, so jobs reserved in the same instant
 * don't all wake together. Jitter only ever delays work: a job never runs before its tokens exist.
 */
export const JITTER_MS = 1_000;

/**
 * request asks for a completion using `tokens` tokens of the budget, for the signed-in user. It
 * counts one of the user's requests (`llmRequests`: 20 an hour, ten times that on the pro plan)
 * and reserves the tokens (`llmTokens`), both or neither. Returns `{ ok: true, jobId, runAfter }`
 * with the job scheduled to run in `runAfter` ms (0: now), or `{ ok: false, retryAfter }` when the
 * user's allowance is spent or the queue is full (the `maxReserved` of `llmTokens` in limits.ts).
 * Throws a `ConvexError` when signed out.
 */
export const request = mutation({
  args: { prompt: v.string(), tokens: v.number() },
  returns: v.union(
    v.object({ ok: v.literal(true), jobId: v.id("llmJobs"), runAfter: v.number() }),
    v.object({ ok: v.literal(false), retryAfter: v.number() }),
  ),
  handler: async (ctx, { prompt, tokens }) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) throw new ConvexError("sign in to use the LLM");
    const user = identity.tokenIdentifier;
    // The plan is the app's own data; the limiter is told it as the request's tier, and the
    // "pro" tier's override (admin.ts) decides for it.
    const plan = await planOf(ctx, user);
    // All three or none: a request the queue refuses spends none of the user's allowances.
    // `reserve` is for all; llmRequests allows no reservation (maxReserved 0), so it refuses, and
    // the monthly quota never borrows from a month not started, so it refuses too.
    const status = await rateLimiter.limitAll(
      ctx,
      [
        { name: "llmRequests", key: user, tier: plan === "pro" ? "pro" : undefined },
        { name: "llmMonthly", key: user },
        { name: "llmTokens", count: tokens },
      ],
      { reserve: true },
    );
    if (!status.ok) return { ok: false as const, retryAfter: status.retryAfter };
    // ok with a retryAfter: the tokens are ours, but only from `retryAfter` ms from now.
    const wait = status.retryAfter ?? 0;
    // Spread out jobs reserved together; withJitter(0) is 0, so work due now isn't delayed.
    const runAfter = withJitter(wait, { maxJitterMs: JITTER_MS });
    const now = Date.now();
    const jobId = await ctx.db.insert("llmJobs", {
      user,
      prompt,
      tokens,
      requestedAt: now,
      notBefore: now + wait,
    });
    await ctx.scheduler.runAfter(runAfter, internal.llm.generate, { jobId });
    return { ok: true as const, jobId, runAfter };
  },
});
// #endregion llmReserve

// #region llmBillingCycle
/**
 * setBillingCycle starts `user`'s monthly LLM quota on their subscription's day of the month (1 to
 * 31; 31 is each month's last day) at midnight in their IANA time zone: a key override of
 * `llmMonthly` with their own calendar. Call it when they subscribe. It grants nothing: what they
 * used counts until the month they were in ends.
 */
export const setBillingCycle = internalMutation({
  args: { user: v.string(), day: v.number(), timeZone: v.string() },
  returns: v.null(),
  handler: async (ctx, { user, day, timeZone }) => {
    const month = { kind: "calendar", rate: 1000, period: "month", anchor: day, timeZone } as const;
    await rateLimiter.setOverride(ctx, "llmMonthly", { key: user }, { config: month }, { note: "billing cycle" });
    return null;
  },
});
// #endregion llmBillingCycle

// #region llmRun
/**
 * generate does a job's work when its time comes. It doesn't check the limit: the tokens were
 * reserved when the job was scheduled, and checking again would count them twice. A real app would
 * call the model from an action here; this one records when the job ran.
 */
export const generate = internalMutation({
  args: { jobId: v.id("llmJobs") },
  returns: v.null(),
  handler: async (ctx, { jobId }) => {
    await ctx.db.patch(jobId, { ranAt: Date.now() });
    return null;
  },
});
// #endregion llmRun

// #region llmSettle
/**
 * settle records how many tokens a job really used and gives the rest of its reservation back to
 * the budget: the request reserved an estimate up front, and the model's answer used less. A real
 * app calls it from the action that called the model. Returns the tokens credited.
 */
export const settle = internalMutation({
  args: { jobId: v.id("llmJobs"), used: v.number() },
  returns: v.number(),
  handler: async (ctx, { jobId, used }) => {
    const job = await ctx.db.get(jobId);
    if (job === null || job.used !== undefined) return 0; // unknown, or already settled
    await ctx.db.patch(jobId, { used });
    const unused = job.tokens - used;
    if (!(unused > 0)) return 0;
    const { credited } = await rateLimiter.credit(ctx, "llmTokens", { count: unused });
    return credited;
  },
});
// #endregion llmSettle

/** jobs lists the latest LLM jobs, newest first, with when each was promised and when it ran. */
export const jobs = query({
  args: { limit: v.optional(v.number()) },
  returns: v.array(
    v.object({
      _id: v.id("llmJobs"),
      _creationTime: v.number(),
      user: v.string(),
      prompt: v.string(),
      tokens: v.number(),
      requestedAt: v.number(),
      notBefore: v.number(),
      ranAt: v.optional(v.number()),
      used: v.optional(v.number()),
    }),
  ),
  handler: async (ctx, args) => {
    return await ctx.db.query("llmJobs").order("desc").take(Math.min(args.limit ?? 50, 500));
  },
});
