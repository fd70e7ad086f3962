// The RateLimiter client as an app uses it: convex-test with the component installed by register(), fake timers, and hookAPI's functions exported from an in-test app module.
import { convexTest } from "convex-test";
import { anyApi, defineSchema, type ApiFromModules } from "convex/server";
import { ConvexError } from "convex/values";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import DefaultRateLimiter, {
  HOUR,
  isInvalidRateLimitError,
  isRateLimitError,
  MINUTE,
  RateLimiter,
  SECOND,
  type RateLimitConfig,
} from "../src/client/index.js";
import { register } from "../src/test.js";
import { components, convexErrorData, errorOf, makeTest } from "./setup.js";

const T0 = Date.UTC(2025, 5, 1, 9, 30, 0, 0);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

const rateLimiter = new RateLimiter(components.rateLimiter, {
  failedLogins: { kind: "token bucket", rate: 10, period: HOUR },
  sendMessage: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
  freeTrialSignUp: { kind: "fixed window", rate: 100, period: HOUR },
});

describe("failed logins: 10 per hour", () => {
  test("10 immediate attempts pass, the 11th waits exactly 6 minutes, reset clears it", async () => {
    const t = makeTest();
    const attempt = () => t.run((ctx) => rateLimiter.limit(ctx, "failedLogins", { key: "alice" }));
    // The 10 at one instant, T0, in one transaction: convex-test's clock moves with commits, so 10
    // separate calls would be spread over 2 ms. The 11th is the second transaction at T0.
    await t.run(async (ctx) => {
      for (let i = 0; i < 10; i++) expect((await rateLimiter.limit(ctx, "failedLogins", { key: "alice" })).ok).toBe(true);
    });
    const eleventh = await attempt();
    expect(eleventh).toMatchObject({ ok: false, retryAfter: 6 * MINUTE }); // one token per HOUR / 10
    // Another user is unaffected.
    expect((await t.run((ctx) => rateLimiter.limit(ctx, "failedLogins", { key: "bob" }))).ok).toBe(true);
    vi.advanceTimersByTime(6 * MINUTE - 1);
    expect((await attempt()).ok).toBe(false);
    vi.advanceTimersByTime(1);
    expect((await attempt()).ok).toBe(true);
    expect((await attempt()).retryAfter).toBe(6 * MINUTE);
    // A successful login resets the count: 10 more attempts pass at once.
    await t.run((ctx) => rateLimiter.reset(ctx, "failedLogins", { key: "alice" }));
    for (let i = 0; i < 10; i++) expect((await attempt()).ok).toBe(true);
    expect((await attempt()).ok).toBe(false);
  });
});

