// Asynchronous mode on convex-test with fake timers: decisions count takes recorded but not yet
// applied, the applier folds each take into the rows exactly once (also across a restart between
// batches), and reset and clearAll discard what is pending. convex-test has no stale snapshots
// (a stale query reads the current state), so staleness itself is modelled in `npm run simulate`.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, SECOND, type RateLimitConfig } from "../src/client/index.js";
const APPLY_BATCH = 256;
import { seededRandom } from "../tools/random.js";
import { convexToJson, jsonToConvex } from "convex/values";
import { convexErrorData, inspectable, makeInspectableTest } from "./setup.js";
import { withSyscalls } from "./convex-global.js";
import { MemoryStore } from "../tools/memory-store.js";
import { stalenessKnown } from "./convex-features.js";

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);
const api = inspectable.rateLimiter;
type T = ReturnType<typeof makeInspectableTest>;

const ASYNC = "asynchronously" as const;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  vi.spyOn(Math, "random").mockImplementation(seededRandom(7));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

// Reads are queries: they commit nothing, so they don't move convex-test's clock. It moves with
// commits: a top-level call runs at max(Date.now(), the last commit), and a commit at a frozen
// instant takes the last one + 1 ns, so from the third commit in a millisecond on, calls run 1 ms
// later. Tests here give each request its own instant and expect what that instant makes exact.
async function rows(t: T) {
  return t.query((ctx) => ctx.runQuery(api.inspect.rows, {}));
}
async function pending(t: T) {
  return t.query((ctx) => ctx.runQuery(api.inspect.pending, {}));
}
/** The instant the server is at: what a transaction started now would see. */
async function serverNow(t: T): Promise<number> {
  return t.query(async () => Date.now());
}
/**
 * Runs the applier until no take waits, at the server's instant and no later: it fires only the
 * timers due by then (the batch worker's loop runs "now"), never the batch worker's later ones (its
 * monitor, its idle wait), which would move every later call minutes on (convex-test never sets
 * its clock back). Each round brings the fake clock up to the server's, which the applier's own
 * commits move on by 1 ms: tests set an explicit instant for what they call after it.
 */
async function drain(t: T) {
  for (let round = 0; round < 100; round++) {
    vi.advanceTimersByTime((await serverNow(t)) - Date.now());
    await t.finishInProgressScheduledFunctions();
    if ((await pending(t)).length === 0) return;
  }
  throw new Error("takes still pending after 100 rounds of the applier");
}
/** Total tokens in the key's rows, each as stored at its own ts. */
function stored(all: { value: number }[]) {
  return all.reduce((sum, r) => sum + r.value, 0);
}

