// The component's declared shapes (src/shared/shapes) on its own calls through convex-test, which checks every argument and result against them: limitAll's, getValue's in each state and the hook query's; and isAsync and recordsMetrics, by what a limit writes.
// The first test is the first in this file to load the component's modules (lazily, through convex-test), so a change to
// the validators of shapes/limit-all-validators.ts and shapes/value-validators.ts, which run only when lib.ts loads, is
// seen by it: keep it first, and import nothing here that loads them (src/client does).
import { ConvexError } from "convex/values";
import { anyApi } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { next } from "./clock.js";
import { errorOf, inspectable, makeInspectableTest } from "./setup.js";

const api = inspectable.rateLimiter;
const T0 = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;
/** One token an hour: a second take in the hour is refused. */
const bucket = { kind: "token bucket", rate: 1, period: HOUR } as const satisfies RateLimitConfig;
/** The config every getValue result names for {@link bucket}: its share, filled in. */
const shown = { kind: "token bucket", rate: 1, period: HOUR, capacity: 1, shards: 1 };

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

type Test = ReturnType<typeof makeInspectableTest>;

/** Each call at its own instant, 1 ms after the last, so every `ts` is known. */
function caller(t: Test) {
  return {
    limitAll: (args: Record<string, unknown>) => {
      vi.setSystemTime(next());
      return t.run((ctx) => ctx.runMutation(api.lib.limitAll, args as never));
    },
    getValue: (args: Record<string, unknown>) => {
      vi.setSystemTime(next());
      return { at: Date.now(), result: t.run((ctx) => ctx.runQuery(api.lib.getValue, args as never)) };
    },
    set: (args: Record<string, unknown>) => t.run((ctx) => ctx.runMutation(api.overrides.set, args as never)),
  };
}

describe("every shape the component declares holds what it returns", () => {
  test("limitAll admitted, refused and refused with an error to raise; getValue plain, with details, runAt, an allow entry, each block and each override", async () => {
    const t = makeInspectableTest();
    const call = caller(t);
    // limitAll: every argument and item field; ok: true, then ok: false with retryAfter.
    expect(
      await call.limitAll({ requests: [{ name: "a", key: "k", count: 1, tier: "t", config: bucket }], reserve: false, throws: false, details: false, raiseInCaller: false, ip: "198.51.100.1" }),
    ).toEqual({ ok: true, results: [{ ok: true }] });
    expect(await call.limitAll({ requests: [{ name: "a", key: "k", config: bucket }] })).toEqual({ ok: false, retryAfter: HOUR - 1, results: [{ ok: false, retryAfter: HOUR - 1 }] });
    // A refusal the caller raises (throws and raiseInCaller, with metrics to keep): the `error` field.
    const metered = { ...bucket, metrics: true };
    expect(await call.limitAll({ requests: [{ name: "m", key: "k", config: metered }] })).toEqual({ ok: true, results: [{ ok: true }] });
    expect(await call.limitAll({ requests: [{ name: "m", key: "k", config: metered }], throws: true, raiseInCaller: true })).toEqual({
      ok: false,
      retryAfter: HOUR - 1,
      results: [{ ok: false, retryAfter: HOUR - 1 }],
      error: { kind: "RateLimited", name: "m", names: ["m"], retryAfter: HOUR - 1 },
    });

    // getValue of a fresh key: plain, with details (total), and with wait (runAt).
    let v = call.getValue({ name: "f", key: "k", config: bucket });
    expect(await v.result).toEqual({ value: 1, ts: v.at, shard: 0, config: shown });
    v = call.getValue({ name: "f", key: "k", config: bucket, details: true, sampleShards: 1, mutationMs: 25 });
    expect(await v.result).toEqual({ value: 1, ts: v.at, shard: 0, config: shown, total: { value: 1, capacity: 1, exact: true } });
    v = call.getValue({ name: "f", key: "k", config: bucket, wait: true });
    expect(await v.result).toEqual({ value: 1, ts: v.at, shard: 0, config: shown, runAt: v.at });

    // Network entries (allow, block, own config), a key's block and config, a tier's block and config.
    const net = { ...bucket, networks: true };
    const until = T0 + HOUR;
    await call.set({ name: "n", config: net, target: { network: "203.0.113.0/24" }, override: { allow: true } });
    await call.set({ name: "n", config: net, target: { network: "198.51.100.0/24" }, override: { blockedUntil: until } });
    await call.set({ name: "n", config: net, target: { network: "192.0.2.0/24" }, override: { config: { ...bucket, rate: 5 } } });
    await call.set({ name: "n", config: net, target: { key: "blocked" }, override: { blockedUntil: until } });
    await call.set({ name: "n", config: net, target: { key: "own" }, override: { config: { ...bucket, rate: 2 } } });
    await call.set({ name: "n", config: net, target: { tier: "banned" }, override: { blockedUntil: until } });
    await call.set({ name: "n", config: net, target: { tier: "gold" }, override: { config: { ...bucket, rate: 3 } } });
    v = call.getValue({ name: "n", key: "x", config: net, ip: "203.0.113.9" });
    expect(await v.result).toEqual({ value: 1, ts: v.at, shard: 0, config: shown, by: "network", network: "203.0.113.0/24", allowed: true });
    v = call.getValue({ name: "n", key: "x", config: net, ip: "198.51.100.9" });
    expect(await v.result).toEqual({ value: 1, ts: v.at, shard: 0, config: shown, network: "198.51.100.0/24", blockedUntil: until, blockedBy: "network" });
    v = call.getValue({ name: "n", key: "x", config: net, ip: "192.0.2.9" });
    expect(await v.result).toEqual({ value: 5, ts: v.at, shard: 0, config: { ...shown, rate: 5, capacity: 5 }, by: "network", network: "192.0.2.0/24" });
    v = call.getValue({ name: "n", key: "blocked", config: net });
    expect(await v.result).toEqual({ value: 1, ts: v.at, shard: 0, config: shown, blockedUntil: until, blockedBy: "key" });
    v = call.getValue({ name: "n", key: "own", config: net });
    expect(await v.result).toEqual({ value: 2, ts: v.at, shard: 0, config: { ...shown, rate: 2, capacity: 2 }, by: "key" });
    v = call.getValue({ name: "n", key: "x", tier: "banned", config: net });
    expect(await v.result).toEqual({ value: 1, ts: v.at, shard: 0, config: shown, blockedUntil: until, blockedBy: "tier" });
    v = call.getValue({ name: "n", key: "x", tier: "gold", config: net });
    expect(await v.result).toEqual({ value: 3, ts: v.at, shard: 0, config: { ...shown, rate: 3, capacity: 3 }, by: "tier" });

    // A lockout: the take that empties the key locks it for the lockout; read in the same transaction, at the take's instant.
    const locking = { ...bucket, lockout: HOUR };
    vi.setSystemTime(next());
    const lockedAt = Date.now();
    const [taken, locked] = await t.run(async (ctx) => [
      await ctx.runMutation(api.lib.rateLimit, { name: "l", key: "k", config: locking }),
      await ctx.runQuery(api.lib.getValue, { name: "l", key: "k", config: locking }),
    ]);
    expect(taken).toEqual({ ok: true });
    expect(locked).toEqual({ value: 0, ts: lockedAt, shard: 0, config: shown, blockedUntil: lockedAt + HOUR, blockedBy: "lockout" });

    // The hook query an app makes with hookAPI (test/app/hooks.ts: "send", 10 a minute, 3 at once) returns getValue with total.
    vi.setSystemTime(next());
    const hookAt = Date.now();
    expect(await t.query(anyApi.hooks!.globalLimit!, {})).toEqual({
      value: 3,
      ts: hookAt,
      shard: 0,
      config: { kind: "token bucket", rate: 10, period: 60_000, capacity: 3, shards: 1 },
      total: { value: 3, capacity: 3, exact: true },
    });
  });
});