describe("sendMessage: 10 per minute, bursts of 3", () => {
  test("a burst of 3 passes, then one every 6 s; idle time never banks more than 3", async () => {
    const t = makeTest();
    const send = (throws = false) =>
      t.run((ctx) => rateLimiter.limit(ctx, "sendMessage", { key: "u1", throws }));
    // A burst is one instant: one transaction at T0 (convex-test's clock moves with commits), then
    // the 4th, a second transaction at T0.
    const burst = (throws = false) =>
      t.run(async (ctx) => {
        for (let i = 0; i < 3; i++) expect((await rateLimiter.limit(ctx, "sendMessage", { key: "u1", throws })).ok).toBe(true);
      });
    await burst();
    expect(await send()).toMatchObject({ ok: false, retryAfter: 6 * SECOND });
    vi.advanceTimersByTime(6 * SECOND);
    expect((await send()).ok).toBe(true);
    expect((await send()).ok).toBe(false);
    vi.advanceTimersByTime(10 * MINUTE); // idle: the bucket fills to its capacity, 3
    await burst(true);
    const e = await errorOf(send(true));
    expect(isRateLimitError(e)).toBe(true);
    if (!isRateLimitError(e)) return;
    expect(e.data).toEqual({ kind: "RateLimited", name: "sendMessage", retryAfter: 6 * SECOND });
  });

  test("check (from a query) agrees with limit and takes nothing; limit works from an action", async () => {
    const t = makeTest();
    expect(await t.query((ctx) => rateLimiter.check(ctx, "sendMessage", { key: "u", count: 3 }))).toMatchObject({ ok: true });
    expect(
      await t.action((ctx) =>
        rateLimiter.limit(ctx, "sendMessage", { key: "u", count: 2 }),
      ),
    ).toMatchObject({ ok: true });
    expect(await t.query((ctx) => rateLimiter.check(ctx, "sendMessage", { key: "u", count: 2 }))).toMatchObject({
      ok: false,
      retryAfter: 6 * SECOND,
    });
    // Upstream's shape by default (an unsharded config has shards: 1), `total` when asked for.
    expect(await t.query((ctx) => rateLimiter.getValue(ctx, "sendMessage", { key: "u" }))).toEqual({
      value: 1,
      ts: T0,
      shard: 0,
      config: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3, shards: 1 },
    });
    expect(await t.query((ctx) => rateLimiter.getValue(ctx, "sendMessage", { key: "u", details: true }))).toMatchObject({
      total: { value: 1, capacity: 3, exact: true },
    });
  });

  test("a reservation says when to run the work", async () => {
    const t = makeTest();
    // The 3 at T0 in one transaction, the first reservation a second at T0; the next a second later
    // (explicit: convex-test's clock moves with commits).
    await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await rateLimiter.limit(ctx, "sendMessage", { key: "u" });
    });
    const r = await t.run((ctx) => rateLimiter.limit(ctx, "sendMessage", { key: "u", reserve: true }));
    expect(r).toMatchObject({ ok: true, retryAfter: 6 * SECOND });
    vi.setSystemTime(T0 + SECOND);
    const r2 = await t.run((ctx) => rateLimiter.limit(ctx, "sendMessage", { key: "u", reserve: true }));
    expect(r2).toMatchObject({ ok: true, retryAfter: 11 * SECOND }); // due at T0 + 12 s, like the first plus 6 s
  });
});

describe("unnamed limits take an inline config", () => {
  const config: RateLimitConfig = { kind: "fixed window", rate: 2, period: MINUTE, start: T0 };

  test("limit, check, getValue and reset all use it", async () => {
    const t = makeTest();
    const adhoc = (n: number) => t.run((ctx) => rateLimiter.limit(ctx, "adhoc", { config, count: n }));
    expect((await adhoc(2)).ok).toBe(true);
    expect(await adhoc(1)).toMatchObject({ ok: false, retryAfter: MINUTE });
    expect(await t.query((ctx) => rateLimiter.check(ctx, "adhoc", { config }))).toMatchObject({ ok: false });
    expect(await t.query((ctx) => rateLimiter.getValue(ctx, "adhoc", { config }))).toMatchObject({
      value: 0,
      ts: T0,
      config: { kind: "fixed window", rate: 2, capacity: 2, start: 0 }, // T0 is a whole minute: phase 0
    });
    await t.run((ctx) => rateLimiter.reset(ctx, "adhoc", { config }));
    expect((await adhoc(2)).ok).toBe(true);
  });

  test("an inline config on a name the limiter doesn't know is a separate limit per name", async () => {
    const t = makeTest();
    await t.run((ctx) => rateLimiter.limit(ctx, "one", { config, count: 2 }));
    expect((await t.run((ctx) => rateLimiter.limit(ctx, "two", { config, count: 2 }))).ok).toBe(true);
  });

  test("RateLimiter is also the default export", () => {
    expect(DefaultRateLimiter).toBe(RateLimiter);
  });

  test("a malformed named config fails when the limiter is constructed", async () => {
    const e = await errorOf(
      () => new RateLimiter(components.rateLimiter, { bad: { kind: "token bucket", rate: 10, period: 0 } }),
    );
    if (!isInvalidRateLimitError(e)) throw e;
    expect(e.data).toMatchObject({ kind: "InvalidRateLimit", field: "config.period" });
  });
});

