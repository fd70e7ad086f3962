// An app with calendar quotas, for test/calendar-client.test.ts: a monthly quota in New York, a
// daily one over two shards, one taken asynchronously, a per-minute limit to pair with the month
// in limitAll, and the calls an app makes on them (limit, check, getValue, credit, reset,
// overrides, limitAll), as its request and admin code would.
import { componentsGeneric, mutationGeneric, queryGeneric } from "convex/server";
import { v } from "convex/values";
import { MINUTE, RateLimiter, type CalendarConfig, type Override, type OverrideTarget } from "../../src/client/index.js";
import type { ComponentApi } from "../../src/component/_generated/component.js";

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };

export const rateLimiter = new RateLimiter(components.rateLimiter, {
  // 3 a month per user, from the 1st at midnight in New York.
  monthly: { kind: "calendar", rate: 3, period: "month", timeZone: "America/New_York" },
  // 4 a day (UTC), over two shards.
  daily: { kind: "calendar", rate: 4, period: "day", shards: 2 },
  // 4 a day, taken asynchronously, with metrics.
  dailyAsync: { kind: "calendar", rate: 4, period: "day", applyUpdates: "asynchronously", metrics: true },
  // 2 a minute, to pair with the month in limitAll.
  perMinute: { kind: "token bucket", rate: 2, period: MINUTE },
  // 1 a day, as a dry run: it logs what it would refuse, and refuses nothing.
  dryDaily: { kind: "calendar", rate: 1, period: "day", dryRun: true },
});

type Name = "monthly" | "daily" | "dailyAsync" | "perMinute" | "dryDaily";
const name = v.union(v.literal("monthly"), v.literal("daily"), v.literal("dailyAsync"), v.literal("perMinute"), v.literal("dryDaily"));

export const take = mutationGeneric({
  args: { name, key: v.optional(v.string()), tier: v.optional(v.string()), count: v.optional(v.number()), details: v.optional(v.boolean()), reserve: v.optional(v.boolean()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.limit(ctx, name as Name, options),
});

export const check = queryGeneric({
  args: { name, key: v.optional(v.string()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.check(ctx, name as Name, options),
});

export const value = queryGeneric({
  args: { name, key: v.optional(v.string()) },
  handler: async (ctx, { name, ...options }) => rateLimiter.getValue(ctx, name as Name, { ...options, details: true, sampleShards: 2 }),
});

/** Takes from a limit named by the call with its own config (a calendar quota's, as the app passes it). */
export const takeInline = mutationGeneric({
  args: { key: v.optional(v.string()), count: v.optional(v.number()), config: v.any() },
  handler: async (ctx, { key, count, config }) =>
    rateLimiter.limit(ctx, "adhoc", { ...(key === undefined ? {} : { key }), ...(count === undefined ? {} : { count }), config: config as CalendarConfig }),
});

export const credit = mutationGeneric({
  args: { name, key: v.optional(v.string()), count: v.number() },
  handler: async (ctx, { name, ...options }) => rateLimiter.credit(ctx, name as Name, options),
});

export const reset = mutationGeneric({
  args: { name, key: v.optional(v.string()) },
  handler: async (ctx, { name, key }) => rateLimiter.reset(ctx, name as Name, key === undefined ? {} : { key }),
});

export const setOverride = mutationGeneric({
  // Unchecked here, so bad ones reach the client's own checks.
  args: { name, target: v.any(), override: v.any() },
  handler: async (ctx, args) => rateLimiter.setOverride(ctx, args.name as Name, args.target as OverrideTarget, args.override as Override),
});

/** A message to an LLM: 2 a minute and 3 a month per user, both or neither. */
export const takeBoth = mutationGeneric({
  args: { key: v.string() },
  handler: async (ctx, { key }) =>
    rateLimiter.limitAll(ctx, [
      { name: "perMinute", key },
      { name: "monthly", key },
    ]),
});

export const metrics = queryGeneric({
  args: { from: v.number(), to: v.number() },
  handler: async (ctx, { from, to }) => rateLimiter.metrics(ctx, "dailyAsync", { from, to }),
});

export const foldMetrics = mutationGeneric({
  args: {},
  handler: async (ctx) => rateLimiter.foldMetrics(ctx),
});
