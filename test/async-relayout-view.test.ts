// An asynchronous take recorded under another layout than the key's rows', at explicit instants: every read of one shard (getValue's and a request's plan) settles the key and agrees, on the in-memory store and on the component.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { DAY, SECOND, type RateLimitConfig } from "../src/client/index.js";
import { answerRead, applyFlow, requestFlow, runPlan, type KeyRow } from "../src/shared/flow/flow.js";
import { fold, isMarker, markerOn, settle } from "../src/shared/flow/settle.js";
import { configHash, resolvePhase, shardParams } from "../src/shared/shards/layout.js";
import { MemoryStore } from "../tools/memory-store.js";
import { seededRandom } from "../tools/random.js";
import { at, next } from "./clock.js";
import { inspectable, makeInspectableTest } from "./setup.js";

const T0 = 1_700_000_000_000;
const NAME = "relaid";
const ASYNC = "asynchronously" as const;

/** Draws that repeat `xs` in turn. */
function draws(...xs: number[]): () => number {
  let i = 0;
  return () => xs[i++ % xs.length]!;
}

/** Every shard's state at `now` as `getValue` reports it when it samples that shard alone. */
function perShard(store: MemoryStore, config: RateLimitConfig, now: number): { value: number; ts: number }[] {
  const n = config.shards ?? 1;
  return Array.from({ length: n }, (_, i) => {
    const v = store.getValue({ name: NAME, config, sampleShards: 1 }, now, draws((i + 0.5) / n));
    expect(v.shard).toBe(i);
    return { value: v.value, ts: v.ts };
  });
}

/** The whole limit's tokens at `now` as `getValue` reports them with every shard read. */
function total(store: MemoryStore, config: RateLimitConfig, now: number): number {
  const n = config.shards ?? 1;
  const v = store.getValue({ name: NAME, config, sampleShards: n, details: true }, now, draws(0.5));
  expect(v.total?.exact).toBe(true);
  return v.total!.value;
}

/** Draws spread over [0, 1): over 3 shards, requests pick pairs with shard 0 and without it. */
const GRID = [0, 0.2, 0.4, 0.5, 0.6, 0.8, 0.99];

