// Covers what useRateLimit sends reaching hookAPI's real query on convex-test (register()): keys, names and configs refused or passed through, and the hook's retryAt agreeing with the server.
import { anyApi, type ApiFromModules, type FunctionArgs } from "convex/server";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, isInvalidRateLimitError } from "../src/client/index.js";
import type { GetValueReturns, RateLimitConfig } from "../src/shared/shapes/validators.js";
import type { HookLeaseValue } from "../src/shared/shapes/concurrency-validators.js";
import {
  useRateLimit,
  type GetRateLimitValueQuery,
  type GetServerTimeMutation,
  type UseRateLimitOptions,
} from "../src/react/index.js";
import type * as hooks from "./app/hooks.js";
import { makeTest } from "./setup.js";

/** The arguments the hook passes to useQuery. */
type HookArgs = { name?: string; key?: string; sampleShards?: number; config?: RateLimitConfig };

const mocks = vi.hoisted(() => ({
  /** What the mocked useQuery returns. */
  result: undefined as GetValueReturns | HookLeaseValue | undefined,
  /** What the hook last passed to useQuery. */
  args: undefined as HookArgs | undefined,
}));

vi.mock("convex/react", () => ({
  useQuery: (_query: unknown, args: HookArgs) => {
    mocks.args = args;
    return mocks.result;
  },
  // No client, as outside a ConvexProvider: the hook then keeps its conservative clock estimate.
  useConvex: () => undefined,
}));

/** The app's API, typed as codegen would type it from test/app/hooks.ts. */
const api = anyApi as unknown as ApiFromModules<{ hooks: typeof hooks }>;

const T0 = Date.UTC(2030, 0, 1);
const other: RateLimitConfig = { kind: "token bucket", rate: 2, period: MINUTE };

/** Renders the hook once on the server (no DOM needed): what it sends and what it reports. */
function renderOnce(query: GetRateLimitValueQuery, options: UseRateLimitOptions, result?: GetValueReturns | HookLeaseValue) {
  mocks.result = result;
  mocks.args = undefined;
  let out: ReturnType<typeof useRateLimit> | undefined;
  function Probe() {
    out = useRateLimit(query, options);
    return null;
  }
  renderToString(createElement(Probe));
  if (mocks.args === undefined || out === undefined) throw new Error("the hook didn't call useQuery");
  return { sent: mocks.args, ...out };
}

type Test = ReturnType<typeof makeTest>;
type Query = typeof api.hooks.globalLimit;

/**
 * Runs the app's `take` `n` times in one transaction, so all of them see the same instant:
 * convex-test's clock moves with commits (a third top-level call at a frozen instant runs 1 ms
 * later, and the hook would rightly see the server's clock 1 ms ahead). These tests mean n takes
 * at T0.
 */
async function takeAtOnce(t: Test, n: number, args: FunctionArgs<typeof api.hooks.take>) {
  await t.run(async (ctx) => {
    for (let i = 0; i < n; i++) await ctx.runMutation(api.hooks.take, args);
  });
}

/** Sends what the hook sends to the real query (as `t`, e.g. signed in), then renders its answer. */
async function viaHook(t: Pick<Test, "query">, query: Query, options: UseRateLimitOptions = {}) {
  const { sent } = renderOnce(query, options);
  const data = await t.query(query, sent);
  return { data, ...renderOnce(query, options, data) };
}

/** Sends what the hook sends to a concurrency limit's query, then renders its answer. */
async function viaLeaseHook(t: Pick<Test, "query">, options: UseRateLimitOptions = {}) {
  const query = api.hooks.jobSlots;
  mocks.result = undefined;
  const { sent } = renderOnce(query, options);
  const data = await t.query(query, sent);
  return { data, ...renderOnce(query, options, data) };
}

/** The `InvalidRateLimit` field of the error `promise` rejects with, or a description of what it did. */
async function refusedField(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "(not refused)";
  } catch (error) {
    return isInvalidRateLimitError(error) ? error.data.field : `(another error: ${String(error)})`;
  }
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

