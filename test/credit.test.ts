// credit through the client on convex-test with fake timers: tokens given back never lift a shard
// above its capacity, go to the shards the tokens came from when told, repay debt, work for
// asynchronous limits, and a bad count is refused naming the field.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, type RateLimitConfig } from "../src/client/index.js";
import { seededRandom } from "../tools/random.js";
import { convexErrorData, inspectable, makeInspectableTest } from "./setup.js";

const T0 = Date.UTC(2025, 6, 1);
const api = inspectable.rateLimiter;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  vi.spyOn(Math, "random").mockImplementation(seededRandom(5));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const rl = new RateLimiter(api, {
  budget: { kind: "token bucket", rate: 10, period: MINUTE, maxReserved: 20 },
  sharded: { kind: "token bucket", rate: 40, period: MINUTE, shards: 4 },
  hot: { kind: "token bucket", rate: 10, period: MINUTE, applyUpdates: "asynchronously" },
});
type T = ReturnType<typeof makeInspectableTest>;
const rows = (t: T) => t.run((ctx) => ctx.runQuery(api.inspect.rows, {}));

describe("credit", () => {
  test("gives back what was taken, and never more than the capacity holds", async () => {
    const t = makeInspectableTest();
    // One transaction, so every call sees T0 and nothing refills between them (convex-test's clock
    // moves with commits).
    await t.run(async (ctx) => {
      await rl.limit(ctx, "budget", { key: "u", count: 6 });
      expect(await rl.credit(ctx, "budget", { key: "u", count: 4 })).toEqual({ credited: 4 });
      expect((await rl.getValue(ctx, "budget", { key: "u" })).value).toBe(8);
      // 5 more would lift it above 10: only 2 go back.
      expect(await rl.credit(ctx, "budget", { key: "u", count: 5 })).toEqual({ credited: 2 });
    });
    // A full (or never used) key takes nothing back, and nothing is written for it.
    expect(await t.run((ctx) => rl.credit(ctx, "budget", { key: "fresh", count: 3 }))).toEqual({ credited: 0 });
    expect((await rows(t)).filter((r) => r.key === "fresh")).toEqual([]);
  });

  test("repays a reservation's debt: the unused part of an estimate", async () => {
    const t = makeInspectableTest();
    const reserved = await t.run((ctx) => rl.limit(ctx, "budget", { count: 25, reserve: true }));
    expect(reserved).toEqual({ ok: true, retryAfter: 1.5 * MINUTE }); // 15 owed at 10 a minute
    // The credit and a peek in one transaction, at T0 still: 3 owed now, so the peek is refused for 18 s.
    const peek = await t.run(async (ctx) => {
      await rl.credit(ctx, "budget", { count: 12 });
      return rl.check(ctx, "budget", { count: 0 });
    });
    expect(peek).toEqual({ ok: false, retryAfter: 18_000 });
    // Then ok, and not a millisecond earlier (reads commit nothing, so each sees the time set).
    vi.setSystemTime(T0 + 18_000 - 1);
    expect(await t.query((ctx) => rl.check(ctx, "budget", { count: 0 }))).toEqual({ ok: false, retryAfter: 1 });
    vi.setSystemTime(T0 + 18_000);
    expect(await t.query((ctx) => rl.check(ctx, "budget", { count: 0 }))).toEqual({ ok: true, retryAfter: undefined });
  });

  test("on a sharded limit, the shards the tokens came from", async () => {
    const t = makeInspectableTest();
    const r = await t.run((ctx) => rl.limit(ctx, "sharded", { count: 6, details: true }));
    const used = r.details.shards;
    expect(await t.run((ctx) => rl.credit(ctx, "sharded", { count: 6, shards: used }))).toEqual({ credited: 6 });
    for (const row of await rows(t)) expect(row.value).toBe(10); // every shard full again
  });

  test("on a sharded limit without shards: refused naming shards, nothing written", async () => {
    // Two shards of 10: a credit to the shard the token didn't come from would outlast the take.
    const t = makeInspectableTest();
    await t.run((ctx) => rl.limit(ctx, "sharded", { count: 6 }));
    const before = await rows(t);
    expect(await convexErrorData(t.run((ctx) => rl.credit(ctx, "sharded", { count: 6 })))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "shards",
    });
    expect(await rows(t)).toEqual(before);
  });

  test("an asynchronous limit records the credit for the applier; decisions count it at once", async () => {
    const t = makeInspectableTest();
    for (let i = 0; i < 10; i++) await t.run((ctx) => rl.limit(ctx, "hot"));
    expect((await t.run((ctx) => rl.check(ctx, "hot"))).ok).toBe(false);
    expect(await t.run((ctx) => rl.credit(ctx, "hot", { count: 2 }))).toEqual({ credited: 2 });
    expect((await t.run((ctx) => rl.check(ctx, "hot", { count: 2 }))).ok).toBe(true);
    expect((await t.run((ctx) => rl.check(ctx, "hot", { count: 3 }))).ok).toBe(false);
  });

  test.each([
    // [why, count]
    ["a negative count: credits are explicit, and limit refuses it too", -2],
    ["zero", 0],
    ["NaN", Number.NaN],
  ])("%s is an InvalidRateLimit naming count", async (_why, count) => {
    const t = makeInspectableTest();
    expect(await convexErrorData(t.run((ctx) => rl.credit(ctx, "budget", { count })))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "count",
    });
    if (count < 0) {
      expect(await convexErrorData(t.run((ctx) => rl.limit(ctx, "budget", { count })))).toMatchObject({ field: "count" });
    }
  });

  test("a shard the limit doesn't have is an InvalidRateLimit naming shards", async () => {
    const t = makeInspectableTest();
    const config: RateLimitConfig = { kind: "token bucket", rate: 4, period: MINUTE, shards: 2 };
    expect(await convexErrorData(t.run((ctx) => rl.credit(ctx, "other", { config, count: 1, shards: [2] })))).toMatchObject({
      field: "shards",
    });
  });
});
