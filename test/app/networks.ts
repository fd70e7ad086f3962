// An app that limits by who is calling, for test/networks.test.ts: keys from the request's address
// and user agent (`requestKey`), in mutations, actions and scheduled runs; limits with network
// entries (allow and deny lists), and one without; and the override methods an admin page calls.
import { actionGeneric, anyApi, componentsGeneric, mutationGeneric, paginationOptsValidator, queryGeneric } from "convex/server";
import { v } from "convex/values";
import { HOUR, MINUTE, RateLimiter, type Override, type OverrideTarget, type RequestKeyOptions } from "../../src/client/index.js";
import type { ComponentApi } from "../../src/component/_generated/component.js";

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };

export const rateLimiter = new RateLimiter(components.rateLimiter, {
  // Sign-in attempts per address: 3 a minute, then the address is locked out for an hour (an
  // automatic ban), with allow and deny lists by network.
  signIn: { kind: "token bucket", rate: 3, period: MINUTE, lockout: HOUR, networks: true },
  // The same without network entries: it never reads them.
  plain: { kind: "token bucket", rate: 3, period: MINUTE },
  // With metrics, to see an allowed network's requests counted as admitted.
  api: { kind: "token bucket", rate: 2, period: MINUTE, networks: true, metrics: true },
});

type Name = "signIn" | "plain" | "api";
const name = v.union(v.literal("signIn"), v.literal("plain"), v.literal("api"));

/** The key `requestKey` makes of this request; options unchecked here, so bad ones reach the client's checks. */
export const keyOf = mutationGeneric({
  args: { options: v.any() },
  handler: async (ctx, { options }) => rateLimiter.requestKey(ctx, options as RequestKeyOptions),
});

/** The same from an action. */
export const keyInAction = actionGeneric({
  args: { options: v.any() },
  handler: async (ctx, { options }) => rateLimiter.requestKey(ctx, options as RequestKeyOptions),
});

/** A sign-in attempt, limited per address (its key) and matched against the limit's network entries. */
export const signIn = mutationGeneric({
  args: {},
  handler: async (ctx) => {
    const key = await rateLimiter.requestKey(ctx, { by: "ip" });
    return { key, ...(await rateLimiter.limit(ctx, "signIn", { key })) };
  },
});

/** A sign-in attempt scheduled to run later, where the request has no address. */
export const signInLater = mutationGeneric({
  args: { fallback: v.optional(v.string()) },
  handler: async (ctx, { fallback }) => {
    await ctx.scheduler.runAfter(0, anyApi.networks!.signInScheduled!, fallback === undefined ? {} : { fallback });
  },
});

/** What a scheduled sign-in does: keyed by address, with the fallback given (or none); fails without either, or when refused. */
export const signInScheduled = mutationGeneric({
  args: { fallback: v.optional(v.string()) },
  handler: async (ctx, { fallback }) => {
    const key = await rateLimiter.requestKey(ctx, { by: "ip", ...(fallback === undefined ? {} : { fallback }) });
    await rateLimiter.limit(ctx, "signIn", { key, throws: true });
  },
});

/** The scheduled runs' states, and their errors. */
export const scheduled = queryGeneric({
  args: {},
  handler: async (ctx) => (await ctx.db.system.query("_scheduled_functions").collect()).map((f) => f.state),
});

export const take = mutationGeneric({
  args: { name, key: v.optional(v.string()), ip: v.optional(v.string()), details: v.optional(v.boolean()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.limit(ctx, name as Name, options),
});

export const takeAll = mutationGeneric({
  args: { key: v.string(), ip: v.optional(v.string()) },
  handler: async (ctx, { key, ip }) =>
    rateLimiter.limitAll(ctx, [{ name: "signIn", key }, { name: "plain", key }], ip === undefined ? {} : { ip }),
});

export const check = queryGeneric({
  args: { name, key: v.optional(v.string()), ip: v.optional(v.string()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.check(ctx, name as Name, options),
});

export const value = queryGeneric({
  args: { name, key: v.optional(v.string()), ip: v.optional(v.string()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.getValue(ctx, name as Name, options),
});

/** getValue from a mutation, which reads the request's own address. */
export const valueHere = mutationGeneric({
  args: { name, key: v.optional(v.string()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.getValue(ctx, name as Name, options),
});

export const set = mutationGeneric({
  // `target` and `override` unchecked here, so bad ones reach the client's own checks.
  args: { name, target: v.any(), override: v.any(), note: v.optional(v.string()) },
  handler: async (ctx, args) => {
    await rateLimiter.setOverride(ctx, args.name as Name, args.target as OverrideTarget, args.override as Override, args.note === undefined ? {} : { note: args.note });
  },
});

/** Sets an entry straight through the component, past the client's checks: the component checks again. */
export const setRaw = mutationGeneric({
  args: { name: v.string(), target: v.any(), override: v.any(), config: v.any() },
  handler: async (ctx, args) => {
    await ctx.runMutation(components.rateLimiter.overrides.set, args as never);
  },
});

export const remove = mutationGeneric({
  args: { name, target: v.any() },
  handler: async (ctx, args) => rateLimiter.removeOverride(ctx, args.name as Name, args.target as OverrideTarget),
});

export const get = queryGeneric({
  args: { name, target: v.any() },
  handler: async (ctx, args) => rateLimiter.getOverride(ctx, args.name as Name, args.target as OverrideTarget),
});

export const list = queryGeneric({
  args: { name, scope: v.optional(v.union(v.literal("key"), v.literal("network"), v.literal("tier"))), paginationOpts: paginationOptsValidator },
  handler: async (ctx, args) => rateLimiter.listOverrides(ctx, args.name as Name, { paginationOpts: args.paginationOpts, ...(args.scope ? { scope: args.scope } : {}) }),
});

export const fold = mutationGeneric({
  args: {},
  handler: async (ctx) => rateLimiter.foldMetrics(ctx),
});

export const metrics = queryGeneric({
  args: { name, from: v.number(), to: v.number() },
  handler: async (ctx, { name, from, to }) => rateLimiter.metrics(ctx, name as Name, { from, to }),
});

export const clearAll = mutationGeneric({
  args: {},
  handler: async (ctx) => {
    await ctx.runMutation(components.rateLimiter.lib.clearAll, {});
  },
});

export const cleanup = mutationGeneric({
  args: {},
  handler: async (ctx) => rateLimiter.cleanup(ctx),
});
