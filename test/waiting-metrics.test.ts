// Metrics of waiting until allowed: the counters of queued runs, the time they wait and cancelled runs, in the pure sums and fold, and through register() on convex-test.
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, SECOND } from "../src/client/index.js";
import { addCounts, addEvent, countsOf, zeroCounts, type MetricEvent } from "../src/shared/metrics/metrics.js";
import { foldFlow, pruneFlow, type FoldRead } from "../src/shared/metrics/metrics-fold.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import type * as waiting from "./app/waiting.js";
import { rateLimiter, schema, sendRef } from "./app/waiting.js";
import { makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ waiting: typeof waiting }>;
const T0 = Date.UTC(2030, 0, 1);

describe("the counters of waiting, pure", () => {
  test("a queued event counts in queued and waitedMs beside its outcome; a cancel in cancelled", () => {
    let c = zeroCounts();
    c = addEvent(c, { outcome: "admitted", count: 1, waited: 0 }); // due at once: admitted, and queued
    c = addEvent(c, { outcome: "reserved", count: 2, waited: 30_000 });
    c = addEvent(c, { outcome: "refused", count: 1 }); // a refusal for maxWait waits for nothing
    c = addEvent(c, { outcome: "cancelled", count: 2 });
    expect(c).toEqual({
      ...zeroCounts(),
      admitted: 1,
      admittedTokens: 1,
      reserved: 1,
      reservedTokens: 2,
      refused: 1,
      refusedTokens: 1,
      queued: 2,
      waitedMs: 30_000,
      cancelled: 1,
      cancelledTokens: 2,
    });
  });

  test("a limit that never waits keeps the shape it had: no counter of waiting appears", () => {
    const c = addCounts(addEvent(zeroCounts(), { outcome: "admitted", count: 1 }), addEvent(zeroCounts(), { outcome: "refused", count: 1 }));
    expect(Object.keys(c).sort()).toEqual(Object.keys(zeroCounts()).sort());
    expect(countsOf({ ...c, overridden: undefined, blocked: undefined })).toEqual(c);
  });

  test("sums carry a counter present on one side only, and stored summaries keep them", () => {
    const a = addEvent(zeroCounts(), { outcome: "reserved", count: 1, waited: 5 });
    const b = addEvent(zeroCounts(), { outcome: "cancelled", count: 3 });
    const sum = addCounts(a, b);
    expect(sum).toMatchObject({ queued: 1, waitedMs: 5, cancelled: 1, cancelledTokens: 3 });
    expect(addCounts(b, a)).toEqual(sum);
    expect(countsOf(sum)).toEqual(sum);
  });

  test("the fold sums queued, waited and cancelled events into the minute's summary, onto what it held", () => {
    type I = { event: number; bucket: number; key: number };
    const ev = (id: number, e: Omit<MetricEvent, "name" | "ts">, ts: number) => ({ id, name: "n", ts, ...e });
    const events = [
      ev(1, { outcome: "reserved", count: 1, waited: 60_000 }, T0 + 1),
      ev(2, { outcome: "admitted", count: 1, waited: 0 }, T0 + 2),
      ev(3, { outcome: "cancelled", count: 1 }, T0 + 3),
    ];
    const stored = { id: 9, name: "n", bucket: T0, ...zeroCounts(), reserved: 4, reservedTokens: 4, queued: 4, waitedMs: 1000 };
    const none: FoldRead<I> = { events: [], buckets: [], keys: [] };
    const plan = runPlan(foldFlow<I>({}, T0 + MINUTE), (q) => (q.read === "events" ? { ...none, events } : q.read === "bucket" ? { ...none, buckets: [stored] } : none));
    expect(plan.writes).toContainEqual({
      op: "patch bucket",
      id: 9,
      counts: { ...zeroCounts(), admitted: 1, admittedTokens: 1, reserved: 5, reservedTokens: 5, queued: 6, waitedMs: 61_000, cancelled: 1, cancelledTokens: 1 },
    });
    // A cancel is no refusal: no top offender is written for it.
    expect(plan.writes.filter((w) => w.op === "insert key" || w.op === "patch key")).toEqual([]);
    expect(runPlan(pruneFlow<I>(plan), () => none).result).toEqual({ folded: 3, pruned: 0, done: true });
  });
});

describe("the counters of waiting, through register()", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });


  test("queued runs, the ms they wait and a cancelled run are reported, before and after the fold", async () => {
    const t = makeTest(schema);
    // 1 a minute: three queued in one transaction at T0 run at T0, T0 + 1 min and T0 + 2 min.
    const runs = await t.run(async (ctx) => {
      const out = [];
      for (let i = 0; i < 3; i++) out.push(await rateLimiter.runWhenAllowed(ctx, "metered", { key: "m" }, sendRef, { to: `to${i}` }));
      return out;
    });
    expect(runs.map((r) => (r.ok ? r.runAt - T0 : null))).toEqual([0, MINUTE, 2 * MINUTE]);
    vi.setSystemTime(T0 + SECOND);
    // Would wait more than a ms: refused, and counted as refused, not queued.
    const refused = await t.mutation(api.waiting.queue, { name: "metered", key: "m", to: "late", maxWait: 1 });
    expect(refused.ok).toBe(false);
    const third = runs[2]!;
    if (!third.ok) throw new Error("expected ok");
    vi.setSystemTime(T0 + 2 * SECOND);
    expect(await t.mutation(api.waiting.cancel, { id: third.id })).toEqual({ cancelled: true, credited: 1 });
    // Cancelled once: the second call finds it cancelled and records nothing more.
    expect((await t.mutation(api.waiting.cancel, { id: third.id })).cancelled).toBe(false);
    const expected = {
      admitted: 1,
      admittedTokens: 1,
      reserved: 2,
      reservedTokens: 2,
      refused: 1,
      refusedTokens: 1,
      overridden: 0,
      blocked: 0,
      queued: 3,
      waitedMs: 3 * MINUTE,
      cancelled: 1,
      cancelledTokens: 1,
    };
    const before = await t.run((ctx) => rateLimiter.metrics(ctx, "metered", { from: T0, to: T0 + MINUTE }));
    expect(before.total).toEqual(expected);
    expect(before.buckets).toEqual([{ bucket: T0, ...expected }]);
    expect(before.unfolded).toBe(5);
    // A cancel is not a refusal: the only offender is the key's one refusal.
    expect((await t.run((ctx) => rateLimiter.metrics(ctx, "metered", { from: T0, to: T0 + MINUTE, topKeys: 5 }))).top).toEqual([
      { key: "m", refused: 1, refusedTokens: 1 },
    ]);
    vi.setSystemTime(T0 + 10 * SECOND);
    expect(await t.run((ctx) => rateLimiter.foldMetrics(ctx))).toEqual({ folded: 5, pruned: 0, done: true });
    const after = await t.run((ctx) => rateLimiter.metrics(ctx, "metered", { from: T0, to: T0 + MINUTE }));
    expect(after).toMatchObject({ unfolded: 0, complete: true, total: expected, buckets: [{ bucket: T0, ...expected }] });
  });

  test("a limit without metrics records no cancel", async () => {
    const t = makeTest(schema);
    const run = await t.mutation(api.waiting.queue, { name: "emails", key: "e", to: "x" });
    if (!run.ok) throw new Error("expected ok");
    expect(await t.mutation(api.waiting.cancel, { id: run.id })).toEqual({ cancelled: true, credited: 1 });
    const m = await t.run((ctx) => rateLimiter.metrics(ctx, "emails", { from: T0, to: T0 + MINUTE }));
    expect(m.buckets).toEqual([]);
  });
});
