// The component's registered functions on convex-test with fake timers and a seeded Math.random, for every kind × 1, 2, 3, 10 shards, counting its rows through a test-only query.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import {
  calculateRateLimit,
  type GetValueReturns,
  HOUR,
  MINUTE,
  RateLimiter,
  SECOND,
  type RateLimitConfig,
  type RateLimitReturns,
} from "../src/client/index.js";
import type { Doc } from "../src/component/_generated/dataModel.js";
import { splitTotal } from "../src/shared/core/split.js";
import { READ_ON_SHARDS } from "../src/shared/shards/overload.js";
import { seededRandom as seeded } from "../tools/random.js";
import { at, next } from "./clock.js";
import { convexErrorData, inspectable, makeInspectableTest } from "./setup.js";

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 123);

const api = inspectable.rateLimiter;
const makeT = makeInspectableTest;
type T = ReturnType<typeof makeT>;
/** A convex-test instance, or the runner of `at`'s one transaction (its calls share one instant). */
type Run = Pick<T, "run">;

async function rows(t: Run, name?: string, key?: string): Promise<Doc<"rateLimits">[]> {
  const all = await t.run((ctx) => ctx.runQuery(api.inspect.rows, {}));
  return all.filter((r) => (name === undefined || r.name === name) && (key === undefined || r.key === key));
}

/** Makes the next Math.random draw pick `shard` of `n` as a request's first shard. */
function firstPick(shard: number, n: number) {
  vi.mocked(Math.random).mockReturnValueOnce((shard + 0.5) / n);
}