describe("an app that switches from @convex-dev/rate-limiter keeps its async config", () => {
  // Exactly as an upstream app declares it.
  const limits = {
    llm: { kind: "token bucket", rate: 10, period: MINUTE, applyUpdates: ASYNC },
  } satisfies Record<string, RateLimitConfig>;

  test("ten pass, the eleventh is refused with the exact wait, before the applier has run", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, limits);
    // One request every 375 ms, each at its own instant: 1/16 of a token comes back between two
    // (10 a minute), so every value below is exact.
    const GAP = 375;
    for (let i = 0; i < 10; i++) {
      vi.setSystemTime(T0 + i * GAP);
      expect(await t.run((ctx) => rl.limit(ctx, "llm"))).toMatchObject({ ok: true });
    }
    expect(await rows(t)).toEqual([]); // nothing applied yet: only inserts
    expect(await pending(t)).toHaveLength(10);
    // At T0 + 3750 ms: 10 taken, 10/16 back; the missing 6/16 take 2250 ms (back at T0 + 6 s).
    vi.setSystemTime(T0 + 10 * GAP);
    expect(await t.run((ctx) => rl.limit(ctx, "llm"))).toMatchObject({ ok: false, retryAfter: 2250 });
    expect(await t.query((ctx) => rl.check(ctx, "llm"))).toMatchObject({ ok: false, retryAfter: 2250 });
    expect(await t.query((ctx) => rl.getValue(ctx, "llm"))).toMatchObject({ value: 10 / 16 });

    await drain(t);
    expect(await pending(t)).toEqual([]);
    const after = await rows(t);
    expect(after).toHaveLength(1);
    // The last take's instant, with 9/16 back by then.
    expect(after[0]).toMatchObject({ value: 9 / 16, ts: T0 + 9 * GAP, shard: 0, h: expect.any(Number) });
    // The same decisions once applied: at T0 + 4500 ms the token is still due at T0 + 6 s.
    vi.setSystemTime(T0 + 4500);
    expect(await t.run((ctx) => rl.limit(ctx, "llm"))).toMatchObject({ ok: false, retryAfter: 1500 });
    vi.setSystemTime(T0 + 6 * SECOND);
    expect(await t.run((ctx) => rl.limit(ctx, "llm"))).toMatchObject({ ok: true });
    expect(await t.run((ctx) => rl.limit(ctx, "llm"))).toMatchObject({ ok: false, retryAfter: 6 * SECOND });
  });

  test("throws: a refusal throws RateLimited with its retryAfter", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, limits);
    await t.run((ctx) => rl.limit(ctx, "llm", { count: 10 }));
    expect(await convexErrorData(t.run((ctx) => rl.limit(ctx, "llm", { throws: true })))).toEqual({
      kind: "RateLimited",
      name: "llm",
      retryAfter: 6 * SECOND,
    });
  });
});

describe.each([1, 4, 10])("asynchronous, %i shard(s)", (shards) => {
  // A fixed window: every call here falls in its first second, where the 1 ms steps of convex-test's
  // clock (it moves with commits) change nothing, so the capacity and the rows are exact. A token
  // bucket would refill a fraction of a token between calls; the same claims on token buckets, at
  // explicit instants, are in whole-flow.test.ts and the tests below.
  const config: RateLimitConfig = { kind: "fixed window", rate: 40, period: MINUTE, start: 0, shards, applyUpdates: ASYNC };

  test("admits exactly the capacity in one window, whatever the applier has done", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { hot: config });
    let admitted = 0;
    for (let i = 0; i < 60; i++) {
      const r = await t.run((ctx) => rl.limit(ctx, "hot"));
      if (r.ok) admitted += 1;
      if (i === 20) await drain(t); // apply part of the way through
    }
    // A sharded limit may refuse a little early (a pair can run low before the whole); never more.
    expect(admitted).toBeLessThanOrEqual(40);
    expect(admitted).toBeGreaterThanOrEqual(shards === 1 ? 40 : 36);
    await drain(t);
    expect(await pending(t)).toEqual([]);
    const all = await rows(t);
    expect(all).toHaveLength(shards);
    expect(stored(all)).toBe(40 - admitted);
  });

  test("reserve: takes go into debt down to maxReserved, with the instant the debt is repaid", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { budget: { ...config, maxReserved: 40 } });
    // Drain every shard: a request draws two, so keep going well past the first refusal.
    let admitted = 0;
    for (let i = 0; i < 300 && admitted < 40; i++) if ((await t.run((ctx) => rl.limit(ctx, "budget"))).ok) admitted += 1;
    expect(admitted).toBe(40);
    const reserved = await t.run((ctx) => rl.limit(ctx, "budget", { count: 2, reserve: true }));
    expect(reserved.ok).toBe(true);
    expect(reserved.retryAfter).toBeGreaterThanOrEqual(1); // the work runs when the debt is repaid
    await drain(t);
    expect(stored(await rows(t))).toBe(40 - admitted - 2);
    expect(await pending(t)).toEqual([]);
  });
});

