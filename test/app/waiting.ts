// An app that waits until allowed, for test/waiting.test.ts: named limits of each kind, work that
// records the instant it ran (or fails, as a provider down), and mutations, queries and an action
// that queue work, cancel it, wait in an action and read the limits, as an app's code would.
import { actionGeneric, componentsGeneric, defineSchema, defineTable, internalMutationGeneric, makeFunctionReference, mutationGeneric, queryGeneric } from "convex/server";
import { v } from "convex/values";
import { HOUR, MINUTE, RateLimiter } from "../../src/client/index.js";
import type { ComponentApi } from "../../src/component/_generated/component.js";

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };

/** The app's schema: `sent` records each run of the work (`to`, and the instant `at` it ran). */
export const schema = defineSchema({ sent: defineTable({ to: v.string(), at: v.number() }) });

export const rateLimiter = new RateLimiter(components.rateLimiter, {
  // 2 a minute: a burst of 2, then one every 30 s.
  emails: { kind: "token bucket", rate: 2, period: MINUTE },
  // 3 an hour, windows aligned to the hour.
  hourly: { kind: "fixed window", rate: 3, period: HOUR, start: 0 },
  // At most 3 reserved ahead.
  bounded: { kind: "token bucket", rate: 1, period: MINUTE, maxReserved: 3 },
  sharded: { kind: "token bucket", rate: 4, period: MINUTE, shards: 2 },
  hot: { kind: "token bucket", rate: 2, period: MINUTE, applyUpdates: "asynchronously" },
  metered: { kind: "token bucket", rate: 1, period: MINUTE, metrics: true },
  dry: { kind: "token bucket", rate: 1, period: MINUTE, dryRun: true },
  // Exact (the default): never more than 3 in any minute.
  window: { kind: "sliding window", rate: 3, period: MINUTE },
  approx: { kind: "sliding window", rate: 3, period: MINUTE, exact: false },
  slots: { kind: "concurrency", capacity: 1, lease: MINUTE },
});

type Name = "emails" | "hourly" | "bounded" | "sharded" | "hot" | "metered" | "dry" | "window";
const name = v.union(...(["emails", "hourly", "bounded", "sharded", "hot", "metered", "dry", "window"] as const).map((n) => v.literal(n)));

/** The work: records that it ran, and when; with `fail`, fails as a provider that is down. */
export const send = internalMutationGeneric({
  args: { to: v.string(), fail: v.optional(v.boolean()) },
  handler: async (ctx, { to, fail }) => {
    if (fail) throw new Error(`provider down for ${to}`);
    await ctx.db.insert("sent", { to, at: Date.now() });
  },
});
export const sendRef = makeFunctionReference<"mutation", { to: string; fail?: boolean }, null>("waiting:send");

const waitOptions = { key: v.optional(v.string()), count: v.optional(v.number()), tier: v.optional(v.string()), maxWait: v.optional(v.number()), throws: v.optional(v.boolean()) };

/** Queues one send behind limit `name`. */
export const queue = mutationGeneric({
  args: { name, to: v.string(), fail: v.optional(v.boolean()), ...waitOptions },
  handler: async (ctx, { name, to, fail, ...options }) =>
    rateLimiter.runWhenAllowed(ctx, name as Name, options, sendRef, fail === undefined ? { to } : { to, fail }),
});

export const cancel = mutationGeneric({
  args: { id: v.string() },
  handler: async (ctx, { id }) => rateLimiter.cancelRun(ctx, id),
});

/** Waits in an action until limit `name` allows one more, then says how long it waited. */
export const waitThenSend = actionGeneric({
  args: { name, ...waitOptions },
  handler: async (ctx, { name, ...options }) => rateLimiter.waitUntilAllowed(ctx, name as Name, options),
});

export const value = queryGeneric({
  args: { name, key: v.optional(v.string()) },
  handler: async (ctx, { name, key }) => rateLimiter.getValue(ctx, name as Name, key === undefined ? {} : { key }),
});

export const check = queryGeneric({
  args: { name, key: v.optional(v.string()), count: v.optional(v.number()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.check(ctx, name as Name, options),
});

export const sent = queryGeneric({
  args: {},
  handler: async (ctx) => (await ctx.db.query("sent").collect()).map(({ to, at }) => ({ to, at })),
});