test("hookAPI's functions have the types useRateLimit takes", () => {
  // Compiles only if the app's references fit the hook's parameter types.
  const query: GetRateLimitValueQuery = api.hooks.roomKey;
  const time: GetServerTimeMutation = api.hooks.getServerTime;
  expect(renderOnce(query, { getServerTimeMutation: time }).sent).toEqual({});
});

describe("keys: the server decides", () => {
  test("without a key option, the global limit; a client's key is refused", async () => {
    const t = makeTest();
    await takeAtOnce(t, 3, {});
    expect((await viaHook(t, api.hooks.globalLimit)).status).toEqual({ ok: false, retryAt: T0 + 6000 });
    expect(await refusedField(viaHook(t, api.hooks.globalLimit, { key: "alice" }))).toBe("key");
  });

  test.each([
    // nothing sent: the server's key
    [{}, "(not refused)"],
    // the server's own key: accepted, it changes nothing
    [{ key: "alice" }, "(not refused)"],
    // another key: refused
    [{ key: "bob" }, "key"],
  ])("a fixed key: the hook sending %o is %s", async (options, field) => {
    const t = makeTest();
    expect(await refusedField(viaHook(t, api.hooks.fixedKey, options))).toBe(field);
  });

  test("a fixed key reads that key's state", async () => {
    const t = makeTest();
    await takeAtOnce(t, 3, { key: "alice" });
    expect((await viaHook(t, api.hooks.fixedKey)).status).toEqual({ ok: false, retryAt: T0 + 6000 });
  });

  test("a key function receives the client's key and decides the real one", async () => {
    const t = makeTest();
    // All at T0, in one transaction (convex-test's clock moves with commits).
    await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await ctx.runMutation(api.hooks.take, { key: "room:bob" });
      await ctx.runMutation(api.hooks.take, { key: "bob" }); // the raw key is not what the hook sees
    });
    expect((await viaHook(t, api.hooks.roomKey, { key: "bob" })).status).toEqual({ ok: false, retryAt: T0 + 6000 });
    expect((await viaHook(t, api.hooks.roomKey, { key: "carol" })).data.value).toBe(3);
    // 6 s later (explicit: convex-test's clock moves with commits): lobby is full, 3.
    vi.setSystemTime(T0 + 6000);
    await t.mutation(api.hooks.take, { key: "room:lobby" });
    expect((await viaHook(t, api.hooks.roomKey)).data.value).toBe(2); // no key: the function's default
  });

  test("a key function may ignore the client: the signed-in user's state, whatever key is sent", async () => {
    const t = makeTest();
    await takeAtOnce(t, 3, { key: "u1" });
    const u1 = t.withIdentity({ subject: "u1" });
    const u2 = t.withIdentity({ subject: "u2" });
    expect((await viaHook(u1, api.hooks.userKey, { key: "u2" })).status).toEqual({ ok: false, retryAt: T0 + 6000 });
    expect((await viaHook(u2, api.hooks.userKey, { key: "u1" })).status).toEqual({ ok: true });
  });
});

describe("name and config: refused unless the server allows client config", () => {
  test.each([
    // another limit's state
    [{ name: "other" }, "name"],
    // a config of the client's choosing
    [{ config: other }, "config"],
    // the server's own name: harmless, accepted
    [{ name: "send" }, "(not refused)"],
  ])("without allowClientConfig, the hook sending %o is %s", async (options, field) => {
    const t = makeTest();
    expect(await refusedField(viaHook(t, api.hooks.globalLimit, options))).toBe(field);
  });

  test("with allowClientConfig, the hook's name and config are used", async () => {
    const t = makeTest();
    // Both at T0, in one transaction (convex-test's clock moves with commits).
    await t.run(async (ctx) => {
      for (let i = 0; i < 2; i++) await ctx.runMutation(api.hooks.takeOther, { name: "other", rate: 2 });
    });
    const { status, data } = await viaHook(t, api.hooks.playground, { name: "other", config: other });
    expect(data.config).toEqual({ kind: "token bucket", rate: 2, period: MINUTE, capacity: 2, shards: 1 });
    expect(status).toEqual({ ok: false, retryAt: T0 + 30_000 });
  });
});

