// Metrics (src/component/metrics.ts, `metrics: true`) on convex-test with fake timers: exact
// counts of requests and tokens admitted, reserved and refused per minute, through the component
// and through the client installed with register(); folding counts each event exactly once; a
// refusal writes nothing to the limit's rows, and a limit without metrics writes nothing at all;
// a concurrency limit's acquires count as admitted or refused, one slot each;
// with metrics on, a call reads exactly what it read without, and writes one more document.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { ConvexError, type Value } from "convex/values";
import { MINUTE, RateLimiter, SECOND, type LimitConfig, type RateLimitConfig } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
import type { Doc } from "../src/component/_generated/dataModel.js";
import { query } from "../src/component/_generated/server.js";
import { FOLD_SETTLE_MS } from "../src/component/metrics.js";
import { modules, schema } from "../src/test.js";
import { zeroCounts, type MetricCounts } from "../src/shared/metrics/metrics.js";
import { seededRandom } from "../tools/random.js";
import { components, convexErrorData, errorOf, makeTest } from "./setup.js";
import { convexTest } from "convex-test";
import batchWorker from "@convex-dev/batch-worker/test";
import { componentsGeneric, defineSchema, type FunctionReference } from "convex/server";

/** A whole minute, so minute buckets start at T0 + k * MINUTE. */
const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  vi.spyOn(Math, "random").mockImplementation(seededRandom(11));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

// Test-only queries registered inside the component: every document of the tables metrics touch.
const tables = query({
  args: {},
  handler: async (ctx) => ({
    rows: await ctx.db.query("rateLimits").collect(),
    events: await ctx.db.query("metricEvents").collect(),
    buckets: await ctx.db.query("metricBuckets").collect(),
    keys: await ctx.db.query("metricKeys").collect(),
  }),
});
type Tables = {
  rows: Doc<"rateLimits">[];
  events: Doc<"metricEvents">[];
  buckets: Doc<"metricBuckets">[];
  keys: Doc<"metricKeys">[];
};
const api = componentsGeneric() as unknown as {
  rateLimiter: ComponentApi & {
    inspectMetrics: { tables: FunctionReference<"query", "internal", Record<string, never>, Tables> };
  };
};

/** The component with the test-only `inspectMetrics.tables` query among its modules. */
function makeT() {
  const t = convexTest(defineSchema({}), import.meta.glob("./app/**/*.ts"));
  t.registerComponent("rateLimiter", schema, { ...modules, "./component/inspectMetrics.ts": async () => ({ tables }) });
  batchWorker.register(t, "rateLimiter/batchWorker");
  return t;
}
type T = ReturnType<typeof makeT>;

const limits = {
  chat: { kind: "token bucket", rate: 3, period: MINUTE, metrics: true },
  quiet: { kind: "token bucket", rate: 3, period: MINUTE },
  llm: { kind: "token bucket", rate: 10, period: MINUTE, maxReserved: 30, metrics: true },
  window: { kind: "fixed window", rate: 4, period: MINUTE, start: 0, metrics: true },
  sharded: { kind: "token bucket", rate: 10, period: MINUTE, shards: 5, metrics: true },
  hot: { kind: "token bucket", rate: 10, period: MINUTE, applyUpdates: "asynchronously", metrics: true },
  shadow: { kind: "token bucket", rate: 1, period: MINUTE, dryRun: true, metrics: true },
  slots: { kind: "concurrency", capacity: 2, lease: MINUTE, metrics: true },
  quietSlots: { kind: "concurrency", capacity: 2, lease: MINUTE },
} satisfies Record<string, LimitConfig>;
const rl = new RateLimiter(api.rateLimiter, limits);

