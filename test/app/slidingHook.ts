// A sliding-window limit behind RateLimiter.hookAPI, for test/react-sliding.test.tsx: the query and
// the server-time mutation useRateLimit takes, and a mutation that takes tokens as an app's would.
import { componentsGeneric, mutationGeneric } from "convex/server";
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