/** Makes a request's two draws pick shards `a` then `b` (distinct) of `n`. */
function bothPicks(a: number, b: number, n: number) {
  const j = (b - a - 1 + n) % n; // b = (a + 1 + j) % n
  vi.mocked(Math.random)
    .mockReturnValueOnce((a + 0.5) / n)
    .mockReturnValueOnce((j + 0.5) / Math.max(1, n - 1));
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  vi.spyOn(Math, "random").mockImplementation(seeded(42));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

// "sliding window" is the exact one (the default); the approximate one (exact: false) is a kind here.
const KINDS = ["token bucket", "fixed window", "sliding window", "approximate sliding window"] as const;
type Kind = (typeof KINDS)[number];
const isSliding = (kind: Kind) => kind === "sliding window" || kind === "approximate sliding window";
const SHARDS = [1, 2, 3, 10];
const RATE = 60;

type Extra = { rate?: number; period?: number; capacity?: number; start?: number };

function configOf(kind: Kind, shards: number, extra: Extra = {}): RateLimitConfig {
  const { start, ...numbers } = extra;
  const common = { rate: RATE, period: MINUTE, capacity: RATE, shards, ...numbers };
  if (kind === "sliding window") return { kind, ...common }; // exact: no start
  if (kind === "approximate sliding window") return { kind: "sliding window", exact: false, ...common, ...(start === undefined ? {} : { start }) };
  return kind === "token bucket"
    ? { kind, ...common }
    : { kind, ...common, ...(start === undefined ? {} : { start }) };
}

// The approximate window over fewer layouts: the exact one is the default, tested on all.
const cases = KINDS.flatMap((kind) => (kind === "approximate sliding window" ? [1, 3] : SHARDS).map((shards) => ({ kind, shards })));

describe.each(cases)("$kind, $shards shard(s)", ({ kind, shards }) => {
  const config = configOf(kind, shards);
  const name = "limit";

  const limit = (t: Run, args: { key?: string; count?: number; reserve?: boolean; throws?: boolean; details?: boolean } = {}) =>
    t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name, config, ...args }));
  const check = (t: Run, args: { key?: string; count?: number; reserve?: boolean; throws?: boolean } = {}) =>
    t.run((ctx) => ctx.runQuery(api.lib.checkRateLimit, { name, config, ...args }));
  const total = async (t: Run, key?: string) => {
    const gv = await t.run((ctx) =>
      ctx.runQuery(api.lib.getValue, { details: true, name, config, sampleShards: shards, ...(key === undefined ? {} : { key }) }),
    );
    expect(gv.total?.exact).toBe(true);
    return gv.total?.value;
  };
  /** Takes single tokens until the whole limit is empty (requests may miss while tokens remain elsewhere). */
  const drain = async (t: Run, key?: string) => {
    for (let i = 0; i < 20 * RATE && (await total(t, key))! >= 1; i++) {
      await limit(t, key === undefined ? {} : { key });
    }
    expect(await total(t, key)).toBeLessThan(1);
  };

  test("limit consumes tokens and check does not", async () => {
    // At one instant, so the totals count exactly the tokens taken: nothing refills between.
    await at(makeT(), T0, async (t) => {
      for (let i = 0; i < 5; i++) expect((await check(t, { key: "k", count: 10 })).ok).toBe(true);
      expect(await rows(t)).toHaveLength(0); // check never writes
      expect(await total(t, "k")).toBe(RATE);
      for (let i = 0; i < 3; i++) expect((await limit(t, { key: "k", count: 2 })).ok).toBe(true);
      expect(await total(t, "k")).toBe(RATE - 6);
      const before = await rows(t);
      expect((await check(t, { key: "k", count: 2 })).ok).toBe(true);
      expect(await rows(t)).toEqual(before);
      expect(await total(t, "k")).toBe(RATE - 6);
    });
  });

  test("getValue returns one shard's row with that shard's share of the config", async () => {
    // The takes and the reports at one instant, so each report is its shard's stored row as is.
    await at(makeT(), T0, async (t) => {
      for (let i = 0; i < 25; i++) await limit(t, { key: "k" });
      const stored = await rows(t, name, "k");
      for (let i = 0; i < 20; i++) {
        const gv = await t.run((ctx) => ctx.runQuery(api.lib.getValue, { details: true, name, key: "k", config }));
        // The share of shard i: the parts add up to the whole, so the promise is that shard's own.
        expect(gv.config).toMatchObject({
          kind: config.kind,
          ...(isSliding(kind) ? { exact: kind === "sliding window" } : {}),
          rate: splitTotal(RATE, shards, gv.shard),
          capacity: splitTotal(RATE, shards, gv.shard),
          period: MINUTE,
        });
        expect(gv.config.shards ?? 1).toBe(1);
        if (kind === "fixed window") expect(Number.isFinite(gv.config.start)).toBe(true);
        const row = stored.find((r) => r.shard === gv.shard);
        if (row) expect({ value: gv.value, ts: gv.ts }).toEqual({ value: row.value, ts: row.ts });
        else expect(gv.value).toBe(splitTotal(RATE, shards, gv.shard)); // no row: a full shard
        expect(gv.total).toMatchObject({ capacity: RATE, exact: shards === 1 });
      }
      expect(await total(t, "k")).toBe(RATE - 25);
    });
  });

  // The hook computes calculateRateLimit(value, config, t) at later instants without asking again.
  test("calculateRateLimit on getValue's answer never promises a count that check refuses later", async () => {
    const t = makeT();
    for (let i = 0; i < 45; i++) await limit(t, { key: "k" });
    vi.advanceTimersByTime(7 * SECOND);
    for (let i = 0; i < 5; i++) await limit(t, { key: "k", count: 1 });
    /** Checks every count at `start + dt` against what calculateRateLimit promised from `gv`. */
    const checksAt = async (u: Run, gv: GetValueReturns, dt: number) => {
      const shareCapacity = gv.config.capacity ?? gv.config.rate;
      for (let count = 1; count <= shareCapacity; count++) {
        // The row as getValue reports it (an exact window's log too: without it, the tokens used
        // would be taken at `ts`, a promise later than the server's).
        const promised = calculateRateLimit(gv, gv.config, start + dt, count).value >= 0;
        // The request starts on the shard getValue reported; a second read can only add.
        firstPick(gv.shard, shards);
        const answer = await check(u, { key: "k", count });
        if (promised) expect(answer.ok, `count ${count} at +${dt} ms`).toBe(true);
        // Unsharded, the view is exact both ways.
        if (shards === 1) expect(answer.ok, `count ${count} at +${dt} ms`).toBe(promised);
      }
    };
    // Each instant's checks in one transaction at exactly that instant; at +0, the one getValue read.
    const start = next();
    const gv = await at(t, start, async (u) => {
      const gv = await u.run((ctx) => ctx.runQuery(api.lib.getValue, { details: true, name, key: "k", config }));
      await checksAt(u, gv, 0);
      return gv;
    });
    for (const dt of [1, SECOND, 10 * SECOND, 29_999, 30 * SECOND, MINUTE - 1, MINUTE, 2 * MINUTE]) {
      await at(t, start + dt, (u) => checksAt(u, gv, dt));
    }
  });

  // The conservative view: whichever two shards check happens to read, a promised count is served.
  // (With 2 shards any pair is both shards, so the fuller is always read: nothing to show.)
  test.runIf(shards > 2)(
    "with every shard read, its promise holds whichever shards check picks",
    async () => {
      const t = makeT();
      // Drain every shard but shard 0, one at a time (the first pick is never comfortable when emptied).
      for (let s = 1; s < shards; s++) {
        bothPicks(s, s === 1 ? 2 : 1, shards);
        expect(await limit(t, { key: "k", count: splitTotal(RATE, shards, s), details: true })).toMatchObject({
          ok: true,
          details: { shards: [s] },
        });
      }
      const broken: string[] = [];
      /** Checks every promised count at `start + dt` on every pair of shards. */
      const checksAt = async (u: Run, gv: GetValueReturns, dt: number) => {
        for (let count = 1; count <= (gv.config.capacity ?? 0); count++) {
          if (calculateRateLimit({ value: gv.value, ts: gv.ts }, gv.config, start + dt, count).value < 0) continue;
          for (let a = 0; a < shards; a++) {
            for (let b = 0; b < shards; b++) {
              if (a === b) continue;
              bothPicks(a, b, shards);
              const answer = await check(u, { key: "k", count });
              if (!answer.ok) broken.push(`count ${count} at +${dt} ms on shards ${a},${b}`);
            }
          }
        }
      };
      // Each instant's checks in one transaction at exactly that instant; at +0, the one getValue read.
      const start = next();
      const gv = await at(t, start, async (u) => {
        const gv = await u.run((ctx) =>
          ctx.runQuery(api.lib.getValue, { details: true, name, key: "k", config, sampleShards: shards }),
        );
        await checksAt(u, gv, 0);
        return gv;
      });
      for (const dt of [10 * SECOND, MINUTE]) await at(t, start + dt, (u) => checksAt(u, gv, dt));
      expect(broken.length, broken.slice(0, 4).join("; ")).toBe(0);
    },
  );

  test("reset removes every shard of that key and nothing else", async () => {
    // At one instant, so the untouched key's total is exactly what was taken from it.
    await at(makeT(), T0, async (t) => {
      for (let i = 0; i < 40; i++) await limit(t, { key: "k" });
      await limit(t, { key: "other", count: 3 });
      const kRows = await rows(t, name, "k");
      expect(kRows.length).toBeGreaterThan(shards === 1 ? 0 : 1); // several shards were used
      const others = await rows(t, name, "other");
      await t.run((ctx) => ctx.runMutation(api.lib.resetRateLimit, { name, key: "k" }));
      expect(await rows(t, name, "k")).toHaveLength(0);
      expect(await rows(t, name, "other")).toEqual(others);
      expect(await total(t, "k")).toBe(RATE);
      expect(await total(t, "other")).toBe(RATE - 3);
    });
  });

  test("keys are isolated from each other and from the global (no key) limit", async () => {
    // At one instant, so a drained key stays drained and the totals count exactly the tokens taken.
    await at(makeT(), T0, async (t) => {
      await drain(t, "a");
      expect((await check(t, { key: "a" })).ok).toBe(false);
      expect((await limit(t, { key: "b" })).ok).toBe(true);
      expect((await limit(t)).ok).toBe(true);
      await drain(t);
      expect((await check(t)).ok).toBe(false);
      expect((await limit(t, { key: "b" })).ok).toBe(true);
      expect(await total(t, "b")).toBe(RATE - 2);
      expect((await check(t, { key: "a" })).ok).toBe(false);
      // The global limit's rows have no key at all.
      expect((await rows(t, name)).filter((r) => r.key === undefined).length).toBeGreaterThan(0);
    });
  });

  test("storage grows with keys, never with requests", async () => {
    const t = makeT();
    let most = 0;
    for (let i = 0; i < 150; i++) {
      await limit(t, { key: `user${i % 3}`, count: 1 + (i % 2) });
      vi.advanceTimersByTime(137);
      if (i % 10 === 9) most = Math.max(most, (await rows(t)).length);
    }
    expect(most).toBeLessThanOrEqual(3 * shards);
    for (const r of await rows(t)) expect(r.shard).toBeLessThan(shards);
  });

  test("results list the shards used, and only those rows change", async () => {
    const t = makeT();
    const seen = new Set<number>();
    for (let i = 0; i < 120; i++) {
      const before = await rows(t);
      const result = await limit(t, { key: "k", count: 1 + (i % 3), details: true });
      const after = await rows(t);
      const used = result.details?.shards ?? [];
      // A key's first write creates all its shards; those it didn't take from start full.
      const created = after.filter((r) => !before.some((b) => b._id === r._id));
      if (before.length === 0 && created.length > 0) {
        expect(created).toHaveLength(shards);
        for (const r of created.filter((c) => !used.includes(c.shard))) {
          expect(r.value).toBe(splitTotal(config.capacity ?? config.rate, shards, r.shard));
        }
      } else {
        expect(created).toEqual([]); // after that, no row is ever missing
      }
      const changed = after
        .filter((r) => {
          const old = before.find((b) => b._id === r._id);
          return old ? old.value !== r.value || old.ts !== r.ts : used.includes(r.shard);
        })
        .map((r) => r.shard);
      if (result.ok) {
        // The one or two shards taken from.
        expect(used.length).toBeGreaterThanOrEqual(1);
        expect(used.length).toBeLessThanOrEqual(Math.min(2, shards));
      } else {
        // Every shard read: the pair and, on these quiet shards (60 a minute over 2 or more: a
        // token a shard every 2 s or slower), READ_ON_SHARDS more where there are, each refusing.
        expect(used.length).toBe(shards === 1 ? 1 : Math.min(2 + READ_ON_SHARDS, shards));
      }
      expect(new Set(used).size).toBe(used.length);
      for (const s of used) {
        expect(Number.isInteger(s) && s >= 0 && s < shards).toBe(true);
        seen.add(s);
      }
      for (const s of changed) expect(used).toContain(s);
      if (result.ok) expect(changed.length).toBeGreaterThan(0);
      else expect(changed).toEqual([]);
      vi.advanceTimersByTime(400);
    }
    expect(seen.size).toBe(shards); // every shard gets used
  });

  test("throws raises RateLimited with name and retryAfter, and writes nothing", async () => {
    const t = makeT();
    await drain(t, "k");
    const before = await rows(t);
    for (const call of [limit, check]) {
      const data = await convexErrorData(call(t, { key: "k", throws: true }));
      expect(data).toEqual({ kind: "RateLimited", name, retryAfter: expect.any(Number) });
      if (typeof data === "object" && data !== null && "retryAfter" in data) {
        expect(Number.isInteger(data.retryAfter)).toBe(true);
        expect(data.retryAfter).toBeGreaterThanOrEqual(1);
      }
    }
    // With reserve (which a sliding window refuses), it throws whenever the work would have to wait.
    const reserve = !isSliding(kind);
    if (reserve) {
      expect(await convexErrorData(limit(t, { key: "k", reserve: true, throws: true }))).toEqual({
        kind: "RateLimited",
        name,
        retryAfter: expect.any(Number),
      });
    }
    expect(await rows(t)).toEqual(before);
    // A request that can run now doesn't throw, reserve or not.
    const now = await limit(t, { key: "fresh", reserve, throws: true });
    expect(now.ok && now.retryAfter === undefined).toBe(true);
    expect(await limit(t, { key: "fresh", throws: true })).toMatchObject({ ok: true });
  });

  test.skipIf(isSliding(kind))("reserve takes tokens ahead and says when the work may run", async () => {
    const t = makeT();
    await drain(t, "k");
    const r = await limit(t, { key: "k", reserve: true });
    expect(r.ok).toBe(true);
    expect(r.retryAfter).toBeGreaterThanOrEqual(1);
    expect(await total(t, "k")).toBeLessThan(0); // in debt
  });

  test("a mutation that limits and then throws leaves the state untouched", async () => {
    const t = makeT();
    const rl = new RateLimiter(api, { l: config });
    // All at T0, so nothing refills between: the caller's mutation throws, so it commits nothing
    // and the clock, which moves only with commits, is still at T0 after it.
    const before = await at(t, T0, async (u) => {
      await u.run((ctx) => rl.limit(ctx, "l", { key: "k", count: 5 }));
      return rows(u);
    });
    await expect(
      at(t, T0, (u) =>
        u.run(async (ctx) => {
          expect((await rl.limit(ctx, "l", { key: "k", count: 7 })).ok).toBe(true);
          expect((await rl.limit(ctx, "l", { key: "new", count: 1 })).ok).toBe(true);
          throw new Error("the caller failed after limiting");
        }),
      ),
    ).rejects.toThrow("the caller failed after limiting");
    const [after, value] = await at(t, T0, async (u) =>
      [await rows(u), await u.run((ctx) => rl.getValue(ctx, "l", { key: "k", sampleShards: shards, details: true }))] as const,
    );
    expect(after).toEqual(before);
    expect(value).toMatchObject({ total: { value: RATE - 5, exact: true } });
  });

  test("a sharded call on a healthy limit mostly reads one shard", async () => {
    const t = makeT();
    // Warm up until every shard has a row.
    for (let i = 0; i < 200 && (await rows(t)).length < shards; i++) {
      await limit(t, { key: "k" });
      vi.advanceTimersByTime(2 * SECOND);
    }
    expect(await rows(t)).toHaveLength(shards);
    let shardReads = 0;
    let calls = 0;
    for (let i = 0; i < 60; i++) {
      vi.advanceTimersByTime(10 * SECOND); // 6 requests a minute: a tenth of the rate
      const metrics = await t.run(async (ctx) => {
        const m0 = await ctx.meta.getTransactionMetrics();
        const result = await ctx.runMutation(api.lib.rateLimit, { name, key: "k", config, details: true });
        const m1 = await ctx.meta.getTransactionMetrics();
        return { result, docs: m1.documentsRead.used - m0.documentsRead.used };
      });
      expect(metrics.result.ok).toBe(true);
      // convex-test counts one extra document read per patch; every row exists, so each write is a patch.
      const reads = metrics.docs - (metrics.result.details?.shards.length ?? 0);
      expect(reads).toBeGreaterThanOrEqual(1);
      expect(reads).toBeLessThanOrEqual(shards === 1 ? 1 : 2);
      shardReads += reads;
      calls += 1;
    }
    expect(shardReads / calls).toBeLessThanOrEqual(shards === 1 ? 1 : 1.1);
  });

  test.runIf(shards === 1)("a retry at exactly now + retryAfter succeeds, one ms earlier fails", async () => {
    const t = makeT();
    for (const count of [1, 2, 7]) {
      // Drained and refused at one instant, `now`; the retries at their own instants after it.
      const now = next();
      const refused = await at(t, now, async (u) => {
        await drain(u, "k");
        return limit(u, { key: "k", count });
      });
      if (refused.ok) throw new Error(`count ${count} wasn't refused`);
      const wait = refused.retryAfter;
      expect(Number.isInteger(wait) && wait >= 1).toBe(true);
      expect((await at(t, now + wait - 1, (u) => limit(u, { key: "k", count }))).ok).toBe(false);
      expect((await at(t, now + wait, (u) => limit(u, { key: "k", count }))).ok).toBe(true);
    }
  });

  test.runIf(kind === "fixed window")(
    "the window phase is stable across calls and resets, and check sees it before any row exists",
    async () => {
      const t = makeT();
      const phaseOf = (ms: number) => ((ms % MINUTE) + MINUTE) % MINUTE;
      const gv = await t.run((ctx) => ctx.runQuery(api.lib.getValue, { details: true, name, key: "k", config }));
      const phase = phaseOf(gv.config.start ?? NaN);
      expect(Number.isFinite(phase)).toBe(true);
      // A capacity-0 probe: reserving 1 token answers "at the next boundary", before any row exists.
      const probe = async () => {
        const now = next(); // the instant the wait counts from
        const r = await at(t, now, (u) =>
          u.run((ctx) =>
            ctx.runQuery(api.lib.checkRateLimit, {
              name,
              key: "k",
              count: 1,
              reserve: true,
              config: { ...config, capacity: 0 },
            }),
          ),
        );
        expect(r.ok).toBe(true);
        return phaseOf(now + (r.retryAfter ?? NaN));
      };
      expect(await probe()).toBe(phase);
      expect(await rows(t)).toHaveLength(0);
      for (let i = 0; i < 5; i++) {
        await limit(t, { key: "k", count: 3 });
        for (const r of await rows(t, name, "k")) expect(phaseOf(r.ts)).toBe(phase);
        expect(await probe()).toBe(phase);
        vi.advanceTimersByTime(17_777 * (i + 1));
        if (i === 2) await t.run((ctx) => ctx.runMutation(api.lib.resetRateLimit, { name, key: "k" }));
      }
      // Other keys get other phases (no thundering herd).
      const phases = new Set<number>();
      for (const key of ["a", "b", "c", "d", "e"]) {
        const other = await t.run((ctx) => ctx.runQuery(api.lib.getValue, { details: true, name, key, config }));
        phases.add(phaseOf(other.config.start ?? NaN));
      }
      expect(phases.size).toBeGreaterThan(1);
    },
  );
});