// Reads are queries: they commit nothing, so they don't move convex-test's clock (it moves with commits).
const snapshot = (t: T) => t.query((ctx) => ctx.runQuery(api.rateLimiter.inspectMetrics.tables, {}));
const counts = (c: Partial<MetricCounts>): MetricCounts => ({ ...zeroCounts(), ...c });
/** The metrics of `name` over the hour around T0. */
const read = (t: T, name: keyof typeof limits, topKeys = 0) =>
  t.run((ctx) => rl.metrics(ctx, name, { from: T0 - 30 * MINUTE, to: T0 + 30 * MINUTE, topKeys }));
/** Runs the fold and every batch it schedules, then puts the clock back. */
async function foldAll(t: T, options: Parameters<typeof rl.foldMetrics>[1] = {}) {
  const now = Date.now();
  const first = await t.run((ctx) => rl.foldMetrics(ctx, options));
  await t.finishAllScheduledFunctions(vi.runAllTimers);
  vi.setSystemTime(now);
  return first;
}
/** Folds everything recorded so far: steps past the settling time first. */
async function settleAndFold(t: T, options: Parameters<typeof rl.foldMetrics>[1] = {}) {
  vi.advanceTimersByTime(FOLD_SETTLE_MS + 1);
  return foldAll(t, options);
}

