// LLM generations, at most 2 in flight per user: a concurrency limit (`llmGenerations` in
// limits.ts). The pattern for work that runs in an action: acquire the slot in a mutation, run
// the action, release the slot in a mutation when the action ends (here from the action itself,
// in a `finally`; with workpool, from its `onComplete`). If the action dies before it can
// release, the lease's time (2 minutes) is the safety net: the slot frees itself then, with no job.
// #region generations
import { v } from "convex/values";
import { internal } from "./_generated/api.js";
import { internalAction, internalMutation, mutation, query } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";

/**
 * start begins a generation for `user`, if fewer than 2 of theirs are in flight: it takes a slot
 * and schedules the action. Returns `{ ok: true, id }`, or `{ ok: false, retryAfter }` (ms until
 * the earliest of their generations' leases expires; a finished one frees a slot sooner).
 * `crash` makes the action die before it can release (for the demo and tests).
 */
export const start = mutation({
  args: { user: v.string(), prompt: v.string(), crash: v.optional(v.boolean()) },
  returns: v.union(
    v.object({ ok: v.literal(true), id: v.id("generations") }),
    v.object({ ok: v.literal(false), retryAfter: v.number() }),
  ),
  handler: async (ctx, { user, prompt, crash }) => {
    const slot = await rateLimiter.acquire(ctx, "llmGenerations", { key: user });
    if (!slot.ok) return { ok: false as const, retryAfter: slot.retryAfter };
    const id = await ctx.db.insert("generations", { user, prompt, lease: slot.lease });
    // If this mutation failed after acquiring, the lease would be rolled back with it.
    await ctx.scheduler.runAfter(0, internal.generations.generate, { id, prompt, crash: crash ?? false });
    return { ok: true as const, id };
  },
});

/** generate calls the model (simulated here), then finishes the generation, releasing its slot. */
export const generate = internalAction({
  args: { id: v.id("generations"), prompt: v.string(), crash: v.boolean() },
  returns: v.null(),
  handler: async (ctx, { id, prompt, crash }) => {
    // A crash here (an out-of-memory, a deploy, a timeout) never reaches `finish`.
    if (crash) throw new Error("the generation crashed");
    let answer: string | undefined;
    try {
      answer = `echo: ${prompt}`; // a real app awaits the model here, extending the lease if it runs long
    } finally {
      await ctx.runMutation(internal.generations.finish, { id, ...(answer === undefined ? {} : { answer }) });
    }
    return null;
  },
});

/** finish records a generation's end and releases its slot. Idempotent, like `release`. */
export const finish = internalMutation({
  args: { id: v.id("generations"), answer: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, { id, answer }) => {
    const generation = await ctx.db.get(id);
    if (generation === null || generation.finishedAt !== undefined) return null;
    await ctx.db.patch(id, { finishedAt: Date.now(), ...(answer === undefined ? {} : { answer }) });
    await rateLimiter.release(ctx, generation.lease);
    return null;
  },
});

/** inFlight reports how many of `user`'s generations hold a slot now, and when the first frees itself. */
export const inFlight = query({
  args: { user: v.string() },
  returns: v.object({ inFlight: v.number(), capacity: v.number(), ts: v.number(), earliestExpiry: v.optional(v.number()) }),
  handler: async (ctx, { user }) => rateLimiter.getValue(ctx, "llmGenerations", { key: user }),
});
// #endregion generations