/**
 * Runs `fn` with every asynchronous limit's stale query reporting a snapshot `lagMs` older than the
 * mutation's own. convex-test has no stale snapshots: a stale query reads the current state, and
 * `getSnapshotTs` answers the same in the query and in the mutation that runs it, so the lag is 0.
 * `lib.rateLimit` asks twice per call, the stale query first, then the mutation itself: this
 * answers the first of each pair `lagMs` earlier, at the syscall every `ctx.meta.getSnapshotTs` makes.
 */
async function withLag<T>(lagMs: number, fn: () => Promise<T>): Promise<T> {
  let asked = 0;
  return withSyscalls(
    {
      syscall: (op, json, next) => {
        const out = next(op, json);
        if (op !== "1.0/getSnapshotTs" || asked++ % 2 === 1) return out;
        const ts = jsonToConvex(JSON.parse(out)) as bigint;
        return JSON.stringify(convexToJson(ts - BigInt(lagMs) * 1_000_000n));
      },
    },
    fn,
  );
}

// Shedding decides on a stale snapshot, which needs ctx.meta.getSnapshotTs (convex 1.48 on): on an
// older convex (npm run test:lowest) every request is decided on the current state instead.
describe.runIf(stalenessKnown)("shedding: near its limit while others' takes are pending, an unsharded limit refuses on its stale snapshot", () => {
  // 8 tokens per 8 s (1 a second): the margin is 2.
  const config: RateLimitConfig = { kind: "token bucket", rate: 8, period: 8 * SECOND, applyUpdates: ASYNC };

  test("on a snapshot 50 ms stale, the 7th and 8th are refused (inside the margin) until 1 + 2 are back", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { hot: { ...config, metrics: true } });
    // One request a millisecond, each at its own instant (1/1000 of a token comes back between two).
    const results = await withLag(50, async () => {
      const out = [];
      for (let i = 0; i < 8; i++) {
        vi.setSystemTime(T0 + i);
        out.push(await t.run((ctx) => rl.limit(ctx, "hot")));
      }
      return out;
    });
    // 6 admitted on the snapshot keeping the margin; then 2.006 left at T0 + 6 ms, inside it, with
    // 6 takes pending: refused until 1 + 2 are back, at T0 + 1000 ms.
    expect(results.map((r) => r.ok)).toEqual([true, true, true, true, true, true, false, false]);
    expect(results[6]).toEqual({ ok: false, retryAfter: SECOND - 6 });
    // Shed on the snapshot: nothing recorded, the rows untouched, and the refusal counted.
    expect(await pending(t)).toHaveLength(6);
    const summary = await t.query((ctx) => rl.metrics(ctx, "hot", { from: T0 - MINUTE, to: T0 + MINUTE }));
    expect(summary.total).toMatchObject({ admitted: 6, refused: 2 });
    // With the applier caught up (no take pending), the same request is decided again exactly.
    await drain(t);
    expect(await withLag(50, () => t.run((ctx) => rl.limit(ctx, "hot")))).toEqual({ ok: true });
  });

  test("throws: a shed refusal throws RateLimited like any other", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { hot: config });
    await withLag(50, () => t.run((ctx) => rl.limit(ctx, "hot", { count: 6 })));
    expect(await convexErrorData(withLag(50, () => t.run((ctx) => rl.limit(ctx, "hot", { throws: true }))))).toEqual({
      kind: "RateLimited",
      name: "hot",
      retryAfter: SECOND,
    });
  });

  test("on a snapshot that doesn't lag, the same calls are decided exactly: all 8 pass", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { hot: config });
    for (let i = 0; i < 8; i++) expect((await t.run((ctx) => rl.limit(ctx, "hot"))).ok).toBe(true);
    expect((await t.run((ctx) => rl.limit(ctx, "hot"))).ok).toBe(false);
  });

  test("a sharded limit on shards under SHED_SHARD_COUNTS requests' worth sheds nothing: the same lag, decided exactly", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { hot: { ...config, rate: 16, shards: 2 } });
    let admitted = 0;
    await withLag(50, async () => {
      // Requests of 2 tokens: each shard of 8 holds 4 requests' worth.
      for (let i = 0; i < 40; i++) if ((await t.run((ctx) => rl.limit(ctx, "hot", { count: 2 }))).ok) admitted += 2;
    });
    expect(admitted).toBeGreaterThanOrEqual(14);
  });

  test("on shards of SHED_SHARD_COUNTS requests' worth or more it sheds as an unsharded limit does: each shard keeps its margin", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { hot: { ...config, rate: 16, shards: 2 } });
    let admitted = 0;
    await withLag(50, async () => {
      for (let i = 0; i < 40; i++) if ((await t.run((ctx) => rl.limit(ctx, "hot"))).ok) admitted += 1;
    });
    // Each shard of 8 admits on the snapshot while 3 are left (1 plus its margin of 2): 6 each;
    // then every request is shed, writing nothing.
    expect(admitted).toBe(12);
    expect(await pending(t)).toHaveLength(12);
  });
});