describe.each(KINDS)("%s: layout changes and clearAll", (kind) => {
  const five = configOf(kind, 5, { rate: 10, capacity: 10 });
  const ten = configOf(kind, 10, { rate: 10, capacity: 10 });
  const as = (config: RateLimitConfig) => ({ name: "layout", config });
  const totalUnder = async (t: Run, config: RateLimitConfig) =>
    (await t.run((ctx) => ctx.runQuery(api.lib.getValue, { details: true, ...as(config), sampleShards: config.shards ?? 1 }))).total;
  /** Drains the limit under `config` with single tokens; through `at`'s runner, to 0 at one instant. */
  const drainUnder = async (t: Run, config: RateLimitConfig) => {
    for (let i = 0; i < 200 && (await totalUnder(t, config))!.value >= 1; i++) {
      await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, as(config)));
    }
    expect((await totalUnder(t, config))!.value).toBe(0);
  };

  test("going from 5 to 10 shards (or back) on a drained limit refills nothing at once", async () => {
    // "At once": drained, then every call under the other layout, at one instant.
    await at(makeT(), next(), async (t) => {
      await drainUnder(t, five);
      expect(await totalUnder(t, ten)).toEqual({ value: 0, capacity: 10, exact: true });
      for (let i = 0; i < 20; i++) {
        expect((await t.run((ctx) => ctx.runQuery(api.lib.checkRateLimit, as(ten)))).ok).toBe(false);
      }
      expect((await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, as(ten)))).ok).toBe(false);
    });
    // Back from 10 to 5: the extra rows are ignored, nothing is gained either.
    await at(makeT(), next(), async (t2) => {
      await drainUnder(t2, ten);
      expect(await totalUnder(t2, five)).toEqual({ value: 0, capacity: 10, exact: true });
    });
  });

  // After the change, what was admitted plus what is available can't exceed what refilled since the drain.
  test(`admitted + available never exceeds the refill since a drain before a layout change`, async () => {
    const t = makeT();
    const drained = next();
    await at(t, drained, (u) => drainUnder(u, five));
    let admitted = 0;
    const broken: string[] = [];
    for (let s = 1; s <= 90; s++) {
      // Each second a take, and what is available right after it, at that same instant.
      const elapsed = s * SECOND;
      const [took, available] = await at(t, drained + elapsed, async (u) =>
        [await u.run((ctx) => ctx.runMutation(api.lib.rateLimit, as(ten))), (await totalUnder(u, ten))!.value] as const,
      );
      if (took.ok) admitted += 1;
      const refilled =
        kind === "token bucket" ? (10 * elapsed) / MINUTE : 10 * Math.ceil(elapsed / MINUTE); // generous for windows
      if (admitted + available > refilled + 1e-9) broken.push(`+${s} s: ${admitted} admitted + ${available} available > ${refilled}`);
    }
    expect(broken.length, broken.slice(0, 4).join("; ")).toBe(0);
  });

  test("an idle limit is full again one period after a layout change", async () => {
    const t = makeT();
    const drained = next();
    await at(t, drained, (u) => drainUnder(u, five));
    expect(await at(t, drained + 2 * MINUTE, (u) => totalUnder(u, ten))).toEqual({ value: 10, capacity: 10, exact: true });
  });

  test("clearAll deletes in batches of 500 and reschedules itself until done", async () => {
    const t = makeT();
    const config = configOf(kind, 1);
    // Each take at its own ms, so each row's creation time is that ms: 520 before the cutoff, 3 after.
    for (let i = 0; i < 520; i++) {
      await at(t, T0 + i, (u) => u.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: "n", key: `k${i}`, config })));
    }
    const cutoff = T0 + 520;
    for (let i = 0; i < 3; i++) {
      await at(t, cutoff + 1 + i, (u) => u.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: "late", key: `k${i}`, config })));
    }
    expect(await rows(t)).toHaveLength(523);
    await t.run((ctx) => ctx.runMutation(api.lib.clearAll, { before: cutoff }));
    expect(await rows(t)).toHaveLength(23); // one batch of 500, and a follow-up scheduled
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    const left = await rows(t);
    expect(left.map((r) => r.name)).toEqual(["late", "late", "late"]); // created after `before`
    vi.advanceTimersByTime(1);
    await t.run((ctx) => ctx.runMutation(api.lib.clearAll, {}));
    expect(await rows(t)).toHaveLength(0);
  });
});