describe("counts", () => {
  test("admitted, refused and their tokens, exact before and after the fold", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      for (let i = 0; i < 5; i++) await rl.limit(ctx, "chat", { key: "alice" }); // 3 admitted, 2 refused
      await rl.limit(ctx, "chat", { key: "bob", count: 2 }); // admitted, 2 tokens
      await rl.limit(ctx, "chat", { key: "bob", count: 2 }); // refused: 1 token left
    });
    const expected = counts({ admitted: 4, admittedTokens: 5, refused: 3, refusedTokens: 4 });
    const before = await read(t, "chat", 5);
    expect(before).toMatchObject({ buckets: [{ bucket: T0, ...expected }], total: expected, unfolded: 7, complete: true });
    expect(before.top).toEqual([
      { key: "alice", refused: 2, refusedTokens: 2 },
      { key: "bob", refused: 1, refusedTokens: 2 },
    ]);
    expect(await settleAndFold(t)).toEqual({ folded: 7, pruned: 0, done: true });
    const after = await read(t, "chat", 5);
    expect(after).toEqual({ ...before, unfolded: 0 });
    const { events, buckets, keys } = await snapshot(t);
    expect(events).toEqual([]);
    expect(buckets).toHaveLength(1);
    expect(keys.map((k) => [k.key, k.refused])).toEqual([
      ["alice", 2],
      ["bob", 1],
    ]);
  });

  test("reservations: reserved ahead, then refused past maxReserved", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      expect(await rl.limit(ctx, "llm", { count: 8, reserve: true })).toEqual({ ok: true }); // 2 left
      expect((await rl.limit(ctx, "llm", { count: 10, reserve: true })).retryAfter).toBeGreaterThan(0); // owes 8
      expect((await rl.limit(ctx, "llm", { count: 25, reserve: true })).ok).toBe(false); // would owe 33 > 30
      expect((await rl.limit(ctx, "llm", { count: 20, reserve: true })).ok).toBe(true); // owes 28
    });
    const expected = counts({ admitted: 1, admittedTokens: 8, reserved: 2, reservedTokens: 30, refused: 1, refusedTokens: 25 });
    expect((await read(t, "llm", 1)).total).toEqual(expected);
    await settleAndFold(t);
    expect(await read(t, "llm", 1)).toMatchObject({ total: expected, top: [{ refused: 1, refusedTokens: 25 }], unfolded: 0 });
  });

  test("a dry run counts what it would have decided; peeks, check and getValue count nothing", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      expect((await rl.limit(ctx, "shadow", { key: "k" })).ok).toBe(true);
      expect((await rl.limit(ctx, "shadow", { key: "k" })).ok).toBe(true); // would have refused
      await rl.limit(ctx, "chat", { key: "k", count: 0 });
      await rl.check(ctx, "chat", { key: "k" });
      await rl.getValue(ctx, "chat", { key: "k" });
    });
    expect((await read(t, "shadow")).total).toEqual(counts({ admitted: 1, admittedTokens: 1, refused: 1, refusedTokens: 1 }));
    expect((await read(t, "chat")).total).toEqual(zeroCounts());
    expect((await snapshot(t)).events).toHaveLength(2);
  });

  test("sharded, asynchronous and fixed-window limits count every call", async () => {
    const t = makeT();
    // One transaction per call: an asynchronous limit decides on a snapshot from before its
    // transaction, which doesn't show takes made earlier in the same transaction.
    for (let i = 0; i < 12; i++) {
      await t.run((ctx) => rl.limit(ctx, "sharded", { key: "k" })); // 10 tokens over 5 shards
      await t.run((ctx) => rl.limit(ctx, "hot")); // asynchronous: stale, then exact near the limit
    }
    await t.run(async (ctx) => {
      for (let i = 0; i < 6; i++) await rl.limit(ctx, "window", { key: "k" });
    });
    for (const name of ["sharded", "hot"] as const) {
      const { total } = await read(t, name);
      expect(total.admitted + total.refused).toBe(12);
      expect(total.admitted).toBe(10);
    }
    expect((await read(t, "window")).total).toEqual(counts({ admitted: 4, admittedTokens: 4, refused: 2, refusedTokens: 2 }));
    await t.finishAllScheduledFunctions(vi.runAllTimers); // the applier; the clock moves on
    await settleAndFold(t);
    expect((await read(t, "hot")).total).toMatchObject({ admitted: 10, refused: 2 });
  });

  test("limitAll: each limit taken from counts; refused, only the limits that refused", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      await rl.limitAll(ctx, [{ name: "chat", key: "a" }, { name: "window", key: "a", count: 3 }]); // both taken
      // window has 1 left: it refuses, chat would admit but nothing is taken from it.
      const refused = await rl.limitAll(ctx, [{ name: "chat", key: "a" }, { name: "window", key: "a", count: 2 }]);
      expect(refused.ok).toBe(false);
    });
    expect((await read(t, "chat")).total).toEqual(counts({ admitted: 1, admittedTokens: 1 }));
    expect((await read(t, "window")).total).toEqual(counts({ admitted: 1, admittedTokens: 3, refused: 1, refusedTokens: 2 }));
  });

  test("top offenders: most refusals first, then most tokens, then key order", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      for (const [key, n, count] of [["c", 3, 3], ["b", 3, 3], ["a", 2, 3], ["d", 3, 1]] as const) {
        await rl.limit(ctx, "chat", { key, count: 3 }); // empties the key
        for (let i = 0; i < n; i++) await rl.limit(ctx, "chat", { key, count });
      }
    });
    await settleAndFold(t, { batchSize: 3 });
    const { top } = await read(t, "chat", 3);
    expect(top).toEqual([
      { key: "b", refused: 3, refusedTokens: 9 },
      { key: "c", refused: 3, refusedTokens: 9 },
      { key: "d", refused: 3, refusedTokens: 3 },
    ]);
  });
});

