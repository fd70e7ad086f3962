// An app with overrides, for test/overrides-client.test.ts: named limits, and mutations and
// queries that call every override method and take tokens with a key and a tier, as an app's
// admin code and request code would.
import { componentsGeneric, mutationGeneric, paginationOptsValidator, queryGeneric, type GenericDataModel } from "convex/server";
import { v } from "convex/values";
import { HOUR, MINUTE, RateLimiter, SECOND, type Override, type OverrideTarget } from "../../src/client/index.js";
import type { ComponentApi } from "../../src/component/_generated/component.js";

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };

export const rateLimiter = new RateLimiter(components.rateLimiter, {
  // 10 an hour per user; the "pro" tier gets more by an override.
  llm: { kind: "token bucket", rate: 10, period: HOUR },
  // The same over 4 shards, asynchronously: overrides keep the layout.
  llmSharded: { kind: "token bucket", rate: 40, period: HOUR, shards: 4 },
  llmAsync: { kind: "token bucket", rate: 10, period: HOUR, applyUpdates: "asynchronously" },
  // 3 failed sign-ins a minute, then locked out for an hour.
  signIn: { kind: "fixed window", rate: 3, period: MINUTE, start: 0, lockout: HOUR },
  exact: { kind: "sliding window", rate: 3, period: 10 * SECOND },
  metered: { kind: "token bucket", rate: 2, period: MINUTE, metrics: true },
  // A dry run: admits what it would refuse, and logs it.
  dry: { kind: "token bucket", rate: 2, period: MINUTE, dryRun: true },
});

type Name = "llm" | "llmSharded" | "llmAsync" | "signIn" | "exact" | "metered" | "dry";
const name = v.union(
  v.literal("llm"),
  v.literal("llmSharded"),
  v.literal("llmAsync"),
  v.literal("signIn"),
  v.literal("exact"),
  v.literal("metered"),
  v.literal("dry"),
);
const target = v.union(v.object({ key: v.optional(v.string()) }), v.object({ tier: v.string() }));

export const take = mutationGeneric({
  args: { name, key: v.optional(v.string()), tier: v.optional(v.string()), count: v.optional(v.number()), details: v.optional(v.boolean()), throws: v.optional(v.boolean()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.limit(ctx, name as Name, options),
});

export const check = queryGeneric({
  args: { name, key: v.optional(v.string()), tier: v.optional(v.string()), count: v.optional(v.number()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.check(ctx, name as Name, options),
});

export const value = queryGeneric({
  args: { name, key: v.optional(v.string()), tier: v.optional(v.string()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.getValue(ctx, name as Name, { ...options, details: true }),
});

export const set = mutationGeneric({
  // `target` and `override` unchecked here, so bad ones reach the client's own checks.
  args: { name, target: v.any(), override: v.any(), note: v.optional(v.string()) },
  handler: async (ctx, args) => {
    await rateLimiter.setOverride(ctx, args.name as Name, args.target as OverrideTarget, args.override as Override, args.note === undefined ? {} : { note: args.note });
  },
});

export const remove = mutationGeneric({
  args: { name, target },
  handler: async (ctx, args) => rateLimiter.removeOverride(ctx, args.name as Name, args.target as OverrideTarget),
});

export const get = queryGeneric({
  args: { name, target },
  handler: async (ctx, args) => rateLimiter.getOverride(ctx, args.name as Name, args.target as OverrideTarget),
});

export const list = queryGeneric({
  args: { name, scope: v.optional(v.union(v.literal("key"), v.literal("tier"))), paginationOpts: paginationOptsValidator },
  handler: async (ctx, args) => rateLimiter.listOverrides(ctx, args.name as Name, { paginationOpts: args.paginationOpts, ...(args.scope ? { scope: args.scope } : {}) }),
});

export const reset = mutationGeneric({
  args: { name, key: v.optional(v.string()) },
  handler: async (ctx, args) => rateLimiter.reset(ctx, args.name as Name, args.key === undefined ? {} : { key: args.key }),
});

export const credit = mutationGeneric({
  args: { name, key: v.optional(v.string()), tier: v.optional(v.string()), count: v.number() },
  handler: async (ctx, { name, ...options }) => rateLimiter.credit(ctx, name as Name, options),
});

export const cleanup = mutationGeneric({
  args: {},
  handler: async (ctx) => rateLimiter.cleanup(ctx),
});

const request = v.object({ name, key: v.optional(v.string()), tier: v.optional(v.string()), count: v.optional(v.number()) });

/** Takes from several limits at once, all or none; each request may name a tier. */
export const takeAll = mutationGeneric({
  args: { requests: v.array(request), details: v.optional(v.boolean()) },
  handler: async (ctx, { requests, details }) => rateLimiter.limitAll(ctx, requests, details === undefined ? {} : { details }),
});

export const checkAll = queryGeneric({
  args: { requests: v.array(request) },
  handler: async (ctx, { requests }) => rateLimiter.checkAll(ctx, requests),
});

export const metrics = queryGeneric({
  args: { name, from: v.number(), to: v.number() },
  handler: async (ctx, { name, from, to }) => rateLimiter.metrics(ctx, name as Name, { from, to }),
});

/**
 * The hook's query for "llm", for the key the client sends, in the tier its prefix names
 * (`pro:…` is in "pro"), as an app would look the user's plan up.
 */
export const { getRateLimit: tieredHook } = rateLimiter.hookAPI<GenericDataModel>("llm", {
  key: (_ctx, fromClient) => fromClient ?? "anonymous",
  tier: async (_ctx, key) => (key?.startsWith("pro:") ? "pro" : undefined),
});
