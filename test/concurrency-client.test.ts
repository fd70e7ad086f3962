// Concurrency limits as an app uses them: RateLimiter.acquire, release, extend, check, getValue, reset and cleanup on convex-test with the component installed by register(), fake timers for the lease clock, and the bad-input matrix (each row names the field the error must name). The limitAll/acquire all-or-nothing pattern in one mutation, through its rollback.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, isRateLimitError, MINUTE, RateLimiter, SECOND } from "../src/client/index.js";
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
  generations: { kind: "concurrency", capacity: 2, lease: 5 * MINUTE },
  sendMessage: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
});

describe("generations: at most 2 in flight per user, 5-minute leases", () => {
  test("two acquire, the third waits exactly for the earliest expiry; a release frees a slot at once", async () => {
    const t = makeTest();
    const acquire = (key = "alice") => t.run((ctx) => rateLimiter.acquire(ctx, "generations", { key }));
    const a = await acquire();
    vi.advanceTimersByTime(SECOND);
    const b = await acquire();
    expect(a).toMatchObject({ ok: true, expiresAt: T0 + 5 * MINUTE });
    expect(b).toMatchObject({ ok: true, expiresAt: T0 + SECOND + 5 * MINUTE });
    vi.advanceTimersByTime(SECOND);
    expect(await acquire()).toEqual({ ok: false, retryAfter: 5 * MINUTE - 2 * SECOND });
    expect((await acquire("bob")).ok).toBe(true); // another user is unaffected
    // A second later (explicit: convex-test's clock moves with commits, two already at T0 + 2 s).
    vi.advanceTimersByTime(SECOND);
    expect(await t.run((ctx) => rateLimiter.check(ctx, "generations", { key: "alice" }))).toEqual({
      ok: false,
      retryAfter: 5 * MINUTE - 3 * SECOND,
    });
    if (!b.ok) throw new Error("b was admitted");
    expect(await t.run((ctx) => rateLimiter.release(ctx, b.lease))).toEqual({ released: true });
    expect(await t.run((ctx) => rateLimiter.release(ctx, b.lease))).toEqual({ released: false }); // idempotent
    expect(await t.run((ctx) => rateLimiter.release(ctx, "not a lease"))).toEqual({ released: false });
    expect(await t.run((ctx) => rateLimiter.check(ctx, "generations", { key: "alice" }))).toEqual({ ok: true });
    expect((await acquire()).ok).toBe(true);
  });

  test("a crashed holder's slot frees exactly at its lease's expiry, with no job", async () => {
    const t = makeTest();
    const acquire = () => t.run((ctx) => rateLimiter.acquire(ctx, "generations", { key: "alice" }));
    // Two holders at T0, in one transaction so that a read after it is at T0 too (convex-test's
    // clock moves with commits); both crash: never released.
    await t.run(async (ctx) => {
      for (let i = 0; i < 2; i++) await rateLimiter.acquire(ctx, "generations", { key: "alice" });
    });
    // A read is a query: it commits nothing, so it doesn't move the clock.
    const value = () => t.query((ctx) => rateLimiter.getValue(ctx, "generations", { key: "alice" }));
    expect(await value()).toEqual({ inFlight: 2, capacity: 2, ts: T0, earliestExpiry: T0 + 5 * MINUTE });
    vi.advanceTimersByTime(5 * MINUTE - 1);
    expect(await acquire()).toEqual({ ok: false, retryAfter: 1 });
    vi.advanceTimersByTime(1);
    expect(await value()).toEqual({ inFlight: 0, capacity: 2, ts: T0 + 5 * MINUTE });
    expect((await acquire()).ok).toBe(true);
    expect((await acquire()).ok).toBe(true);
    expect((await acquire()).ok).toBe(false);
  });

  test("extend keeps a lease for long work; an expired lease can't be extended", async () => {
    const t = makeTest();
    const a = await t.run((ctx) => rateLimiter.acquire(ctx, "generations", { key: "alice" }));
    if (!a.ok) throw new Error("admitted");
    vi.advanceTimersByTime(4 * MINUTE);
    expect(await t.run((ctx) => rateLimiter.extend(ctx, a.lease))).toEqual({ ok: true, expiresAt: T0 + 9 * MINUTE });
    vi.advanceTimersByTime(2 * MINUTE); // past the first expiry, within the extended one
    expect((await t.run((ctx) => rateLimiter.getValue(ctx, "generations", { key: "alice" }))).inFlight).toBe(1);
    expect(await t.run((ctx) => rateLimiter.extend(ctx, a.lease, { by: HOUR }))).toEqual({ ok: true, expiresAt: T0 + 6 * MINUTE + HOUR });
    vi.advanceTimersByTime(HOUR);
    expect(await t.run((ctx) => rateLimiter.extend(ctx, a.lease))).toEqual({ ok: false });
    expect(await t.run((ctx) => rateLimiter.release(ctx, a.lease))).toEqual({ released: false });
  });

  test("throws: a RateLimited error naming the limit, from acquire and check", async () => {
    const t = makeTest();
    // Both slots taken at T0 in one transaction, so the calls after it are at T0 too (convex-test's clock moves with commits).
    await t.run(async (ctx) => {
      for (let i = 0; i < 2; i++) await rateLimiter.acquire(ctx, "generations", { key: "alice" });
    });
    const error = await errorOf(t.run((ctx) => rateLimiter.acquire(ctx, "generations", { key: "alice", throws: true })));
    expect(isRateLimitError(error)).toBe(true);
    expect(await convexErrorData(t.run((ctx) => rateLimiter.check(ctx, "generations", { key: "alice", throws: true })))).toEqual({
      kind: "RateLimited",
      name: "generations",
      retryAfter: 5 * MINUTE,
    });
  });

  test("reset frees every slot of the key at once; the rate limits' reset is unchanged", async () => {
    const t = makeTest();
    for (let i = 0; i < 2; i++) await t.run((ctx) => rateLimiter.acquire(ctx, "generations", { key: "alice" }));
    await t.run((ctx) => rateLimiter.acquire(ctx, "generations", { key: "bob" }));
    await t.run((ctx) => rateLimiter.reset(ctx, "generations", { key: "alice" }));
    expect((await t.run((ctx) => rateLimiter.getValue(ctx, "generations", { key: "alice" }))).inFlight).toBe(0);
    expect((await t.run((ctx) => rateLimiter.getValue(ctx, "generations", { key: "bob" }))).inFlight).toBe(1);
    for (let i = 0; i < 3; i++) await t.run((ctx) => rateLimiter.limit(ctx, "sendMessage", { key: "alice" }));
    await t.run((ctx) => rateLimiter.reset(ctx, "sendMessage", { key: "alice" }));
    expect((await t.run((ctx) => rateLimiter.limit(ctx, "sendMessage", { key: "alice" }))).ok).toBe(true);
  });

  test("a lease taken in a mutation that then throws is rolled back with it", async () => {
    const t = makeTest();
    await errorOf(
      t.run(async (ctx) => {
        await rateLimiter.acquire(ctx, "generations", { key: "alice" });
        throw new Error("the work failed to start");
      }),
    );
    expect((await t.run((ctx) => rateLimiter.getValue(ctx, "generations", { key: "alice" }))).inFlight).toBe(0);
  });

  test("cleanup deletes the expired leases, and only those", async () => {
    const t = makeTest();
    await t.run((ctx) => rateLimiter.acquire(ctx, "generations", { key: "alice" }));
    vi.advanceTimersByTime(3 * MINUTE);
    await t.run((ctx) => rateLimiter.acquire(ctx, "generations", { key: "bob" }));
    vi.advanceTimersByTime(2 * MINUTE); // alice's expired at this instant, bob's has 3 minutes left
    await t.run((ctx) => rateLimiter.cleanup(ctx));
    expect(await t.run((ctx) => ctx.runMutation(components.rateLimiter.leases.deleteExpired, {}))).toEqual({ deleted: 0, done: true });
    expect((await t.run((ctx) => rateLimiter.getValue(ctx, "generations", { key: "bob" }))).inFlight).toBe(1);
    vi.advanceTimersByTime(3 * MINUTE);
    expect(await t.run((ctx) => ctx.runMutation(components.rateLimiter.leases.deleteExpired, {}))).toEqual({ deleted: 1, done: true });
  });
});