describe("isAsync and recordsMetrics, by what a limit writes", () => {
  test("an asynchronous limit records its take for the applier and writes no row; a transactional one writes its row and records nothing", async () => {
    const t = makeInspectableTest();
    const take = (name: string, config: RateLimitConfig) => t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name, key: "k", config }));
    expect(await take("async", { ...bucket, applyUpdates: "asynchronously" })).toEqual({ ok: true });
    expect(await take("sync", { ...bucket, applyUpdates: "transactionally" })).toEqual({ ok: true });
    expect(await take("plain", bucket)).toEqual({ ok: true });
    const pending = await t.run((ctx) => ctx.runQuery(api.inspect.pending, {}));
    expect(pending.map((p) => p.name)).toEqual(["async"]);
    const rows = await t.run((ctx) => ctx.runQuery(api.inspect.rows, {}));
    expect(rows.map((r) => r.name).sort()).toEqual(["plain", "sync"]);
  });

  test("a refusal with throws and raiseInCaller is raised by the caller only when the limit records metrics", async () => {
    const t = makeInspectableTest();
    const call = caller(t);
    const refuse = async (config: RateLimitConfig) => {
      expect(await call.limitAll({ requests: [{ name: "r", key: String(config.metrics), config }] })).toEqual({ ok: true, results: [{ ok: true }] });
      return call.limitAll({ requests: [{ name: "r", key: String(config.metrics), config }], throws: true, raiseInCaller: true });
    };
    // The caller raises only to keep the refusal's metric event (limitAllOutcome's `inCaller`): without metrics, the component throws.
    for (const config of [bucket, { ...bucket, metrics: false }]) {
      const error = await errorOf(refuse(config));
      expect(error).toBeInstanceOf(ConvexError);
      expect((error as ConvexError<{ kind: string; names: string[] }>).data).toEqual({ kind: "RateLimited", name: "r", names: ["r"], retryAfter: HOUR - 1 });
    }
    expect(await refuse({ ...bucket, metrics: true })).toMatchObject({ ok: false, error: { kind: "RateLimited", name: "r", names: ["r"], retryAfter: HOUR - 1 } });
  });
});