describe("concurrency limits", () => {
  test("each acquire records admitted or refused, one slot; check, release and extend record nothing", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      const first = await rl.acquire(ctx, "slots", { key: "ada" });
      expect((await rl.acquire(ctx, "slots", { key: "ada" })).ok).toBe(true);
      expect(await rl.acquire(ctx, "slots", { key: "ada" })).toEqual({ ok: false, retryAfter: MINUTE }); // both held
      expect(await rl.check(ctx, "slots", { key: "ada" })).toEqual({ ok: false, retryAfter: MINUTE });
      if (!first.ok) throw new Error("the first acquire was refused");
      await rl.extend(ctx, first.lease);
      expect(await rl.release(ctx, first.lease)).toEqual({ released: true });
      expect((await rl.acquire(ctx, "slots", { key: "bob" })).ok).toBe(true);
    });
    const expected = counts({ admitted: 3, admittedTokens: 3, refused: 1, refusedTokens: 1 });
    expect(await read(t, "slots", 5)).toMatchObject({ total: expected, top: [{ key: "ada", refused: 1, refusedTokens: 1 }], unfolded: 4 });
    expect(await settleAndFold(t)).toEqual({ folded: 4, pruned: 0, done: true });
    expect(await read(t, "slots", 5)).toMatchObject({ total: expected, unfolded: 0 });
  });

  test("a refusal with throws is counted when the app catches it; without metrics nothing is written", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      for (let i = 0; i < 2; i++) await rl.acquire(ctx, "slots", { key: "k", throws: true });
      const error = await errorOf(rl.acquire(ctx, "slots", { key: "k", throws: true }));
      expect((error as ConvexError<Record<string, Value>>).data).toEqual({ kind: "RateLimited", name: "slots", retryAfter: MINUTE });
      for (let i = 0; i < 3; i++) await rl.acquire(ctx, "quietSlots", { key: "k" });
    });
    expect((await read(t, "slots")).total).toMatchObject({ admitted: 2, refused: 1 });
    // The app's mutation throws: everything it did rolls back, the event included.
    await convexErrorData(t.run((ctx) => rl.acquire(ctx, "slots", { key: "k", throws: true })));
    expect((await read(t, "slots")).total).toMatchObject({ admitted: 2, refused: 1 });
    expect((await snapshot(t)).events.filter((e) => e.name === "quietSlots")).toEqual([]);
  });
});

describe("minutes", () => {
  test("an event belongs to the minute holding it; the span is taken in whole minutes", async () => {
    const t = makeT();
    const at = async (ms: number, key: string) => {
      vi.setSystemTime(T0 + ms);
      await t.run((ctx) => rl.limit(ctx, "chat", { key }));
    };
    await at(-1, "a"); // the minute before T0
    await at(0, "b");
    await at(MINUTE - 1, "c");
    await at(MINUTE, "d");
    const minutes = async (from: number, to: number) => {
      const r = await t.run((ctx) => rl.metrics(ctx, "chat", { from, to }));
      return { from: r.from - T0, to: r.to - T0, buckets: r.buckets.map((b) => [b.bucket - T0, b.admitted]) };
    };
    const check = async () => {
      expect(await minutes(T0 - MINUTE, T0 + 2 * MINUTE)).toEqual({
        from: -MINUTE,
        to: 2 * MINUTE,
        buckets: [[-MINUTE, 1], [0, 2], [MINUTE, 1]],
      });
      // Rounded out to whole minutes: from down, to up; to is exclusive.
      expect(await minutes(T0 + 1, T0 + MINUTE)).toEqual({ from: 0, to: MINUTE, buckets: [[0, 2]] });
      expect(await minutes(T0 + 1, T0 + MINUTE + 1)).toEqual({ from: 0, to: 2 * MINUTE, buckets: [[0, 2], [MINUTE, 1]] });
      expect(await minutes(T0, T0)).toEqual({ from: 0, to: 0, buckets: [] });
    };
    await check();
    await settleAndFold(t);
    expect((await snapshot(t)).buckets.map((b) => b.bucket - T0).sort((a, b) => a - b)).toEqual([-MINUTE, 0, MINUTE]);
    await check();
  });

  test("retention: the fold deletes minutes older than retainFor, and only those", async () => {
    const t = makeT();
    await t.run((ctx) => rl.limit(ctx, "chat", { key: "old" }));
    vi.setSystemTime(T0 + 10 * MINUTE);
    await t.run((ctx) => rl.limit(ctx, "chat", { key: "new" }));
    await t.run((ctx) => rl.limit(ctx, "chat", { key: "new", count: 3 })); // refused: a key row too
    vi.setSystemTime(T0 + 12 * MINUTE);
    expect(await foldAll(t, { retainFor: 5 * MINUTE })).toEqual({ folded: 3, pruned: 1, done: true });
    const { buckets, keys } = await snapshot(t);
    expect(buckets.map((b) => b.bucket - T0)).toEqual([10 * MINUTE]);
    expect(keys.map((k) => k.key)).toEqual(["new"]);
    expect(await foldAll(t, { retainFor: 0 })).toEqual({ folded: 0, pruned: 2, done: true });
    expect(await snapshot(t)).toMatchObject({ buckets: [], keys: [] });
  });
});