describe("retryAfter is exact for awkward rates (unsharded)", () => {
  // Rates whose per-ms refill isn't a float that divides evenly: rounding must not make a retry miss.
  const rates = [
    { rate: 1, period: HOUR }, // the documented example
    { rate: 3, period: HOUR },
    { rate: 7, period: HOUR },
    { rate: 0.7, period: MINUTE, capacity: 1 }, // fractional rate
    { rate: 10, period: 3 * SECOND + 1 },
  ];
  // A sliding window holds its rate at most, so a rate below 1 never serves a count of 1.
  const cases = KINDS.flatMap((kind) => rates.filter((r) => !isSliding(kind) || r.rate >= 1).map((r) => ({ kind, ...r })));
  test.each(cases)(
    "$kind, rate $rate per $period ms",
    async ({ kind, ...r }) => {
      const t = makeT();
      // A sliding window's capacity is its rate.
      const capacity = isSliding(kind) ? r.rate : (r.capacity ?? r.rate);
      const config = configOf(kind, 1, { ...r, capacity, start: T0 + 5 });
      const call = (u: Run, fn: "check" | "limit") =>
        u.run((ctx) =>
          fn === "check"
            ? ctx.runQuery(api.lib.checkRateLimit, { name: "n", config })
            : ctx.runMutation(api.lib.rateLimit, { name: "n", config }),
        );
      for (let round = 0; round < 4; round++) {
        // Drained and refused at one instant, `now`; the retries at their own instants after it.
        const now = next();
        const refused = await at(t, now, async (u) => {
          while ((await call(u, "limit")).ok);
          return call(u, "check");
        });
        if (refused.ok) throw new Error("a drained limit wasn't refused");
        const wait = refused.retryAfter;
        expect(Number.isInteger(wait)).toBe(true);
        expect((await at(t, now + wait - 1, (u) => call(u, "check"))).ok).toBe(false);
        expect((await at(t, now + wait, (u) => call(u, "limit"))).ok).toBe(true);
        vi.advanceTimersByTime(round * 977);
      }
    },
  );
});

describe("getValue's total when only some shards are read", () => {
  const config: RateLimitConfig = { kind: "token bucket", rate: 100, period: MINUTE, shards: 10 };
  const total = (t: Run) =>
    t.run((ctx) => ctx.runQuery(api.lib.getValue, { details: true, name: "sampled", config, sampleShards: 3 }));

  test("is scaled from the sample to the whole limit, and marked inexact", async () => {
    // At one instant, so the drained limit is exactly 0 on every shard when it is read.
    await at(makeT(), T0, async (t) => {
      // Fresh: three full shards of 10 stand for 100, not 30.
      expect((await total(t)).total).toEqual({ value: 100, capacity: 100, exact: false });
      // Drained (checked by reading every shard): any sample says 0.
      const exactTotal = async () =>
        (await t.run((ctx) => ctx.runQuery(api.lib.getValue, { details: true, name: "sampled", config, sampleShards: 10 }))).total;
      for (let i = 0; i < 1000 && (await exactTotal())?.value !== 0; i++) {
        await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: "sampled", config }));
      }
      expect(await exactTotal()).toEqual({ value: 0, capacity: 100, exact: true });
      expect((await total(t)).total).toEqual({ value: 0, capacity: 100, exact: false });
    });
  });
});