describe("isRateLimitError narrows and never throws", () => {
  const rateLimited = { kind: "RateLimited", name: "n", retryAfter: 5 };
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const inputs: [string, unknown, boolean][] = [
    ["undefined", undefined, false],
    ["null", null, false],
    ["a string", "RateLimited", false],
    ["a number", 42, false],
    ["NaN", NaN, false],
    ["a symbol", Symbol("RateLimited"), false],
    ["a bigint", 10n, false],
    ["a function", () => rateLimited, false],
    ["an empty object", {}, false],
    ["an array", [rateLimited], false],
    ["a plain Error", new Error("RateLimited"), false],
    ["data: null", { data: null }, false],
    ["data: a string", { data: "RateLimited" }, false],
    ["data: an array", { data: ["RateLimited"] }, false],
    ["kind only", { data: { kind: "RateLimited" } }, false],
    ["retryAfter as a string", { data: { ...rateLimited, retryAfter: "5" } }, false],
    ["name as a number", { data: { ...rateLimited, name: 1 } }, false],
    // The other error kind: isInvalidRateLimitError's, not this one's.
    ["an InvalidRateLimit error", { data: { kind: "InvalidRateLimit", field: "count", value: "-1", message: "" } }, false],
    ["a ConvexError with a string", new ConvexError("RateLimited"), false],
    ["a prototype-less data object", { data: Object.assign(Object.create(null), rateLimited) }, true],
    ["a plain object shaped like one", { data: rateLimited }, true],
    ["a ConvexError shaped like one", new ConvexError(rateLimited), true],
  ];
  test.each(inputs)("%s", (what, input, expected) => {
    expect(isRateLimitError(input)).toBe(expected);
    expect(isInvalidRateLimitError(input)).toBe(what === "an InvalidRateLimit error");
  });

  // Hostile inputs: an error whose `data` getter throws, a revoked Proxy, a Proxy that throws on every access.
  const throwing = new Proxy(
    {},
    {
      get() {
        throw new Error("get");
      },
      has() {
        throw new Error("has");
      },
      getPrototypeOf() {
        throw new Error("getPrototypeOf");
      },
    },
  );
  const hostile: [string, unknown][] = [
    [
      "a data getter that throws",
      {
        get data(): unknown {
          throw new Error("data");
        },
      },
    ],
    ["a revoked Proxy", revoked.proxy],
    ["a Proxy that throws on every access", throwing],
    ["data is a Proxy that throws on every access", { data: throwing }],
  ];
  test.each(hostile)("%s gives false", (_, input) => {
    expect(() => isRateLimitError(input)).not.toThrow();
    expect(() => isInvalidRateLimitError(input)).not.toThrow();
    expect(isRateLimitError(input)).toBe(false);
  });

  test("a real RateLimited error from throws: true is recognized and typed", async () => {
    const t = makeTest();
    // The 3 in one transaction at T0, so the refusal is a second at T0 (convex-test's clock moves with commits).
    await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await rateLimiter.limit(ctx, "sendMessage");
    });
    const e = await errorOf(t.run((ctx) => rateLimiter.limit(ctx, "sendMessage", { throws: true })));
    if (!isRateLimitError(e)) throw new Error("not recognized");
    const retryAfter: number = e.data.retryAfter;
    expect(retryAfter).toBe(6 * SECOND);
    expect(e.data.name).toBe("sendMessage");
  });
});

// hookAPI's functions, exported from an app module the way an app's convex/ folder would.
const seenKeys: (string | undefined)[] = [];
const hooks = {
  byClientKey: rateLimiter.hookAPI("sendMessage", {
    key: (_ctx, keyFromClient) => {
      seenKeys.push(keyFromClient);
      return `user:${keyFromClient ?? "anonymous"}`;
    },
  }),
  byIdentity: rateLimiter.hookAPI("sendMessage", {
    key: async (ctx) => (await ctx.auth.getUserIdentity())?.subject ?? "anonymous",
  }),
  global: rateLimiter.hookAPI("freeTrialSignUp"),
  fixedKey: rateLimiter.hookAPI("sendMessage", { key: "shared" }),
  playground: rateLimiter.hookAPI("sendMessage", { allowClientConfig: true }),
};
const appModule = {
  getByClientKey: hooks.byClientKey.getRateLimit,
  getByIdentity: hooks.byIdentity.getRateLimit,
  getGlobal: hooks.global.getRateLimit,
  getFixedKey: hooks.fixedKey.getRateLimit,
  getPlayground: hooks.playground.getRateLimit,
  getServerTime: hooks.global.getServerTime,
};
const api = anyApi as unknown as ApiFromModules<{ hooks: typeof appModule }>;