describe("folding", () => {
  test("leaves events younger than a second, and counts them meanwhile", async () => {
    const t = makeT();
    await t.run((ctx) => rl.limit(ctx, "chat", { key: "k" }));
    vi.advanceTimersByTime(FOLD_SETTLE_MS - 1);
    expect(await foldAll(t)).toEqual({ folded: 0, pruned: 0, done: true });
    expect(await read(t, "chat")).toMatchObject({ total: { admitted: 1 }, unfolded: 1 });
    vi.advanceTimersByTime(2);
    expect(await foldAll(t)).toEqual({ folded: 1, pruned: 0, done: true });
    expect(await read(t, "chat")).toMatchObject({ total: { admitted: 1 }, unfolded: 0 });
  });

  test("exactly once: run twice, and in batches with new events between them", async () => {
    const t = makeT();
    const random = seededRandom(5);
    let calls = 0;
    const traffic = async (n: number) => {
      await t.run(async (ctx) => {
        for (let i = 0; i < n; i++) {
          const key = `k${Math.floor(random() * 4)}`;
          await rl.limit(ctx, "chat", { key, count: 1 + Math.floor(random() * 2) });
          calls++;
        }
      });
    };
    const total = async () => {
      const { total: c } = await read(t, "chat");
      return c.admitted + c.refused + c.reserved;
    };
    await traffic(40);
    vi.advanceTimersByTime(FOLD_SETTLE_MS + 1);
    // The first batch runs now; each batch it schedules runs after more traffic has come in.
    const first = await t.run((ctx) => rl.foldMetrics(ctx, { batchSize: 7 }));
    expect(first).toEqual({ folded: 7, pruned: 0, done: false });
    for (let step = 0; step < 20; step++) {
      await traffic(3);
      expect(await total()).toBe(calls);
      vi.advanceTimersToNextTimer();
      await t.finishInProgressScheduledFunctions();
    }
    // A second fold over the same events, and a third with nothing left to do.
    await settleAndFold(t, { batchSize: 7 });
    await settleAndFold(t);
    expect((await snapshot(t)).events).toEqual([]);
    expect(await total()).toBe(calls);
    const byMinute = (await snapshot(t)).buckets.reduce((s, b) => s + b.admitted + b.refused, 0);
    expect(byMinute).toBe(calls);
  });
});

describe("what metrics write", () => {
  test("a refusal writes nothing to the limit's rows, only its event", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await rl.limit(ctx, "chat", { key: "k" });
    });
    const before = await snapshot(t);
    expect((await t.run((ctx) => rl.limit(ctx, "chat", { key: "k" }))).ok).toBe(false);
    const after = await snapshot(t);
    expect(after.rows).toEqual(before.rows);
    expect(after.events.slice(0, -1)).toEqual(before.events);
    expect(after.events.at(-1)).toMatchObject({ name: "chat", key: "k", outcome: "refused", count: 1, ts: T0 });
  });

  test("a limit without metrics writes nothing to the metrics tables", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      for (let i = 0; i < 5; i++) await rl.limit(ctx, "quiet", { key: "k" });
      await rl.limitAll(ctx, [{ name: "quiet", key: "j", count: 2 }]);
    });
    await settleAndFold(t);
    expect(await snapshot(t)).toMatchObject({ events: [], buckets: [], keys: [] });
    expect((await read(t, "quiet")).total).toEqual(zeroCounts());
  });

  test("reset and clearAll leave the metrics: what happened still happened", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      for (let i = 0; i < 4; i++) await rl.limit(ctx, "chat", { key: "k" });
      await rl.reset(ctx, "chat", { key: "k" });
      await ctx.runMutation(api.rateLimiter.lib.clearAll, {});
    });
    expect((await read(t, "chat")).total).toMatchObject({ admitted: 3, refused: 1 });
  });
});