describe("reset and clearAll discard takes not yet applied", () => {
  const config: RateLimitConfig = { kind: "fixed window", rate: 5, period: MINUTE, applyUpdates: ASYNC };

  test("reset: the key is full again, and the applier brings nothing back", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { w: config });
    await t.run((ctx) => rl.limit(ctx, "w", { key: "a", count: 5 }));
    await t.run((ctx) => rl.limit(ctx, "w", { key: "b", count: 5 }));
    expect((await t.run((ctx) => rl.limit(ctx, "w", { key: "a" }))).ok).toBe(false);
    await t.run((ctx) => rl.reset(ctx, "w", { key: "a" }));
    expect((await pending(t)).map((p) => p.key)).toEqual(["b"]);
    await drain(t);
    expect((await t.run((ctx) => rl.check(ctx, "w", { key: "a", count: 5 }))).ok).toBe(true);
    expect((await t.run((ctx) => rl.check(ctx, "w", { key: "b" }))).ok).toBe(false);
  });

  test("clearAll removes pending takes with the rows", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { w: config });
    await t.run((ctx) => rl.limit(ctx, "w", { count: 5 }));
    await t.mutation(api.lib.clearAll, {});
    expect(await pending(t)).toEqual([]);
    await drain(t);
    expect(await rows(t)).toEqual([]);
    expect((await t.run((ctx) => rl.check(ctx, "w", { count: 5 }))).ok).toBe(true);
  });
});

describe("the applier applies every take exactly once", () => {
  const config: RateLimitConfig = { kind: "token bucket", rate: 1000, period: MINUTE, applyUpdates: ASYNC };

  test("restarted between batches, it loses and repeats nothing", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { big: config });
    const n = APPLY_BATCH + 40; // more than one batch
    // One take every 15 ms, each at its own instant: 1/4 of a token comes back between two (1000 a
    // minute), so the sum below is exact.
    for (let i = 0; i < n; i++) {
      vi.setSystemTime(T0 + 15 * i);
      await t.run((ctx) => rl.limit(ctx, "big"));
    }
    // Run the loop one timer at a time until a batch has been applied, then kill it: cancel the
    // scheduled continuation and restart it from scratch, as the batch worker's monitor would.
    for (let step = 0; step < 20 && (await pending(t)).length === n; step++) {
      vi.advanceTimersToNextTimer();
      await t.finishInProgressScheduledFunctions();
    }
    const left = (await pending(t)).length;
    expect(left).toBeLessThan(n);
    expect(left).toBeGreaterThan(0);
    await t.run((ctx) => ctx.runMutation(api.inspect.kickApplier, {}));
    await drain(t);
    expect(await pending(t)).toEqual([]);
    expect(stored(await rows(t))).toBe(1000 - n + (n - 1) / 4);
  });

  test("a batch handed out twice is applied once", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, { big: config });
    // 15 ms apart, each at its own instant: 1/4 of a token back between two.
    for (let i = 0; i < 3; i++) {
      vi.setSystemTime(T0 + 15 * i);
      await t.run((ctx) => rl.limit(ctx, "big", { count: 10 }));
    }
    const takes = (await pending(t)).map((p) => ({
      id: p._id,
      name: p.name,
      shard: p.shard,
      count: p.count,
      ts: p.ts,
      config: p.config,
    }));
    await t.run((ctx) => ctx.runMutation(api.applier.applyBatch, { takes }));
    await t.run((ctx) => ctx.runMutation(api.applier.applyBatch, { takes }));
    expect(stored(await rows(t))).toBe(1000 - 30 + 2 / 4);
    expect(await pending(t)).toEqual([]);
  });
});