describe("bad input names the field", () => {
  const configs: [config: unknown, field: string, why: string][] = [
    [{ kind: "concurrency", capacity: 2, lease: MINUTE, shards: 4 }, "config.shards", "a concurrency limit can't be sharded"],
    [{ kind: "concurrency", capacity: 0, lease: MINUTE }, "config.capacity", "no slots: no acquire could ever succeed"],
    [{ kind: "concurrency", capacity: 1.5, lease: MINUTE }, "config.capacity", "slots are whole"],
    [{ kind: "concurrency", capacity: 1001, lease: MINUTE }, "config.capacity", "each acquire reads every lease: at most 1000"],
    [{ kind: "concurrency", capacity: Number.NaN, lease: MINUTE }, "config.capacity", "NaN is no number of slots"],
    [{ kind: "concurrency", capacity: 2, lease: 0 }, "config.lease", "a lease that is over before it starts"],
    [{ kind: "concurrency", capacity: 2, lease: Infinity }, "config.lease", "a lease that never expires defeats the safety net"],
    [{ kind: "concurrency", capacity: 2, lease: "1m" }, "config.lease", "ms, a number"],
    [{ kind: "concurrency", max: 2, lease: MINUTE }, "config.max", "another limiter's name for capacity (suggested)"],
    [{ kind: "concurrency", capacity: 2 }, "config.lease", "a lease time is required"],
    [{ kind: "concurrency", capacity: 2, lease: MINUTE, rate: 1 }, "config.rate", "a rate limit's field"],
    [{ kind: "concurrency", capacity: 2, lease: MINUTE, metrics: "yes" }, "config.metrics", "metrics is a boolean"],
    [{ kind: "concurrency", capacity: 2, lease: MINUTE, dryRun: true }, "config.dryRun", "an acquire is never a dry run"],
  ];
  test.each(configs)("constructor: %o → %s (%s)", async (config, field) => {
    const data = await convexErrorData(() => new RateLimiter(components.rateLimiter, { gen: config as never }));
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field });
  });

  test("max is suggested as capacity", async () => {
    const data = await convexErrorData(
      () => new RateLimiter(components.rateLimiter, { gen: { kind: "concurrency", max: 2, lease: MINUTE } as never }),
    );
    expect(data).toMatchObject({ message: expect.stringContaining("did you mean capacity?") });
  });

  const calls: [call: string, run: (ctx: Parameters<typeof rateLimiter.acquire>[0]) => Promise<unknown>, field: string][] = [
    ["limit on a concurrency limit (from JavaScript)", (ctx) => rateLimiter.limit(ctx, "generations" as never), "name"],
    ["acquire on a rate limit (from JavaScript)", (ctx) => rateLimiter.acquire(ctx, "sendMessage" as never), "name"],
    ["acquire with a key that isn't a string", (ctx) => rateLimiter.acquire(ctx, "generations", { key: 7 as never }), "key"],
    ["check with a count (a lease is one slot)", (ctx) => rateLimiter.check(ctx, "generations", { count: 2 }), "count"],
    ["check with reserve", (ctx) => rateLimiter.check(ctx, "generations", { reserve: true }), "reserve"],
    ["getValue with sampleShards", (ctx) => rateLimiter.getValue(ctx, "generations", { sampleShards: 2 }), "sampleShards"],
    ["extend by 0 ms", (ctx) => rateLimiter.extend(ctx, "x", { by: 0 }), "by"],
    ["extend by NaN", (ctx) => rateLimiter.extend(ctx, "x", { by: Number.NaN }), "by"],
    ["a key too long", (ctx) => rateLimiter.acquire(ctx, "generations", { key: "k".repeat(1025) }), "key"],
    // limitAll and checkAll take rate limits only: the field names the request
    ["limitAll with a concurrency limit (from JavaScript)", (ctx) => rateLimiter.limitAll(ctx, [{ name: "sendMessage" }, { name: "generations" }] as never), "requests[1].name"],
    ["checkAll with a concurrency limit (from JavaScript)", (ctx) => rateLimiter.checkAll(ctx, [{ name: "generations" }] as never), "requests[0].name"],
  ];
  test.each(calls)("%s → %s", async (_call, run, field) => {
    const t = makeTest();
    expect(await convexErrorData(t.run((ctx) => run(ctx)))).toMatchObject({ kind: "InvalidRateLimit", field });
  });

  test("the component refuses a bad config itself, naming the field", async () => {
    const t = makeTest();
    const data = await convexErrorData(
      t.run((ctx) =>
        ctx.runMutation(components.rateLimiter.leases.acquire, { name: "gen", config: { kind: "concurrency", capacity: -1, lease: 1 } }),
      ),
    );
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field: "config.capacity" });
  });
});