describe("thrown refusals", () => {
  test("throws: true counts a refusal the app catches; one that ends the app's mutation rolls back", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await rl.limit(ctx, "chat", { key: "k", throws: true });
      const error = await errorOf(rl.limit(ctx, "chat", { key: "k", throws: true }));
      expect(error).toBeInstanceOf(ConvexError);
      expect((error as ConvexError<Record<string, Value>>).data).toEqual({ kind: "RateLimited", name: "chat", retryAfter: 20 * SECOND });
    });
    expect((await read(t, "chat")).total).toMatchObject({ admitted: 3, refused: 1 });
    // The app's mutation throws: everything it did rolls back, the event included.
    const data = await convexErrorData(t.run((ctx) => rl.limit(ctx, "chat", { key: "k", throws: true })));
    expect(data).toMatchObject({ kind: "RateLimited", name: "chat" });
    expect((await read(t, "chat")).total).toMatchObject({ admitted: 3, refused: 1 });
  });

  test("limitAll with throws names the limits that refused, and counts them when caught", async () => {
    const t = makeT();
    await t.run(async (ctx) => {
      await rl.limit(ctx, "chat", { key: "a", count: 2 }); // 1 token left
      // chat is asked for 2 (the same key twice is one request): it refuses; window would admit.
      const error = await errorOf(
        rl.limitAll(ctx, [{ name: "chat", key: "a" }, { name: "window", key: "a", count: 3 }, { name: "chat", key: "a" }], { throws: true }),
      );
      expect((error as ConvexError<Record<string, Value>>).data).toMatchObject({ kind: "RateLimited", name: "chat", names: ["chat"] });
    });
    expect((await read(t, "chat")).total).toEqual(counts({ admitted: 1, admittedTokens: 2, refused: 1, refusedTokens: 2 }));
    expect((await read(t, "window")).total).toEqual(zeroCounts());
  });

  test("the component called with throws: true rolls its own event back", async () => {
    const t = makeT();
    const config = limits.chat;
    await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await ctx.runMutation(api.rateLimiter.lib.rateLimit, { name: "chat", key: "k", config });
      await errorOf(ctx.runMutation(api.rateLimiter.lib.rateLimit, { name: "chat", key: "k", config, throws: true }));
    });
    expect((await read(t, "chat")).total).toMatchObject({ admitted: 3, refused: 0 });
  });

  test("the component called with throws and raiseInCaller returns a refusal's error, and keeps its event", async () => {
    const t = makeT();
    const config = limits.chat;
    const out = await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await ctx.runMutation(api.rateLimiter.lib.rateLimit, { name: "chat", key: "k", config });
      return await ctx.runMutation(api.rateLimiter.lib.rateLimit, { name: "chat", key: "k", config, throws: true, raiseInCaller: true });
    });
    expect(out).toEqual({ ok: false, retryAfter: out.retryAfter, error: { kind: "RateLimited", name: "chat", retryAfter: out.retryAfter } });
    expect((await read(t, "chat")).total).toMatchObject({ admitted: 3, refused: 1 });
  });

  test("raiseInCaller without metrics: nothing to keep, so the component throws", async () => {
    const t = makeT();
    const config: RateLimitConfig = { ...limits.chat, metrics: false };
    const data = await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await ctx.runMutation(api.rateLimiter.lib.rateLimit, { name: "plain", key: "k", config });
      const error = await errorOf(ctx.runMutation(api.rateLimiter.lib.rateLimit, { name: "plain", key: "k", config, throws: true, raiseInCaller: true }));
      return error instanceof ConvexError ? (error.data as Value) : null;
    });
    expect(data).toEqual({ kind: "RateLimited", name: "plain", retryAfter: 20_000 });
  });
});