describe("on the in-memory store", () => {
  // Token bucket 2.7/s on 2 shards: shard 0 has capacity and rate 1, shard 1 1.7.
  const two: RateLimitConfig = { kind: "token bucket", rate: 2.7, period: SECOND, shards: 2, applyUpdates: ASYNC };
  const one: RateLimitConfig = { ...two, shards: 1 };

  /**
   * Rows [1, 0.7] at T0 under 2 shards, then, at T0 + 1 under 1 shard, 1 taken from the rows
   * carried over (1.7 refilled 1 ms at 2.7/s: 1.7027), left pending: the key holds 0.7027.
   */
  function history(): MemoryStore {
    const store = new MemoryStore();
    expect(store.limit({ name: NAME, config: two }, T0, draws(0.99, 0.99))).toEqual({ ok: true });
    store.apply(T0);
    expect(store.read({ name: NAME }).rows.map((r) => [r.shard, r.value, r.ts])).toEqual([[0, 1, T0], [1, 0.7, T0]]);
    expect(store.limit({ name: NAME, config: one }, T0 + 1, draws(0.5))).toEqual({ ok: true });
    return store;
  }

  test("getValue, shard by shard, sees the take pending under 1 shard: exactly what conservation leaves", () => {
    const store = history();
    // 1.7 + 2.7 × 1 ms / 1000 − 1 = 0.7027, carried over to 2 shards as whole tokens low shards
    // first: shard 0 nothing, shard 1 all of it. Reading shard 1 alone saw its row and none of the
    // take (0.7 + 1.7 × 1 ms / 1000 = 0.7017), and shard 0 settled (0): 0.001 lost between reads.
    expect(perShard(store, two, T0 + 1)).toEqual([{ value: 0, ts: T0 + 1 }, { value: 0.7027, ts: T0 + 1 }]);
    expect(total(store, two, T0 + 1)).toBe(0.7027);
  });

  test("a request's plan reads each shard as getValue does, and writes exactly the count less", () => {
    const store = history();
    const states = perShard(store, two, T0 + 1);
    const out = runPlan(requestFlow<number>({ name: NAME, config: two, count: 0.5 }, T0 + 1, draws(0.99, 0.99)), (q) => answerRead(store.read({ name: NAME }), q));
    expect(out.plan.ok).toBe(true);
    expect(out.plan.writes).toEqual([{ shard: 1, state: { value: 0.2027, ts: T0 + 1 } }]);
    expect(states[1]!.value - out.plan.writes[0]!.state.value).toBe(0.5);
    store.write({ name: NAME }, out.ops, two);
    expect(perShard(store, two, T0 + 1)).toEqual([{ value: 0, ts: T0 + 1 }, { value: 0.2027, ts: T0 + 1 }]);
    // The applier, run under the latest take's config, folds in exactly what every read counted.
    store.apply(T0 + 1);
    expect(store.read({ name: NAME }).pending).toEqual([]);
    expect(total(store, two, T0 + 1)).toBe(0.2027);
  });

  // 3 per day on 3 shards (1 each): 1 taken, applied; under 1 shard the 2 left are all taken, and
  // left pending. Back on 3 shards the key holds nothing: a pair without shard 0 (whose takes the
  // 1-shard take sits with) served from its rows, 2 tokens that were gone.
  const three: RateLimitConfig = { kind: "token bucket", rate: 3, period: DAY, shards: 3, applyUpdates: ASYNC };
  test("a take of everything under 1 shard, then 3 shards: no pair serves, every shard reads empty", () => {
    const store = new MemoryStore();
    expect(store.limit({ name: NAME, config: three }, T0, draws(0, 0))).toEqual({ ok: true });
    store.apply(T0);
    expect(store.limit({ name: NAME, config: { ...three, shards: 1 }, count: 2 }, T0, draws(0))).toEqual({ ok: true });
    expect(perShard(store, three, T0).map((s) => s.value)).toEqual([0, 0, 0]);
    expect(total(store, three, T0)).toBe(0);
    for (const a of GRID) {
      for (const b of GRID) {
        // Two empty shards refilling 1 a day each serve 1 together in half a day.
        expect(store.check({ name: NAME, config: three }, T0, draws(a, b)), `draws ${a}, ${b}`).toEqual({ ok: false, retryAfter: DAY / 2 });
      }
    }
  });

  test("markers: one per shard of the rows that the take leaves unseen, none once a take under the new terms is there, none from a take under the rows' terms", () => {
    // 6 a day on 3 shards (2 each): 1 taken and applied, 5 left.
    const six: RateLimitConfig = { ...three, rate: 6 };
    const store = new MemoryStore();
    expect(store.limit({ name: NAME, config: six }, T0, draws(0, 0))).toEqual({ ok: true });
    store.apply(T0);
    const single = { ...six, shards: 1 };
    expect(store.limit({ name: NAME, config: single }, T0, draws(0))).toEqual({ ok: true });
    // The take on shard 0, and a marker (a take of nothing at no instant) on each of shards 1 and 2.
    const shape = () => store.read({ name: NAME }).pending.map((t) => [t.shard, t.count, isMarker(t), t.config?.shards]);
    expect(shape()).toEqual([[0, 1, false, 1], [1, 0, true, 1], [2, 0, true, 1]]);
    // A second take under the same terms finds every shard marked: it records only itself.
    expect(store.limit({ name: NAME, config: single }, T0, draws(0))).toEqual({ ok: true });
    expect(shape()).toHaveLength(4);
    // A take under the rows' own terms (the 3 left carried back over 3 shards) needs no marker:
    // a reader under other terms carries the rows over whatever it reads.
    expect(total(store, six, T0)).toBe(3);
    expect(store.limit({ name: NAME, config: six }, T0, draws(0, 0))).toEqual({ ok: true });
    expect(shape().slice(4)).toEqual([[0, 1, false, 3]]);
    // Markers count nothing: the applier and every read agree on the 2 left.
    expect(total(store, six, T0)).toBe(2);
    store.apply(T0);
    expect(store.read({ name: NAME }).pending).toEqual([]);
    expect(total(store, six, T0)).toBe(2);
  });

  test("a shard whose pending take is under the rows' terms still gets a marker: a reader of it alone counts that take, not the new one", () => {
    // 6 a day on 3 shards of 2: 1 taken from shard 0 and applied (rows 1, 2, 2), then 1 from
    // shard 1 left pending under the same terms: 4 left. Under 1 shard, 3 taken: 1 left.
    const six: RateLimitConfig = { ...three, rate: 6 };
    const store = new MemoryStore();
    expect(store.limit({ name: NAME, config: six }, T0, draws(0, 0))).toEqual({ ok: true });
    store.apply(T0);
    expect(store.limit({ name: NAME, config: six }, T0, draws(0.5, 0))).toEqual({ ok: true });
    expect(store.limit({ name: NAME, config: { ...six, shards: 1 }, count: 3 }, T0, draws(0))).toEqual({ ok: true });
    const pending = store.read({ name: NAME }).pending;
    expect(pending.filter(isMarker).map((t) => t.shard)).toEqual([1, 2]);
    // Back on 3 shards, the 1 left carried over as whole tokens, low shards first; shard 1 alone
    // would otherwise read its row less its own take: 1 token that is gone.
    expect(perShard(store, six, T0).map((s) => s.value)).toEqual([1, 0, 0]);
    expect(total(store, six, T0)).toBe(1);
  });

  test("a refusal and a peek record no marker (nothing taken, nothing to see)", () => {
    const store = new MemoryStore();
    expect(store.limit({ name: NAME, config: three }, T0, draws(0, 0))).toEqual({ ok: true });
    store.apply(T0);
    const single = { ...three, shards: 1 };
    expect(store.limit({ name: NAME, config: single, count: 3 }, T0, draws(0))).toMatchObject({ ok: false });
    expect(store.limit({ name: NAME, config: single, count: 0 }, T0, draws(0))).toEqual({ ok: true });
    expect(store.read({ name: NAME }).pending).toEqual([]);
  });

  test("a tier's override of other terms: its takes and markers record the override's config, and readers under the named config see them", () => {
    const store = new MemoryStore();
    expect(store.limit({ name: NAME, config: three }, T0, draws(0, 0))).toEqual({ ok: true });
    store.apply(T0);
    // 6 a day on the same 3 shards: the 2 left carried over as whole tokens low shards first
    // ([1, 1, 0]), both taken by the pair [0, 1]; shard 2's row (1 under the named config) is marked.
    const six: RateLimitConfig = { kind: "token bucket", rate: 6, period: DAY };
    store.setOverride({ name: NAME }, { tier: "pro" }, { config: six }, three, T0);
    expect(store.limit({ name: NAME, config: three, tier: "pro", count: 2 }, T0, draws(0))).toEqual({ ok: true });
    const pending = store.read({ name: NAME }).pending;
    expect(pending.map((t) => [t.shard, t.count, isMarker(t), t.config?.rate])).toEqual([[0, 1, false, 6], [1, 1, false, 6], [2, 0, true, 6]]);
    expect(perShard(store, three, T0).map((s) => s.value)).toEqual([0, 0, 0]);
    for (const a of GRID) expect(store.check({ name: NAME, config: three }, T0, draws(a, 1 - a)).ok, `draw ${a}`).toBe(false);
  });
});

