// A sliding-window limit behind RateLimiter.hookAPI, for test/react-sliding.test.tsx: the query and
// the server-time mutation useRateLimit takes, and a mutation that takes tokens as an app's would.
import { componentsGeneric, mutationGeneric, queryGeneric } from "convex/server";
import { v } from "convex/values";
import { MINUTE, RateLimiter } from "../../src/client/index.js";
import type { ComponentApi } from "../../src/component/_generated/component.js";

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };

const rateLimiter = new RateLimiter(components.rateLimiter, {
  // About 3 in any minute, approximately (two counting windows); no start, so each key's windows
  // get a phase hashed from its name.
  perMinute: { kind: "sliding window", rate: 3, period: MINUTE, exact: false },
  // Exactly 3 in any minute: each token comes back a minute after it was taken.
  exactPerMinute: { kind: "sliding window", rate: 3, period: MINUTE },
  // Exactly 6 in any minute, with metrics, for limitAll, credit and metrics.
  exactMetered: { kind: "sliding window", rate: 6, period: MINUTE, metrics: true },
  // A dry run of an exact window: it decides and keeps its log, but admits everything.
  exactDry: { kind: "sliding window", rate: 1, period: MINUTE, dryRun: true },
});

/** The hook's functions: the client picks the key (a room, say). */
export const { getRateLimit, getServerTime } = rateLimiter.hookAPI("perMinute", {
  key: (_ctx, fromClient) => `room:${fromClient ?? "lobby"}`,
});

/** Takes `count` (default 1) for the room `key`, as the app's own mutation would. */
export const take = mutationGeneric({
  args: { key: v.string(), count: v.optional(v.number()) },
  handler: async (ctx, args) => rateLimiter.limit(ctx, "perMinute", { key: `room:${args.key}`, count: args.count }),
});

/** The exact window's hook functions, keyed as above. */
export const { getRateLimit: getExactRateLimit, getServerTime: getExactServerTime } = rateLimiter.hookAPI("exactPerMinute", {
  key: (_ctx, fromClient) => `room:${fromClient ?? "lobby"}`,
});

/** Takes `count` (default 1) from the exact window for the room `key`. */
export const takeExact = mutationGeneric({
  args: { key: v.string(), count: v.optional(v.number()) },
  handler: async (ctx, args) => rateLimiter.limit(ctx, "exactPerMinute", { key: `room:${args.key}`, count: args.count }),
});

/** Takes one from each exact window for `key`, all or none (limitAll). */
export const takeBoth = mutationGeneric({
  args: { key: v.string() },
  handler: async (ctx, args) =>
    rateLimiter.limitAll(ctx, [
      { name: "exactPerMinute", key: args.key },
      { name: "exactMetered", key: args.key },
    ]),
});

/** Takes `count` from the metered exact window for `key`, with the details a credit takes. */
export const takeDetailed = mutationGeneric({
  args: { key: v.string(), count: v.number() },
  handler: async (ctx, args) => rateLimiter.limit(ctx, "exactMetered", { key: args.key, count: args.count, details: true }),
});

/** Gives `count` back to the metered exact window's `shards` for `key`. */
export const giveBack = mutationGeneric({
  args: { key: v.string(), count: v.number(), shards: v.array(v.number()) },
  handler: async (ctx, args) => rateLimiter.credit(ctx, "exactMetered", { key: args.key, count: args.count, shards: args.shards }),
});

/** One request against the dry-run exact window. */
export const takeDry = mutationGeneric({
  args: {},
  handler: async (ctx) => rateLimiter.limit(ctx, "exactDry"),
});

/** The tokens the metered exact window holds for `key` now. */
export const leftOf = queryGeneric({
  args: { key: v.string() },
  handler: async (ctx, args) => (await rateLimiter.getValue(ctx, "exactMetered", { key: args.key })).value,
});

/** The per-minute metrics of the metered exact window. */
export const metricsOf = mutationGeneric({
  args: {},
  handler: async (ctx) => {
    await rateLimiter.foldMetrics(ctx);
    const now = Date.now();
    return rateLimiter.metrics(ctx, "exactMetered", { from: now - 60 * MINUTE, to: now + MINUTE });
  },
});
