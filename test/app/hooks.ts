// App functions made with RateLimiter.hookAPI, one per way the server can decide the key, for
// test/react-hookapi.test.ts to call with the arguments useRateLimit sends.
import { componentsGeneric, mutationGeneric } from "convex/server";
import { v } from "convex/values";
import { MINUTE, RateLimiter } from "../../src/client/index.js";
import type { ComponentApi } from "../../src/component/_generated/component.js";

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };

const rateLimiter = new RateLimiter(components.rateLimiter, {
  // one token every 6 s, bursts of 3
  send: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
  // four shards of 10 tokens each
  sharded: { kind: "token bucket", rate: 40, period: MINUTE, capacity: 40, shards: 4 },
  // 2 in flight per key, 2-minute leases
  jobs: { kind: "concurrency", capacity: 2, lease: 2 * MINUTE },
});

/** No key option: the global limit; a client's key is refused. */
export const { getRateLimit: globalLimit, getServerTime } = rateLimiter.hookAPI("send");

/** A fixed key: a client may send it (or nothing), any other key is refused. */
export const { getRateLimit: fixedKey } = rateLimiter.hookAPI("send", { key: "alice" });

/** A key function that scopes the client's key: the client picks a room, never a raw key. */
export const { getRateLimit: roomKey } = rateLimiter.hookAPI("send", {
  key: (_ctx, fromClient) => `room:${fromClient ?? "lobby"}`,
});

/** A key function that ignores the client: the signed-in user. */
export const { getRateLimit: userKey } = rateLimiter.hookAPI("send", {
  key: async (ctx) => (await ctx.auth.getUserIdentity())?.subject ?? "anonymous",
});

/** A playground: clients choose the name and the config. */
export const { getRateLimit: playground } = rateLimiter.hookAPI("send", { allowClientConfig: true });

/** A sharded limit, reading every shard by default. */
export const { getRateLimit: shardedLimit } = rateLimiter.hookAPI("sharded");

/** Takes `count` tokens of "send" (or "sharded") for `key`, as the app's own mutation would. */
export const take = mutationGeneric({
  args: { key: v.optional(v.string()), count: v.optional(v.number()), sharded: v.optional(v.boolean()) },
  handler: async (ctx, args) => {
    const options = {
      ...(args.key === undefined ? {} : { key: args.key }),
      ...(args.count === undefined ? {} : { count: args.count }),
    };
    return args.sharded ? rateLimiter.limit(ctx, "sharded", options) : rateLimiter.limit(ctx, "send", options);
  },
});

/** Takes a token of a limit the app doesn't name, for the playground. */
export const takeOther = mutationGeneric({
  args: { name: v.string(), rate: v.number() },
  handler: async (ctx, args) =>
    rateLimiter.limit(ctx, args.name, { config: { kind: "token bucket", rate: args.rate, period: MINUTE } }),
});

/** A concurrency limit's hook query, for the key the client sends. */
export const { getRateLimit: jobSlots } = rateLimiter.hookAPI("jobs", { key: (_ctx, fromClient) => fromClient ?? "anyone" });

/** Acquires a slot of "jobs" for `key`, as the app's own mutation would. */
export const acquireJob = mutationGeneric({
  args: { key: v.string() },
  handler: async (ctx, args) => rateLimiter.acquire(ctx, "jobs", { key: args.key }),
});