describe("a marker counts nothing", () => {
  const phaseOf = (c: RateLimitConfig) => resolvePhase(c, NAME, undefined);
  const three: RateLimitConfig = { kind: "token bucket", rate: 3, period: DAY, shards: 3, applyUpdates: ASYNC };
  const single: RateLimitConfig = { ...three, shards: 1 };
  /** Shard `shard` of `config` holding `value` at T0, stored compact (its terms' fingerprint). */
  const row = (config: RateLimitConfig, shard: number, value: number): KeyRow<number> => ({ id: shard, shard, value, ts: T0, h: configHash(config) });

  test("fold skips it: a state is what it was", () => {
    const p = shardParams(three, 0, 1);
    const state = { value: 0.25, ts: T0 };
    expect(fold(state, [markerOn(1)], p)).toBe(state);
    expect(fold(state, [markerOn(1), { shard: 1, count: 0.25, ts: T0 + 1 }], p)).toEqual(fold(state, [{ shard: 1, count: 0.25, ts: T0 + 1 }], p));
  });

  test("settle skips it: sorted first (no instant), it would carry the rows over to its terms before the takes", () => {
    // Rows [0, 1, 1] as the named config stores them. Carried to 1 shard and back they would be
    // [1, 1, 0] (whole tokens, low shards first).
    const rows = [0, 1, 1].map((value, shard) => {
      const p = shardParams(three, phaseOf(three), shard);
      return { shard, value, ts: T0, shards: 3, kind: p.kind, rate: p.rate, period: p.period, capacity: p.capacity, terms: p.terms };
    });
    const takes = [{ shard: 1, count: 1, ts: T0 + 1, config: three }];
    const without = settle(rows, takes, three, phaseOf, T0 + 1);
    expect(without.map((s) => s.value)).toEqual([0, 0, 1]);
    expect(settle(rows, [...takes, { ...markerOn(2), config: single }], three, phaseOf, T0 + 1)).toEqual(without);
  });

  test("the applier writes no row for a shard with only a marker", () => {
    const rows = [row(three, 0, 1), row(three, 1, 1), row(three, 2, 1)];
    const answer = () => ({ rows, pending: [] });
    const ops = runPlan(applyFlow<number>({ name: NAME, config: three }, [{ shard: 0, count: 1, ts: T0, config: three }, { ...markerOn(1), config: three }], T0), answer);
    expect(ops.map((o) => [o.op, "shard" in o ? o.shard : undefined])).toEqual([["patch", 0]]);
  });
});