describe("the hook's prediction agrees with the server", () => {
  test.each([
    // one token missing at 10 a minute
    [1, 6000],
    // three tokens (the capacity) missing
    [3, 18_000],
  ])("count %d: the request is refused 1 ms before retryAt and allowed at retryAt", async (count, wait) => {
    const t = makeTest();
    await t.mutation(api.hooks.take, { key: "room:bob", count: 3 });
    const { status } = await viaHook(t, api.hooks.roomKey, { key: "bob", count });
    expect(status).toEqual({ ok: false, retryAt: T0 + wait });
    vi.setSystemTime(T0 + wait - 1);
    expect((await t.mutation(api.hooks.take, { key: "room:bob", count })).ok).toBe(false);
    vi.setSystemTime(T0 + wait);
    expect((await t.mutation(api.hooks.take, { key: "room:bob", count })).ok).toBe(true);
  });

  test("a sharded limit shows one shard's share; a count above it throws naming the shard", async () => {
    const t = makeTest();
    await t.mutation(api.hooks.take, { sharded: true });
    const { data, status } = await viaHook(t, api.hooks.shardedLimit, { count: 10 });
    expect(data.config.capacity).toBe(10);
    expect(data.value).toBe(9); // the emptiest of the four shards read: a conservative promise
    expect(status).toMatchObject({ ok: false });
    expect((await viaHook(t, api.hooks.shardedLimit, { count: 9 })).status).toEqual({ ok: true });
    const error = await viaHook(t, api.hooks.shardedLimit, { count: 11 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isInvalidRateLimitError(error) && error.data.message).toContain("one shard");
  });

  test("by default every shard is read, and the one shown is the emptiest", async () => {
    const t = makeTest();
    await takeAtOnce(t, 25, { sharded: true });
    const { data } = await viaHook(t, api.hooks.shardedLimit, { count: 1 });
    expect(data.total).toMatchObject({ capacity: 40, exact: true }); // all four shards read
    expect(data.total?.value).toBe(15);
    // The emptiest of four shards holds at most their average.
    expect(data.value).toBeLessThanOrEqual(15 / 4);
  });

  test("getServerTime returns the server's Date.now()", async () => {
    const t = makeTest();
    vi.setSystemTime(T0 + 1234);
    expect(await t.mutation(api.hooks.getServerTime, {})).toBe(T0 + 1234);
  });
});

describe("a concurrency limit", () => {
  test("the hook waits for the slot the server's acquire says frees first, and agrees at that instant", async () => {
    const t = makeTest();
    expect((await t.mutation(api.hooks.acquireJob, { key: "ada" })).ok).toBe(true);
    vi.setSystemTime(T0 + 10_000);
    expect((await t.mutation(api.hooks.acquireJob, { key: "ada" })).ok).toBe(true);
    vi.setSystemTime(T0 + 20_000);
    const refused = await t.mutation(api.hooks.acquireJob, { key: "ada" });
    const { data, status } = await viaLeaseHook(t, { key: "ada" });
    expect(data).toEqual({
      inFlight: 2,
      capacity: 2,
      ts: T0 + 20_000,
      earliestExpiry: T0 + 2 * MINUTE,
      expiries: [T0 + 2 * MINUTE, T0 + 10_000 + 2 * MINUTE],
      config: { kind: "concurrency", capacity: 2, lease: 2 * MINUTE },
    });
    expect(refused).toEqual({ ok: false, retryAfter: 2 * MINUTE - 20_000 });
    expect(status).toEqual({ ok: false, retryAt: T0 + 20_000 + (refused.ok ? 0 : refused.retryAfter) });
    vi.setSystemTime(T0 + 2 * MINUTE);
    expect((await t.mutation(api.hooks.acquireJob, { key: "ada" })).ok).toBe(true);
    expect((await viaLeaseHook(t, { key: "bob" })).status).toEqual({ ok: true }); // the key function's key
  });

  test.each([
    [{ sampleShards: 2 }, "sampleShards"],
    [{ config: other }, "config"],
    [{ name: "send" }, "name"],
  ] satisfies [UseRateLimitOptions, string][])("a client sending %o is refused, naming %s", async (options, field) => {
    const t = makeTest();
    expect(await refusedField(viaLeaseHook(t, options))).toBe(field);
  });
});