describe("a slot and tokens together, all or nothing (limitAll takes rate limits only)", () => {
  test("limitAll and acquire in one mutation with throws: a refused acquire rolls back the tokens", async () => {
    const t = makeTest();
    const both = () =>
      t.run(async (ctx) => {
        await rateLimiter.limitAll(ctx, [{ name: "sendMessage", key: "ada" }], { throws: true });
        return rateLimiter.acquire(ctx, "generations", { key: "ada", throws: true });
      });
    expect((await both()).ok).toBe(true);
    expect((await both()).ok).toBe(true);
    // 6 s later (explicit: convex-test's clock moves with commits), one token is back: 3 - 2 + 1.
    vi.setSystemTime(T0 + 6 * SECOND);
    // Both slots held: the acquire throws, and the mutation's rollback gives the token back.
    expect(await convexErrorData(both())).toMatchObject({ kind: "RateLimited", name: "generations" });
    const value = await t.run((ctx) => rateLimiter.getValue(ctx, "sendMessage", { key: "ada" }));
    expect(value).toMatchObject({ value: 2, ts: T0 + 6 * SECOND }); // the third call took nothing
    expect((await t.run((ctx) => rateLimiter.getValue(ctx, "generations", { key: "ada" }))).inFlight).toBe(2);
  });
});
