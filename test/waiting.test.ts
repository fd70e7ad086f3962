// Waiting until allowed through the published register() helper and the typed client (the app is
// test/app/waiting.ts), on convex-test's scheduler under fake timers stepped timer by timer, so
// each run starts at its own instant: runWhenAllowed, cancelRun, waitUntilAllowed, their order,
// maxWait, blocks, dry runs, shards, asynchronous mode, metrics and every bad input.
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, MINUTE, SECOND, type WaitOptions } from "../src/client/index.js";
import type * as waiting from "./app/waiting.js";
import { rateLimiter, schema, sendRef } from "./app/waiting.js";
import { components, convexErrorData, makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ waiting: typeof waiting }>;
// On the hour, so the fixed window's windows start at T0.
const T0 = Date.UTC(2030, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

type T = ReturnType<typeof makeTest>;

/**
 * Runs the scheduler timer by timer, each job at its own instant, and returns the instants the
 * jobs were due at (the fake clock when each fired), in the order they fired: every job, or
 * those due at the first instants, until at least `most` have.
 */
async function runAll(t: T, most = 1000): Promise<number[]> {
  const fired: number[] = [];
  while (fired.length < most && vi.getTimerCount() > 0) {
    const before = vi.getTimerCount();
    // Fires every timer due at the next instant that has one (vitest ticks 0 after it).
    vi.advanceTimersToNextTimer();
    for (let i = vi.getTimerCount(); i < before; i++) fired.push(Date.now());
    await t.finishInProgressScheduledFunctions();
  }
  return fired;
}

/** Queues `n` sends to `to0`, `to1`, … in one transaction, at one instant (T0 unless the clock moved). */
function burst(t: T, n: number, options: WaitOptions = {}, name: "emails" | "hourly" | "bounded" | "sharded" | "hot" | "metered" | "dry" | "window" = "emails") {
  return t.run(async (ctx) => {
    const out = [];
    for (let i = 0; i < n; i++) out.push(await rateLimiter.runWhenAllowed(ctx, name, options, sendRef, { to: `to${i}` }));
    return out;
  });
}

describe("runWhenAllowed", () => {
  test("a burst runs in order, each at the first instant the token bucket allows it", async () => {
    const t = makeTest(schema);
    const results = await burst(t, 5, { key: "a" });
    // 2 at once (the bucket is full), then one every 30 s.
    expect(results.map((r) => (r.ok ? r.runAt - T0 : null))).toEqual([0, 0, 30 * SECOND, 60 * SECOND, 90 * SECOND]);
    const ids = results.map((r) => (r.ok ? r.id : ""));
    expect(new Set(ids).size).toBe(5);
    const fired = await runAll(t);
    const sent = await t.query(api.waiting.sent, {});
    // In the order accepted, never before runAt.
    expect(sent.map((s) => s.to)).toEqual(["to0", "to1", "to2", "to3", "to4"]);
    sent.forEach((s, i) => expect(s.at).toBeGreaterThanOrEqual(T0 + [0, 0, 30, 60, 90][i]! * SECOND));
    expect(fired.map((f) => f - T0)).toEqual([0, 0, 30 * SECOND, 60 * SECOND, 90 * SECOND]);
  });

  test("the tokens are taken at once: later callers queue behind, and limit is refused meanwhile", async () => {
    const t = makeTest(schema);
    await burst(t, 3, { key: "a" });
    // A plain request now finds the key owing: refused until the last reservation is repaid.
    expect(await t.run((ctx) => rateLimiter.limit(ctx, "emails", { key: "a" }))).toEqual({ ok: false, retryAfter: 60 * SECOND });
    // Another key is untouched.
    expect(await t.run((ctx) => rateLimiter.limit(ctx, "emails", { key: "b" }))).toEqual({ ok: true });
  });

  test("a fixed window: runs at the windows' starts, 3 per window", async () => {
    const t = makeTest(schema);
    const results = await burst(t, 7, {}, "hourly");
    expect(results.map((r) => (r.ok ? r.runAt - T0 : null))).toEqual([0, 0, 0, HOUR, HOUR, HOUR, 2 * HOUR]);
    await runAll(t);
    const sent = await t.query(api.waiting.sent, {});
    expect(sent.map((s) => s.to)).toEqual(["to0", "to1", "to2", "to3", "to4", "to5", "to6"]);
    // Never more than 3 in any window.
    const perWindow = new Map<number, number>();
    for (const s of sent) perWindow.set(Math.floor((s.at - T0) / HOUR), (perWindow.get(Math.floor((s.at - T0) / HOUR)) ?? 0) + 1);
    expect([...perWindow.values()].every((n) => n <= 3)).toBe(true);
  });

  test("a fixed window: work that can't run in this window doesn't use its leftover, lost at the boundary", async () => {
    const t = makeTest(schema);
    const counts = [2, 2, 1, 1];
    const results = await t.run(async (ctx) => {
      const out = [];
      for (const count of counts) out.push(await rateLimiter.runWhenAllowed(ctx, "hourly", { count }, sendRef, { to: `c${count}` }));
      return out;
    });
    // The first 2 run now, leaving 1 this hour; the next 2 can't, and the next hour grants 3:
    // 2 + 1 then, and the last in the hour after (with the leftover, 4 would run in one hour).
    expect(results.map((r) => (r.ok ? r.runAt - T0 : null))).toEqual([0, HOUR, HOUR, 2 * HOUR]);
  });

  test("an exact sliding window: each run logged at its own instant, never more than 3 in any minute", async () => {
    const t = makeTest(schema);
    const results = await burst(t, 7, {}, "window");
    expect(results.map((r) => (r.ok ? r.runAt - T0 : null))).toEqual([0, 0, 0, MINUTE, MINUTE, MINUTE, 2 * MINUTE]);
    // A plain request meanwhile counts the takes logged ahead: refused until +2 min, when the
    // window ending there holds only the last run (the three at +1 min leave it then).
    // The three due now run; then the clock moves on to +30 s, where no job is due (setSystemTime
    // would move the pending timers with it).
    expect(await runAll(t, 3)).toEqual([T0, T0, T0]);
    vi.advanceTimersByTime(30 * SECOND);
    expect(await t.query(api.waiting.check, { name: "window" })).toEqual({ ok: false, retryAfter: 90 * SECOND });
    const fired = [T0, T0, T0, ...(await runAll(t))];
    const sent = await t.query(api.waiting.sent, {});
    expect(sent.map((s) => s.to)).toEqual(["to0", "to1", "to2", "to3", "to4", "to5", "to6"]);
    // The jobs were due at their runAt, and no minute holds more than 3 of those instants. (Each
    // job starts at or after it: a start a little later, as the clock moves with each commit,
    // is the scheduler's lag, which no limiter decides.)
    expect(fired).toEqual(results.map((r) => (r.ok ? r.runAt : NaN)));
    for (const f of fired) expect(fired.filter((o) => o > f - MINUTE && o <= f).length).toBeLessThanOrEqual(3);
    sent.forEach((s, i) => expect(s.at).toBeGreaterThanOrEqual(fired[i]!));
  });

  test("maxWait: a wait longer than it is refused, writing nothing; retryAfter is when it fits", async () => {
    const t = makeTest(schema);
    await burst(t, 3, { key: "a" }); // the last runs at +30 s
    const [refused, fits] = await t.run(async (ctx) => [
      await rateLimiter.runWhenAllowed(ctx, "emails", { key: "a", maxWait: 40 * SECOND }, sendRef, { to: "refused" }),
      // Exactly maxWait is accepted, and at +60 s: the refusal took nothing.
      await rateLimiter.runWhenAllowed(ctx, "emails", { key: "a", maxWait: 60 * SECOND }, sendRef, { to: "fits" }),
    ]);
    // It would run at +60 s: 20 s more than allowed.
    expect(refused).toEqual({ ok: false, retryAfter: 20 * SECOND });
    expect(fits).toMatchObject({ ok: true, runAt: T0 + 60 * SECOND });
  });

  test("maxWait 0 runs only what may run now; throws turns the refusal into RateLimited", async () => {
    const t = makeTest(schema);
    const results = await burst(t, 3, { key: "a", maxWait: 0 });
    expect(results).toEqual([expect.objectContaining({ ok: true, runAt: T0 }), expect.objectContaining({ ok: true, runAt: T0 }), { ok: false, retryAfter: 30 * SECOND }]);
    expect(await convexErrorData(burst(t, 1, { key: "a", maxWait: 0, throws: true }))).toEqual({ kind: "RateLimited", name: "emails", retryAfter: 30 * SECOND });
  });

  test("the default maxWait is a day", async () => {
    const t = makeTest(schema);
    // One every 12 hours: the third waits exactly a day (accepted), the fourth a day and a half.
    const config = { kind: "token bucket", rate: 1, period: 12 * HOUR } as const;
    const results = await t.run(async (ctx) => {
      const out = [];
      for (let i = 0; i < 4; i++) out.push(await rateLimiter.runWhenAllowed(ctx, "twiceDaily", { config }, sendRef, { to: `to${i}` }));
      return out;
    });
    expect(results.map((r) => (r.ok ? r.runAt - T0 : r))).toEqual([0, 12 * HOUR, 24 * HOUR, { ok: false, retryAfter: 12 * HOUR }]);
  });

  test("maxReserved still bounds the queue", async () => {
    const t = makeTest(schema);
    const results = await burst(t, 6, {}, "bounded");
    // 1 now, 3 reserved ahead, then refused until the first reservation is repaid.
    expect(results.map((r) => r.ok)).toEqual([true, true, true, true, false, false]);
    expect(results[4]).toEqual({ ok: false, retryAfter: MINUTE });
  });

  test("maxReserved bounds a fixed window's queue too", async () => {
    const t = makeTest(schema);
    // 3 an hour, at most 3 reserved ahead (before, a fixed window's queue grew without bound).
    const config = { kind: "fixed window", rate: 3, period: HOUR, start: 0, maxReserved: 3 } as const;
    const results = await t.run(async (ctx) => {
      const out = [];
      for (let i = 0; i < 8; i++) out.push(await rateLimiter.runWhenAllowed(ctx, "windowBounded", { config }, sendRef, { to: `to${i}` }));
      return out;
    });
    // 3 now, 3 in the next hour; then refused until that hour starts, when the line owes nothing.
    expect(results.map((r) => (r.ok ? r.runAt - T0 : r))).toEqual([0, 0, 0, HOUR, HOUR, HOUR, { ok: false, retryAfter: HOUR }, { ok: false, retryAfter: HOUR }]);
  });

  test("a block refuses, and nothing is scheduled inside it", async () => {
    const t = makeTest(schema);
    await t.run((ctx) => rateLimiter.setOverride(ctx, "emails", { key: "bad" }, { blockedUntil: T0 + 10 * MINUTE }));
    expect(await burst(t, 1, { key: "bad" })).toEqual([{ ok: false, retryAfter: 10 * MINUTE }]);
    expect(await runAll(t)).toEqual([]);
  });

  test("a tier's override decides the rate the work waits for", async () => {
    const t = makeTest(schema);
    await t.run((ctx) => rateLimiter.setOverride(ctx, "emails", { tier: "pro" }, { config: { kind: "token bucket", rate: 6, period: MINUTE } }));
    const results = await burst(t, 8, { key: "p", tier: "pro" });
    expect(results.map((r) => (r.ok ? r.runAt - T0 : null))).toEqual([0, 0, 0, 0, 0, 0, 10 * SECOND, 20 * SECOND]);
  });

  test("a dry run schedules the work at once and logs the wait it would have imposed", async () => {
    const t = makeTest(schema);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const results = await burst(t, 2, {}, "dry");
    expect(results.map((r) => (r.ok ? r.runAt : null))).toEqual([T0, T0]);
    expect(log.mock.calls.map((c) => JSON.parse(String(c[0])))).toEqual([{ event: "rateLimit.dryRun", name: "dry", count: 1, retryAfter: MINUTE }]);
  });

  test("a sharded limit: runs wait for the shards their tokens came from, in order", async () => {
    const t = makeTest(schema);
    const results = await burst(t, 8, {}, "sharded");
    const runAts = results.map((r) => (r.ok ? r.runAt : NaN));
    expect(runAts.every((r) => r >= T0)).toBe(true);
    expect([...runAts].sort((a, b) => a - b)).toEqual(runAts);
    // 4 a minute: the 8 took a minute's worth beyond the 4 there were.
    expect(runAts.at(-1)! - T0).toBeLessThanOrEqual(MINUTE);
    expect(runAts.filter((r) => r === T0).length).toBe(4);
  });

  test("an asynchronous limit is decided exactly", async () => {
    const t = makeTest(schema);
    const results = await burst(t, 4, {}, "hot");
    expect(results.map((r) => (r.ok ? r.runAt - T0 : null))).toEqual([0, 0, 30 * SECOND, 60 * SECOND]);
  });

  test("metrics count the queued work as reserved and a refusal for maxWait as refused", async () => {
    const t = makeTest(schema);
    await burst(t, 2, {}, "metered");
    await burst(t, 1, { maxWait: 0 }, "metered");
    const m = await t.run((ctx) => rateLimiter.metrics(ctx, "metered", { from: T0, to: T0 + MINUTE }));
    expect(m.total).toMatchObject({ admitted: 1, reserved: 1, reservedTokens: 1, refused: 1, refusedTokens: 1 });
  });

  test("a failed run keeps its tokens: the work was attempted", async () => {
    const t = makeTest(schema);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const [run] = await t.run(async (ctx) => [await rateLimiter.runWhenAllowed(ctx, "emails", { key: "f", count: 2 }, sendRef, { to: "x", fail: true })]);
    if (!run!.ok) throw new Error("expected ok");
    await runAll(t);
    expect(await t.query(api.waiting.sent, {})).toEqual([]);
    expect(await t.mutation(api.waiting.cancel, { id: run!.id })).toEqual({ cancelled: false, state: "failed" });
    // Both tokens still taken.
    expect((await t.query(api.waiting.check, { name: "emails", key: "f" })).ok).toBe(false);
  });
});

describe("cancelRun", () => {
  test("cancels a run that hasn't started and gives its tokens back, exactly once", async () => {
    const t = makeTest(schema);
    const results = await burst(t, 4, { key: "a" });
    const third = results[2]!;
    if (!third.ok) throw new Error("expected ok");
    expect(await t.mutation(api.waiting.cancel, { id: third.id })).toEqual({ cancelled: true, credited: 1 });
    // Idempotent: nothing more is credited.
    expect(await t.mutation(api.waiting.cancel, { id: third.id })).toEqual({ cancelled: false, state: "canceled" });
    await runAll(t);
    expect((await t.query(api.waiting.sent, {})).map((s) => s.to)).toEqual(["to0", "to1", "to3"]);
  });

  test("work queued after a cancelled run keeps its place: a new run never runs before it", async () => {
    const t = makeTest(schema);
    const results = await burst(t, 4, { key: "a" });
    const ids = results.map((r) => (r.ok ? r.id : ""));
    await t.mutation(api.waiting.cancel, { id: ids[2]! });
    const [late] = await burst(t, 1, { key: "a" });
    // The credit would let it run at +30 s, before the run queued at +60 s: it runs with it instead.
    expect(late).toMatchObject({ ok: true, runAt: T0 + 60 * SECOND });
    await runAll(t);
    expect((await t.query(api.waiting.sent, {})).map((s) => s.to)).toEqual(["to0", "to1", "to3", "to0"]);
  });

  test("gives back no more than keeps the runs queued after it within the limit at their instants", async () => {
    const t = makeTest(schema);
    // 2 run now; 1 more at +30 s.
    const [now2, later] = await t.run(async (ctx) => [
      await rateLimiter.runWhenAllowed(ctx, "emails", { key: "b", count: 2 }, sendRef, { to: "two" }),
      await rateLimiter.runWhenAllowed(ctx, "emails", { key: "b" }, sendRef, { to: "one" }),
    ]);
    expect(later).toMatchObject({ ok: true, runAt: T0 + 30 * SECOND });
    // Cancelled before it starts: the bucket would be full until +30 s, where "one" takes 1 of its
    // 2; giving back both tokens would let 2 more run right after, 3 within a few ms.
    const [cancelled, next] = await t.run(async (ctx) => [
      await rateLimiter.cancelRun(ctx, now2!.ok ? now2!.id : ""),
      await rateLimiter.runWhenAllowed(ctx, "emails", { key: "b", count: 2 }, sendRef, { to: "next" }),
    ]);
    expect(cancelled).toEqual({ cancelled: true, credited: 1 });
    expect(next).toMatchObject({ ok: true, runAt: T0 + 60 * SECOND });
  });

  test("a run that finished is untouched, and the call says so", async () => {
    const t = makeTest(schema);
    const [done] = await burst(t, 1, { key: "a" });
    await runAll(t);
    if (!done!.ok) throw new Error("expected ok");
    expect(await t.mutation(api.waiting.cancel, { id: done!.id })).toEqual({ cancelled: false, state: "success" });
  });

  test("an id that is no run's is an error naming id; a well-formed id of no run is unknown", async () => {
    const t = makeTest(schema);
    expect(await convexErrorData(t.mutation(api.waiting.cancel, { id: "nope" }))).toMatchObject({ kind: "InvalidRateLimit", field: "id" });
  });
});

describe("check with wait: when work queued now would run", () => {
  test("says runWhenAllowed's runAt, or its refusal past maxWait, taking nothing", async () => {
    const t = makeTest(schema);
    await burst(t, 3, { key: "a" }); // queued up to +30 s
    const [checked, past, queued] = await t.run(async (ctx) => [
      await rateLimiter.check(ctx, "emails", { wait: true, key: "a" }),
      await rateLimiter.check(ctx, "emails", { wait: true, key: "a", maxWait: 10 * SECOND }),
      await rateLimiter.runWhenAllowed(ctx, "emails", { key: "a" }, sendRef, { to: "x" }),
    ]);
    expect(checked).toEqual({ ok: true, runAt: T0 + 60 * SECOND });
    expect(past).toEqual({ ok: false, retryAfter: 50 * SECOND });
    // The checks took nothing: the work queued after them runs when the first said.
    expect(queued).toMatchObject({ ok: true, runAt: T0 + 60 * SECOND });
    expect(await convexErrorData(t.run((ctx) => rateLimiter.check(ctx, "emails", { wait: true, key: "a", maxWait: 0, throws: true })))).toMatchObject({ kind: "RateLimited", name: "emails" });
  });
});

describe("clearAll", () => {
  test("removes the queued runs with the rows: a new run isn't held behind the old line", async () => {
    const t = makeTest(schema);
    await burst(t, 4, { key: "a" }); // queued up to +60 s
    // The two due now run, and the clock moves past the instant the rows were created in.
    expect(await runAll(t, 2)).toEqual([T0, T0]);
    await t.run((ctx) => ctx.runMutation(components.rateLimiter.lib.clearAll, {}));
    // Runs at once: the instant it was decided (the clock moved with the commits before it).
    const [at, fresh] = await t.run(async (ctx) => [Date.now(), await rateLimiter.runWhenAllowed(ctx, "emails", { key: "a" }, sendRef, { to: "fresh" })] as const);
    expect(fresh).toMatchObject({ ok: true, runAt: at });
  });
});

describe("waitUntilAllowed", () => {
  test("takes its place in the same line, sleeps once until its instant, and says how long", async () => {
    const t = makeTest(schema);
    await burst(t, 2, { key: "a" });
    const waiting = t.action(api.waiting.waitThenSend, { name: "emails", key: "a" });
    let done = false;
    void waiting.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(30 * SECOND - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toEqual({ ok: true, waited: 30 * SECOND });
    // Work queued after it runs after it.
    const [next] = await t.run(async (ctx) => [await rateLimiter.runWhenAllowed(ctx, "emails", { key: "a" }, sendRef, { to: "after" })]);
    expect(next).toMatchObject({ ok: true, runAt: T0 + 60 * SECOND });
  });

  test("a wait longer than maxWait (default a minute) is refused at once, taking nothing", async () => {
    const t = makeTest(schema);
    await burst(t, 4, { key: "a" }); // the last runs at +60 s, the next would at +90 s
    // Each call at its own instant (the clock moves with commits): the wait shrinks as time passes.
    vi.setSystemTime(T0 + SECOND);
    expect(await t.action(api.waiting.waitThenSend, { name: "emails", key: "a" })).toEqual({ ok: false, retryAfter: 29 * SECOND });
    vi.setSystemTime(T0 + 2 * SECOND);
    expect(await convexErrorData(t.action(api.waiting.waitThenSend, { name: "emails", key: "a", throws: true }))).toEqual({ kind: "RateLimited", name: "emails", retryAfter: 28 * SECOND });
    expect(await convexErrorData(t.action(api.waiting.waitThenSend, { name: "emails", key: "a", maxWait: 10 * MINUTE }))).toMatchObject({ kind: "InvalidRateLimit", field: "maxWait" });
  });
});

describe("bad input: an InvalidRateLimit error naming the field, nothing written", () => {
  const cases: [string, (t: T) => Promise<unknown>, string][] = [
    ["maxWait negative", (t) => burst(t, 1, { maxWait: -1 }), "maxWait"],
    ["maxWait NaN", (t) => burst(t, 1, { maxWait: NaN }), "maxWait"],
    ["maxWait Infinity", (t) => burst(t, 1, { maxWait: Infinity }), "maxWait"],
    ["maxWait above 30 days", (t) => burst(t, 1, { maxWait: 31 * 24 * HOUR }), "maxWait"],
    ["maxWait not a number", (t) => burst(t, 1, { maxWait: "1" as unknown as number }), "maxWait"],
    ["a count no full limit holds", (t) => burst(t, 1, { count: 3 }), "count"],
    ["count 0", (t) => burst(t, 1, { count: 0 }), "count"],
    ["count negative", (t) => burst(t, 1, { count: -1 }), "count"],
    [
      "fn not a reference",
      (t) => t.run((ctx) => rateLimiter.runWhenAllowed(ctx, "emails", {}, "waiting:send" as unknown as typeof sendRef, { to: "x" })),
      "fn",
    ],
    [
      "fn a plain object",
      (t) => t.run((ctx) => rateLimiter.runWhenAllowed(ctx, "emails", {}, {} as unknown as typeof sendRef, { to: "x" })),
      "fn",
    ],
    [
      "a sharded fixed window",
      (t) => t.run((ctx) => rateLimiter.runWhenAllowed(ctx, "inline", { config: { kind: "fixed window", rate: 4, period: MINUTE, shards: 2 } }, sendRef, { to: "x" })),
      "config.shards",
    ],
    ["an approximate sliding window", (t) => t.run((ctx) => rateLimiter.runWhenAllowed(ctx, "approx", {}, sendRef, { to: "x" })), "config.exact"],
    [
      "a sharded exact sliding window",
      (t) => t.run((ctx) => rateLimiter.runWhenAllowed(ctx, "inline", { config: { kind: "sliding window", rate: 4, period: MINUTE, shards: 2 } }, sendRef, { to: "x" })),
      "config.shards",
    ],
    [
      "an asynchronous exact sliding window",
      (t) => t.run((ctx) => rateLimiter.runWhenAllowed(ctx, "inline", { config: { kind: "sliding window", rate: 4, period: MINUTE, applyUpdates: "asynchronously" } }, sendRef, { to: "x" })),
      "config.applyUpdates",
    ],
    [
      "a concurrency limit",
      (t) => t.run((ctx) => rateLimiter.runWhenAllowed(ctx, "slots" as "emails", {}, sendRef, { to: "x" })),
      "name",
    ],
  ];
  test.each(cases)("%s", async (_, call, field) => {
    const t = makeTest(schema);
    expect(await convexErrorData(call(t))).toMatchObject({ kind: "InvalidRateLimit", field });
    expect(await runAll(t)).toEqual([]);
    expect(await t.query(api.waiting.value, { name: "emails" })).toMatchObject({ value: 2 });
  });
});