describe("on the component (convex-test), the applier held back", () => {
  const api = inspectable.rateLimiter;
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  const three: RateLimitConfig = { kind: "token bucket", rate: 3, period: DAY, shards: 3, applyUpdates: ASYNC };
  test("a take of everything under 1 shard, then 3 shards: no request passes, and getValue shard by shard agrees with the whole", async () => {
    const t = makeInspectableTest();
    vi.spyOn(Math, "random").mockImplementation(seededRandom(5));
    const limit = (config: RateLimitConfig, count: number) => t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config, count }));
    expect(await limit(three, 1)).toEqual({ ok: true });
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    const t1 = next();
    expect(await at(t, t1, (u) => u.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: { ...three, shards: 1 }, count: 2 })))).toEqual({ ok: true });
    const pending = await t.query((ctx) => ctx.runQuery(api.inspect.pending, {}));
    expect(pending.some((p: { ts: number }) => p.ts === -Infinity)).toBe(true);
    // At one instant, over GRID's draws: 2 ms of 1 a day per shard refill nothing near a token.
    const t2 = t1 + 1;
    const verdicts = await at(t, t2, async (u) => {
      const out = [];
      for (const r of GRID) {
        vi.spyOn(Math, "random").mockImplementation(draws(r, (r + 0.5) % 1));
        out.push(await u.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: three, count: 1 })));
      }
      return out;
    });
    expect(verdicts.every((v) => !v.ok)).toBe(true);
    const values = await at(t, t2, async (u) => {
      const each = [];
      for (let i = 0; i < 3; i++) {
        vi.spyOn(Math, "random").mockImplementation(draws((i + 0.5) / 3));
        const v = await u.run((ctx) => ctx.runQuery(api.lib.getValue, { name: NAME, config: three, sampleShards: 1 }));
        expect(v.shard).toBe(i);
        each.push(v.value);
      }
      const whole = await u.run((ctx) => ctx.runQuery(api.lib.getValue, { name: NAME, config: three, sampleShards: 3, details: true }));
      return { each, whole: whole.total!.value };
    });
    expect(values.each.reduce((s, v) => s + v, 0)).toBe(values.whole);
    // All 3 were taken (1 at T0, 2 at t1); what refilled since is under a token.
    expect(values.whole).toBeLessThan(1);
  });
});
