// An app that waits until allowed behind a limit with network entries, for
// test/waiting-networks.test.ts: runWhenAllowed, waitUntilAllowed, check and getValue with
// `wait: true`, from mutations, an action and queries, with the request's own address or an explicit `ip`.
import { actionGeneric, componentsGeneric, defineSchema, defineTable, internalMutationGeneric, makeFunctionReference, mutationGeneric, queryGeneric } from "convex/server";
import { v } from "convex/values";
import { MINUTE, RateLimiter, type Override, type OverrideTarget, type WaitOptions } from "../../src/client/index.js";
import type { ComponentApi } from "../../src/component/_generated/component.js";

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };

/** The app's schema: `done` records each run of the work (`to`, and the instant `at` it ran). */
export const schema = defineSchema({ done: defineTable({ to: v.string(), at: v.number() }) });

export const rateLimiter = new RateLimiter(components.rateLimiter, {
  // 3 a minute (one every 20 s once the burst is spent), with allow and deny lists by network.
  signIn: { kind: "token bucket", rate: 3, period: MINUTE, networks: true },
});

/** The work: records that it ran, and when. */
export const work = internalMutationGeneric({
  args: { to: v.string() },
  handler: async (ctx, { to }) => {
    await ctx.db.insert("done", { to, at: Date.now() });
  },
});
const workRef = makeFunctionReference<"mutation", { to: string }, null>("waitingNetworks:work");

const options = { key: v.optional(v.string()), ip: v.optional(v.string()), throws: v.optional(v.boolean()) };

export const queue = mutationGeneric({
  args: { to: v.string(), ...options },
  handler: async (ctx, { to, ...rest }) => rateLimiter.runWhenAllowed(ctx, "signIn", rest, workRef, { to }),
});

/** runWhenAllowed with no options at all, as JavaScript may call it (the types require them). */
export const queueNoOptions = mutationGeneric({
  args: { to: v.string() },
  handler: async (ctx, { to }) => rateLimiter.runWhenAllowed(ctx, "signIn", undefined as unknown as WaitOptions, workRef, { to }),
});

export const waitHere = actionGeneric({
  args: options,
  handler: async (ctx, rest) => rateLimiter.waitUntilAllowed(ctx, "signIn", rest),
});

/** check with `wait: true` from a mutation, which reads the request's own address. */
export const checkHere = mutationGeneric({
  args: options,
  handler: async (ctx, rest) => rateLimiter.check(ctx, "signIn", { ...rest, wait: true }),
});

/** check with `wait: true` from a query, which has no address of its own. */
export const checkQuery = queryGeneric({
  args: options,
  handler: async (ctx, rest) => rateLimiter.check(ctx, "signIn", { ...rest, wait: true }),
});

/** getValue with `wait: true` from a mutation, which reads the request's own address. */
export const valueHere = mutationGeneric({
  args: { key: v.optional(v.string()), ip: v.optional(v.string()) },
  handler: async (ctx, rest) => rateLimiter.getValue(ctx, "signIn", { ...rest, wait: true }),
});

export const valueQuery = queryGeneric({
  args: { key: v.optional(v.string()), ip: v.optional(v.string()) },
  handler: async (ctx, rest) => rateLimiter.getValue(ctx, "signIn", { ...rest, wait: true }),
});

export const take = mutationGeneric({
  args: { key: v.string(), ip: v.optional(v.string()) },
  handler: async (ctx, rest) => rateLimiter.limit(ctx, "signIn", rest),
});

export const set = mutationGeneric({
  args: { target: v.any(), override: v.any() },
  handler: async (ctx, args) => {
    await rateLimiter.setOverride(ctx, "signIn", args.target as OverrideTarget, args.override as Override);
  },
});

export const done = queryGeneric({
  args: {},
  handler: async (ctx) => (await ctx.db.query("done").collect()).map(({ to, at }) => ({ to, at })),
});