describe("validation", () => {
  test("bad spans, topKeys and fold options are InvalidRateLimit errors naming the field", async () => {
    const t = makeT();
    const field = async (p: Promise<unknown>) => ((await convexErrorData(p)) as { field: string }).field;
    expect(await field(t.run((ctx) => rl.metrics(ctx, "chat", { from: T0, to: T0 - 1 })))).toBe("to");
    expect(await field(t.run((ctx) => rl.metrics(ctx, "chat", { from: T0, to: T0 + 1441 * MINUTE })))).toBe("to");
    expect(await field(t.run((ctx) => rl.metrics(ctx, "chat", { from: NaN, to: T0 })))).toBe("from");
    expect(await field(t.run((ctx) => rl.metrics(ctx, "chat", { from: T0, to: T0, topKeys: 101 })))).toBe("topKeys");
    expect(await field(t.run((ctx) => rl.foldMetrics(ctx, { batchSize: 0 })))).toBe("batchSize");
    expect(await field(t.run((ctx) => rl.foldMetrics(ctx, { retainFor: -1 })))).toBe("retainFor");
  });
});

describe("through register(), as an app's tests would", () => {
  const on: Record<"chat" | "sharded" | "hot", RateLimitConfig> = { chat: limits.chat, sharded: limits.sharded, hot: limits.hot };
  const off: typeof on = { chat: { ...on.chat, metrics: false }, sharded: { ...on.sharded, metrics: false }, hot: { ...on.hot, metrics: false } };
  const appOn = new RateLimiter(components.rateLimiter, on);
  const appOff = new RateLimiter(components.rateLimiter, off);

  test("metrics read exactly what the limit read, and write one document more", async () => {
    // Two apps, the same calls at the same instants with the same random draws: one with metrics.
    const tOn = makeTest();
    const tOff = makeTest();
    /** One call in its own transaction, with the documents it read and wrote. */
    const measured = (t: ReturnType<typeof makeTest>, app: typeof appOn, name: keyof typeof on, count: number, seed: number) =>
      t.run(async (ctx) => {
        vi.spyOn(Math, "random").mockImplementation(seededRandom(seed));
        const m0 = await ctx.meta.getTransactionMetrics();
        const result = await app.limit(ctx, name, { key: "k", count });
        const m1 = await ctx.meta.getTransactionMetrics();
        return { ok: result.ok, read: m1.documentsRead.used - m0.documentsRead.used, written: m1.documentsWritten.used - m0.documentsWritten.used };
      });
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) {
      vi.advanceTimersByTime(2 * SECOND);
      const count = i % 7 === 6 ? 0 : 1 + (i % 3);
      for (const name of ["chat", "sharded", "hot"] as const) {
        const withMetrics = await measured(tOn, appOn, name, count, 100 + i);
        const without = await measured(tOff, appOff, name, count, 100 + i);
        expect(withMetrics.ok).toBe(without.ok);
        expect(withMetrics.read).toBe(without.read);
        expect(withMetrics.written).toBe(without.written + (count === 0 ? 0 : 1));
        seen.add(`${name}:${without.ok ? "ok" : "refused"}`);
      }
    }
    // Both outcomes were measured for every kind of limit.
    expect([...seen].sort()).toEqual(["chat:ok", "chat:refused", "hot:ok", "hot:refused", "sharded:ok", "sharded:refused"]);
    const r = await tOn.run((ctx) => appOn.metrics(ctx, "chat", { from: T0, to: Date.now() + 1 }));
    expect(r.total.admitted + r.total.refused).toBe(26); // 30 calls, 4 of them peeks
  });
});