describe("a sliding window, asynchronously", () => {
  const config: RateLimitConfig = { kind: "sliding window", exact: false, rate: 6, period: MINUTE, start: 0, applyUpdates: ASYNC };
  const limit = (t: T) => t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: "slide", config }));
  const check = (t: T) => t.query((ctx) => ctx.runQuery(api.lib.checkRateLimit, { name: "slide", config }));

  test("decides the same with the takes pending and once applied, and the row keeps prev", async () => {
    const t = makeInspectableTest();
    // Six takes 50 s into a window, a millisecond apart (each call its own instant).
    for (let i = 0; i < 6; i++) {
      vi.setSystemTime(T0 + 50 * SECOND + i);
      expect((await limit(t)).ok).toBe(true);
    }
    expect(await pending(t)).toHaveLength(6);
    vi.setSystemTime(T0 + MINUTE);
    // All six are still inside the last minute: one comes back 10 s into the new window.
    expect(await check(t)).toEqual({ ok: false, retryAfter: 10 * SECOND });
    await drain(t);
    expect(await pending(t)).toEqual([]);
    expect(await rows(t)).toMatchObject([{ value: 0, ts: T0 + 50 * SECOND + 5, prev: 0, h: expect.any(Number) }]);
    // Applied, the same instant of return: asked 2 s later (after the applier's commits), 8 s to go.
    vi.setSystemTime(T0 + MINUTE + 2 * SECOND);
    expect(await check(t)).toEqual({ ok: false, retryAfter: 8 * SECOND });
    vi.setSystemTime(T0 + MINUTE + 10 * SECOND);
    expect((await limit(t)).ok).toBe(true);
    expect((await limit(t)).ok).toBe(false);
    await drain(t);
    expect(await rows(t)).toMatchObject([{ value: 0, ts: T0 + MINUTE + 10 * SECOND, prev: 6 }]);
  });
});

describe("several takes on one key in one transaction", () => {
  const limits = {
    llm: { kind: "token bucket", rate: 10, period: MINUTE, applyUpdates: ASYNC },
  } satisfies Record<string, RateLimitConfig>;

  test("admit exactly the rate: a stale snapshot can't see the transaction's own takes, so later ones decide exactly", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, limits);
    const admitted = await t.run(async (ctx) => {
      let n = 0;
      for (let i = 0; i < 12; i++) if ((await rl.limit(ctx, "llm", { key: "a" })).ok) n++;
      // Another key in the same transaction is its own: it starts on the snapshot again.
      expect((await rl.limit(ctx, "llm", { key: "b" })).ok).toBe(true);
      return n;
    });
    expect(admitted).toBe(10);
    expect(await pending(t)).toHaveLength(11);
  });

  test("a limitAll's takes count too: a limit after it on the same key decides exactly", async () => {
    const t = makeInspectableTest();
    const rl = new RateLimiter(api, limits);
    const admitted = await t.run(async (ctx) => {
      expect((await rl.limitAll(ctx, [{ name: "llm", key: "a", count: 10 }])).ok).toBe(true);
      let n = 0;
      for (let i = 0; i < 2; i++) if ((await rl.limit(ctx, "llm", { key: "a" })).ok) n++;
      return n;
    });
    expect(admitted).toBe(0);
  });

  test("a peek after a take sees it: reserved into debt, count 0 is refused until the debt is repaid", async () => {
    const t = makeInspectableTest();
    const config = { ...limits.llm, maxReserved: 5 };
    const peek = await t.run(async (ctx) => {
      const rl = new RateLimiter(api, { llm: config });
      expect(await rl.limit(ctx, "llm", { key: "a", count: 12, reserve: true })).toEqual({ ok: true, retryAfter: 12 * SECOND });
      return await rl.limit(ctx, "llm", { key: "a", count: 0 });
    });
    expect(peek).toEqual({ ok: false, retryAfter: 12 * SECOND });
  });

  test("the component's own entry point decides exactly when asked", async () => {
    const t = makeInspectableTest();
    const config = limits.llm;
    const admitted = await t.run(async (ctx) => {
      let n = 0;
      for (let i = 0; i < 12; i++) {
        const r = await ctx.runMutation(api.lib.rateLimit, { name: "llm", config, exact: i > 0 });
        if (r.ok) n++;
      }
      return n;
    });
    expect(admitted).toBe(10);
  });
});