function makeAppTest() {
  const t = convexTest(defineSchema({}), {
    ...import.meta.glob("./app/**/*.ts"),
    "./app/hooks.ts": async () => appModule,
  });
  register(t);
  return t;
}

describe("hookAPI", () => {
  test("the key function receives the client's key and the server decides the key", async () => {
    const t = makeAppTest();
    seenKeys.length = 0;
    await t.run((ctx) => rateLimiter.limit(ctx, "sendMessage", { key: "user:bob", count: 2 }));
    const bob = await t.query(api.hooks.getByClientKey, { key: "bob" });
    expect(bob).toMatchObject({ value: 1, ts: T0, total: { value: 1, capacity: 3 } });
    expect(await t.query(api.hooks.getByClientKey, {})).toMatchObject({ value: 3 });
    expect(seenKeys).toEqual(["bob", undefined]);
  });

  test("a key function can use the caller's identity", async () => {
    const t = makeAppTest();
    await t.run((ctx) => rateLimiter.limit(ctx, "sendMessage", { key: "alice-subject", count: 3 }));
    expect(await t.withIdentity({ subject: "alice-subject" }).query(api.hooks.getByIdentity, {})).toMatchObject({ value: 0 });
    expect(await t.withIdentity({ subject: "carol" }).query(api.hooks.getByIdentity, {})).toMatchObject({ value: 3 });
    expect(await t.query(api.hooks.getByIdentity, {})).toMatchObject({ value: 3 });
  });

  test("a client key without a key function is refused", async () => {
    const t = makeAppTest();
    expect(await convexErrorData(t.query(api.hooks.getGlobal, { key: "someone" }))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "key",
    });
    expect(await convexErrorData(t.query(api.hooks.getFixedKey, { key: "other" }))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "key",
    });
    // The key the server chose anyway, and no key at all, are fine.
    expect(await t.query(api.hooks.getFixedKey, { key: "shared" })).toMatchObject({ value: 3 });
    expect(await t.query(api.hooks.getGlobal, {})).toMatchObject({ value: 100 });
  });

  test("a client's name or config is refused unless allowClientConfig is set", async () => {
    const t = makeAppTest();
    const config: RateLimitConfig = { kind: "token bucket", rate: 1000, period: SECOND };
    expect(await convexErrorData(t.query(api.hooks.getGlobal, { name: "sendMessage" }))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "name",
    });
    expect(await convexErrorData(t.query(api.hooks.getGlobal, { config }))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "config",
    });
    expect(await convexErrorData(t.query(api.hooks.getByClientKey, { key: "x", config }))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "config",
    });
    // Its own name is harmless.
    expect(await t.query(api.hooks.getGlobal, { name: "freeTrialSignUp" })).toMatchObject({ value: 100 });
    // The playground may choose both.
    expect(await t.query(api.hooks.getPlayground, { name: "other", config })).toMatchObject({
      value: 1000,
      config: { rate: 1000, period: SECOND },
    });
    await t.run((ctx) => rateLimiter.limit(ctx, "freeTrialSignUp", { count: 40 }));
    expect(await t.query(api.hooks.getPlayground, { name: "freeTrialSignUp", config: { kind: "fixed window", rate: 100, period: HOUR } })).toMatchObject({ value: 60 });
  });

  test("getServerTime returns the server's (fake) clock", async () => {
    const t = makeAppTest();
    expect(await t.mutation(api.hooks.getServerTime, {})).toBe(T0);
    vi.advanceTimersByTime(12_345);
    expect(await t.mutation(api.hooks.getServerTime, {})).toBe(T0 + 12_345);
  });
});