describe("asynchronous mode keeps the transactional arithmetic (two bugs found by the whole-flow properties)", () => {
  // In the pure layer (tools/memory-store.ts runs the component's own flows over a Map, with
  // explicit instants): convex-test (0.0.70 on) holds a clock set back at the last commit, as a
  // deployment does for one server, so it can no longer show a request on a clock behind the row's.
  test("a request on a clock behind the row's takes from the row's window: a window of 2 admits 2, not 3", () => {
    const config: RateLimitConfig = { kind: "fixed window", rate: 2, period: MINUTE, start: 0, applyUpdates: ASYNC };
    const store = new MemoryStore();
    const req = { name: "fw", config };
    const first = () => 0; // every draw: shard 0 of 1
    // T0 starts a window; the second request's clock is 2 s behind, in the window before.
    expect(store.limit(req, T0 + SECOND, first)).toEqual({ ok: true });
    expect(store.limit(req, T0 - SECOND, first)).toEqual({ ok: true });
    // Recorded no earlier than the take it was decided after, so the fold applies them in order.
    expect(store.read({ name: "fw" }).pending.map((p) => p.ts)).toEqual([T0 + SECOND, T0 + SECOND]);
    expect(store.check(req, T0 + SECOND, first)).toEqual({ ok: false, retryAfter: MINUTE - SECOND });
    store.apply(T0 + SECOND);
    expect(store.read({ name: "fw" }).pending).toEqual([]);
    expect(store.limit(req, T0 + SECOND, first)).toEqual({ ok: false, retryAfter: MINUTE - SECOND });
    expect(store.limit(req, T0 + MINUTE, first)).toEqual({ ok: true });
  });

  test("a fractional reservation's debt is repaid at exactly its retryAfter, applied or not", async () => {
    const t = makeInspectableTest();
    const config: RateLimitConfig = { kind: "fixed window", rate: 1.7, period: SECOND, capacity: 11, start: 0, applyUpdates: ASYNC };
    const rl = new RateLimiter(api, { fw: config });
    expect(await t.run((ctx) => rl.limit(ctx, "fw", { count: 16.1, reserve: true }))).toEqual({ ok: true, retryAfter: 3 * SECOND });
    for (const applied of [false, true]) {
      if (applied) await drain(t);
      // Peeks are queries: they commit nothing, so the clock may go back to T0 for the second pass.
      vi.setSystemTime(T0 + 3 * SECOND - 1);
      expect(await t.query((ctx) => rl.check(ctx, "fw", { count: 0 })), `applied: ${applied}`).toMatchObject({ ok: false });
      vi.setSystemTime(T0 + 3 * SECOND);
      expect(await t.query((ctx) => rl.check(ctx, "fw", { count: 0 })), `applied: ${applied}`).toEqual({ ok: true });
      vi.setSystemTime(T0);
    }
  });
});
