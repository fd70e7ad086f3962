// Side by side with @convex-dev/rate-limiter 0.4.0 on convex-test with fake timers and a seeded Math.random: each test feeds both components the same input and asserts both behaviours where they differ.
import upstreamTest from "@convex-dev/rate-limiter/test";
import {
  calculateRateLimit as upstreamCalculate,
  RateLimiter as UpstreamRateLimiter,
  type RateLimitConfig,
} from "@convex-dev/rate-limiter";
import type { ComponentApi as UpstreamApi } from "@convex-dev/rate-limiter/_generated/component.js";
import { convexTest } from "convex-test";
import { componentsGeneric, defineSchema } from "convex/server";
import { ConvexError } from "convex/values";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { calculateRateLimit, HOUR, MINUTE, RateLimiter, SECOND } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
import { register } from "../src/test.js";
import { seededRandom as seeded } from "../tools/random.js";
import { convexErrorData, errorOf } from "./setup.js";

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);
const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi; upstream: UpstreamApi };
const ours = new RateLimiter(components.rateLimiter);
const theirs = new UpstreamRateLimiter(components.upstream);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  vi.spyOn(Math, "random").mockImplementation(seeded(7));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

/** Both components in one app, each installed the way its package documents. */
function makeT() {
  const t = convexTest(defineSchema({}), import.meta.glob("./app/**/*.ts"));
  register(t);
  upstreamTest.register(t, "upstream");
  return t;
}
type T = ReturnType<typeof makeT>;

type Options = { key?: string; count?: number; reserve?: boolean };
const limitOurs = <O extends Options & { details?: boolean }>(t: T, config: RateLimitConfig, o?: O) =>
  t.run((ctx) => ours.limit(ctx, "n", { config, ...(o as O) }));
const limitTheirs = (t: T, config: RateLimitConfig, o: Options = {}) =>
  t.run((ctx) => theirs.limit(ctx, "n", { config, ...o }));
// Checks are queries: they commit nothing, so they don't move convex-test's clock (it moves with
// commits: a third top-level commit at one frozen instant runs 1 ms later). Where both packages
// must see one instant for several calls, the tests below make them in one transaction.
const checkOurs = (t: T, config: RateLimitConfig, o: Options = {}) =>
  t.query((ctx) => ours.check(ctx, "n", { config, ...o }));
const checkTheirs = (t: T, config: RateLimitConfig, o: Options = {}) =>
  t.query((ctx) => theirs.check(ctx, "n", { config, ...o }));

/** Our validation error: a ConvexError naming the field, so it survives production redaction. */
async function expectInvalid(p: Promise<unknown>, field: string) {
  expect(await convexErrorData(p)).toMatchObject({ kind: "InvalidRateLimit", field });
}

// Configs are typed as upstream's: an upstream config is also one of ours (see upstream.test-d.ts).
const tenPerMinute = { kind: "token bucket", rate: 10, period: MINUTE } as const satisfies RateLimitConfig;

describe("differences from @convex-dev/rate-limiter 0.4.0", () => {
  test("maxReserved: 0 — upstream reserves without limit; ours allows no reservation", async () => {
    const t = makeT();
    const config: RateLimitConfig = { ...tenPerMinute, maxReserved: 0 };
    // Every call at T0, in one transaction.
    await t.run(async (ctx) => {
      for (let i = 0; i < 10; i++) {
        await theirs.limit(ctx, "n", { config });
        await ours.limit(ctx, "n", { config });
      }
      expect(await theirs.limit(ctx, "n", { config, reserve: true })).toEqual({ ok: true, retryAfter: 6 * SECOND });
      expect(await theirs.limit(ctx, "n", { config, reserve: true })).toEqual({ ok: true, retryAfter: 12 * SECOND });
      expect(await ours.limit(ctx, "n", { config, reserve: true })).toMatchObject({ ok: false, retryAfter: 6 * SECOND });
    });
  });

  test("non-integer or zero shards — upstream rounds (0 becomes 1); ours refuses the config", async () => {
    const t = makeT();
    expect(await limitTheirs(t, { ...tenPerMinute, shards: 2.5 })).toEqual({ ok: true });
    expect(await limitTheirs(t, { ...tenPerMinute, shards: 0 })).toEqual({ ok: true });
    await expectInvalid(limitOurs(t, { ...tenPerMinute, shards: 2.5 }), "config.shards");
    await expectInvalid(limitOurs(t, { ...tenPerMinute, shards: 0 }), "config.shards");
  });

  test("negative count — upstream adds tokens beyond the capacity; ours refuses it", async () => {
    const t = makeT();
    expect(await limitTheirs(t, tenPerMinute, { count: -5 })).toEqual({ ok: true });
    const after = await t.run((ctx) => theirs.getValue(ctx, "n", { config: tenPerMinute }));
    expect(after.value).toBe(15); // capacity is 10
    await expectInvalid(limitOurs(t, tenPerMinute, { count: -5 }), "count");
  });

  test("a fixed-window start in the future — upstream blocks until then; ours uses only its phase", async () => {
    const t = makeT();
    const config: RateLimitConfig = { kind: "fixed window", rate: 10, period: HOUR, start: T0 + 2 * HOUR };
    expect(await limitTheirs(t, config)).toEqual({ ok: false, retryAfter: 2 * HOUR });
    expect(await limitOurs(t, config)).toMatchObject({ ok: true });
  });

  test("NaN rate — upstream lets everything through, forever; ours refuses the config", async () => {
    const t = makeT();
    const config: RateLimitConfig = { kind: "token bucket", rate: NaN, period: MINUTE, capacity: 3 };
    for (let i = 0; i < 10; i++) expect(await limitTheirs(t, config)).toEqual({ ok: true });
    const stored = await t.run((ctx) => theirs.getValue(ctx, "n", { config }));
    expect(stored.value).toBeNaN();
    await expectInvalid(limitOurs(t, config), "config.rate");
  });

  test("count above the capacity — upstream throws a plain Error (redacted in production); ours a ConvexError naming the field", async () => {
    const t = makeT();
    const e = await errorOf(limitTheirs(t, tenPerMinute, { count: 11 }));
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(ConvexError);
    expect(String(e)).toContain("exceeds");
    await expectInvalid(limitOurs(t, tenPerMinute, { count: 11 }), "count");
  });

  test("2 shards, count above one shard — upstream returns a retryAfter that never comes; ours combines both shards", async () => {
    const t = makeT();
    const config: RateLimitConfig = { ...tenPerMinute, shards: 2 };
    const first = await limitTheirs(t, config, { count: 8 });
    expect(first.ok).toBe(false);
    vi.advanceTimersByTime(first.retryAfter ?? NaN);
    expect((await limitTheirs(t, config, { count: 8 })).ok).toBe(false);
    vi.advanceTimersByTime(HOUR);
    expect((await limitTheirs(t, config, { count: 8 })).ok).toBe(false);
    expect(await limitOurs(t, config, { count: 8 })).toMatchObject({ ok: true });
  });

  test("a fresh 10-shard limit and a count of 15 — upstream refuses it forever; ours serves it from two shards", async () => {
    const t = makeT();
    const config: RateLimitConfig = { kind: "token bucket", rate: 100, period: MINUTE, shards: 10 };
    for (let i = 0; i < 3; i++) {
      const r = await limitTheirs(t, config, { count: 15 });
      expect(r.ok).toBe(false);
      vi.advanceTimersByTime((r.retryAfter ?? NaN) + HOUR);
    }
    const r = await limitOurs(t, config, { count: 15, details: true });
    expect(r.ok).toBe(true);
    expect(r.details?.shards).toHaveLength(2);
  });

  // Upstream's retryAfter is a float; a retry at the nearest whole ms can still be refused.
  test.each([
    { rate: 1, ours: 3_600_000 },
    { rate: 7, ours: 514_286 },
  ])("rate $rate per hour — upstream's retryAfter isn't a whole ms and a retry then can fail; ours is exact", async ({ rate, ours: exact }) => {
    const t = makeT();
    const config: RateLimitConfig = { kind: "token bucket", rate, period: HOUR };
    // Emptied and refused at T0, in one transaction.
    const [theirsRefused, oursRefused] = await t.run(async (ctx) => {
      for (let i = 0; i < rate; i++) {
        await theirs.limit(ctx, "n", { config });
        await ours.limit(ctx, "n", { config });
      }
      return [await theirs.limit(ctx, "n", { config }), await ours.limit(ctx, "n", { config })] as const;
    });
    expect(theirsRefused.ok).toBe(false);
    expect(Number.isInteger(theirsRefused.retryAfter)).toBe(false);
    expect(oursRefused).toMatchObject({ ok: false, retryAfter: exact });
    vi.advanceTimersByTime(exact - 1);
    expect((await checkOurs(t, config)).ok).toBe(false);
    vi.advanceTimersByTime(1);
    expect((await checkOurs(t, config)).ok).toBe(true);
    if (rate === 1) {
      // 3 600 000.0000000005 ms: at 3 600 000 ms upstream still refuses.
      expect(await checkTheirs(t, config)).toMatchObject({ ok: false });
    }
  });

  test("fixed window without start — upstream draws a new random phase at each reset; ours keeps a stable phase", async () => {
    const t = makeT();
    const config: RateLimitConfig = { kind: "fixed window", rate: 10, period: HOUR };
    const theirsPhases = new Set<number>();
    const oursPhases = new Set<number>();
    for (let i = 0; i < 4; i++) {
      await limitTheirs(t, config);
      await limitOurs(t, config);
      theirsPhases.add((await t.run((ctx) => theirs.getValue(ctx, "n", { config }))).config.start ?? NaN);
      oursPhases.add((await t.run((ctx) => ours.getValue(ctx, "n", { config }))).config.start ?? NaN);
      await t.run((ctx) => theirs.reset(ctx, "n"));
      await t.run((ctx) => ours.reset(ctx, "n", { config }));
      // Before any row exists, upstream reports phase 0 (its next call draws another).
      expect((await t.run((ctx) => theirs.getValue(ctx, "n", { config }))).config.start).toBe(0);
    }
    expect(theirsPhases.size).toBeGreaterThan(1);
    expect(oursPhases.size).toBe(1);
  });

  test("getValue on a sharded limit — upstream pairs one shard's value with the whole limit's config; ours with that shard's share", async () => {
    const t = makeT();
    const config: RateLimitConfig = { kind: "token bucket", rate: 100, period: MINUTE, shards: 10 };
    const theirsView = await t.run((ctx) => theirs.getValue(ctx, "n", { config }));
    expect(theirsView).toMatchObject({ value: 100, ts: 0, config: { capacity: 100 } });
    // What that view promises (100 at once) upstream itself refuses as impossible.
    expect(String(await errorOf(limitTheirs(t, config, { count: 100 })))).toContain("exceeds");
    const oursView = await t.run((ctx) => ours.getValue(ctx, "n", { config, details: true }));
    expect(oursView).toMatchObject({ value: 10, ts: T0, config: { rate: 10, capacity: 10, shards: 1 }, total: { capacity: 100 } });
  });

  test("5 → 10 shards on a drained limit — upstream refills the 5 new shards at once; ours refills nothing", async () => {
    const t = makeT();
    const five: RateLimitConfig = { ...tenPerMinute, shards: 5 };
    const ten: RateLimitConfig = { ...tenPerMinute, shards: 10 };
    for (let i = 0; i < 60; i++) {
      await limitTheirs(t, five);
      await limitOurs(t, five);
    }
    let theirsAdmitted = 0;
    let oursAdmitted = 0;
    for (let i = 0; i < 40; i++) {
      if ((await limitTheirs(t, ten)).ok) theirsAdmitted += 1;
      if ((await limitOurs(t, ten)).ok) oursAdmitted += 1;
    }
    expect(theirsAdmitted).toBe(5);
    expect(oursAdmitted).toBe(0);
  });

  test("fixed window, rate 10 over 8 shards — upstream admits 8 per window; ours all 10", async () => {
    const t = makeT();
    const config: RateLimitConfig = { kind: "fixed window", rate: 10, period: MINUTE, shards: 8, start: T0 };
    const admitted = { theirs: 0, ours: 0 };
    for (let w = 0; w < 3; w++) {
      for (let i = 0; i < 60; i++) {
        if ((await limitTheirs(t, config)).ok) admitted.theirs += 1;
        if ((await limitOurs(t, config)).ok) admitted.ours += 1;
      }
      vi.advanceTimersByTime(MINUTE);
    }
    expect(admitted).toEqual({ theirs: 24, ours: 30 });
  });

  test("rate 5 over 8 shards — upstream silently admits nothing, ever; ours refuses the config", async () => {
    const t = makeT();
    const config: RateLimitConfig = { kind: "fixed window", rate: 5, period: MINUTE, shards: 8, start: T0 };
    for (let w = 0; w < 3; w++) {
      for (let i = 0; i < 20; i++) expect((await limitTheirs(t, config)).ok).toBe(false);
      vi.advanceTimersByTime(MINUTE);
    }
    await expectInvalid(limitOurs(t, config), "config.shards");
  });

  test("an empty name — upstream accepts it; ours refuses it", async () => {
    const t = makeT();
    expect(await t.run((ctx) => theirs.limit(ctx, "", { config: tenPerMinute }))).toEqual({ ok: true });
    await expectInvalid(
      t.run((ctx) => ours.limit(ctx, "", { config: tenPerMinute })),
      "name",
    );
  });

  // Pure calculateRateLimit of both packages, with explicit instants: convex-test (0.0.70 on), like
  // a deployment, holds a clock set back at the last commit, so the components can't be shown a
  // clock running backwards any more.
  test("a clock that goes backwards — upstream takes tokens away for the negative time; ours counts no time passed", () => {
    type Calc = typeof calculateRateLimit;
    const at = (calc: Calc) => {
      const taken = calc(null, tenPerMinute, T0, 1); // one take at T0: 9 left
      // Another server's clock, 30 s behind: the 9 tokens are there.
      return (count: number) => calc({ value: taken.value, ts: taken.ts }, tenPerMinute, T0 - 30 * SECOND, count);
    };
    const theirsAt = at(upstreamCalculate as Calc);
    const oursAt = at(calculateRateLimit);
    expect(theirsAt(5).retryAfter).toBeGreaterThan(0); // refused: 9 - 5 for the 30 s "gone back", then 5
    expect(oursAt(9)).toMatchObject({ value: 0, ts: T0, retryAfter: undefined });
  });
});

describe("more differences", () => {
  // Drain a fixed window on the hour at 12:59 (60 taken), then switch the same numbers to a
  // token bucket: the window's start (12:00) is not when the last token was taken.
  test("fixed window → token bucket — upstream reads the window start as a last refill and grants ~59 at once; ours grants nothing", async () => {
    const t = makeT();
    const start = Date.UTC(2025, 0, 1, 12, 0, 0, 0);
    vi.setSystemTime(start + 59 * MINUTE);
    const fixed = { kind: "fixed window", rate: 60, period: HOUR, start: 0 } as const satisfies RateLimitConfig;
    const bucket = { kind: "token bucket", rate: 60, period: HOUR } as const satisfies RateLimitConfig;
    for (let i = 0; i < 60; i++) {
      expect((await limitOurs(t, fixed)).ok).toBe(true);
      expect((await limitTheirs(t, fixed)).ok).toBe(true);
    }
    let theirsAdmitted = 0;
    let oursAdmitted = 0;
    for (let i = 0; i < 100; i++) {
      if ((await limitTheirs(t, bucket)).ok) theirsAdmitted++;
      if ((await limitOurs(t, bucket)).ok) oursAdmitted++;
    }
    expect(theirsAdmitted).toBeGreaterThanOrEqual(58);
    expect(oursAdmitted).toBe(0);
  });

  test("period below 1 ms, a name over 1024 characters, more than 1024 shards — upstream accepts them; ours refuses, naming the field", async () => {
    const t = makeT();
    const long = "n".repeat(1025);
    expect((await t.run((ctx) => theirs.limit(ctx, "p", { config: { ...tenPerMinute, period: 0.5 } }))).ok).toBe(true);
    await expectInvalid(t.run((ctx) => ours.limit(ctx, "p", { config: { ...tenPerMinute, period: 0.5 } })), "config.period");
    expect((await t.run((ctx) => theirs.limit(ctx, long, { config: tenPerMinute }))).ok).toBe(true);
    await expectInvalid(t.run((ctx) => ours.limit(ctx, long, { config: tenPerMinute })), "name");
    const many = { kind: "token bucket", rate: 5000, period: MINUTE, shards: 1025 } as const satisfies RateLimitConfig;
    expect((await t.run((ctx) => theirs.limit(ctx, "s", { config: many }))).ok).toBe(true);
    await expectInvalid(t.run((ctx) => ours.limit(ctx, "s", { config: many })), "config.shards");
  });
});

describe("where both agree", () => {
  // Parity checks: drop-in users keep these behaviours.
  test("throws with reserve throws whenever the work would wait, with the same error data", async () => {
    const t = makeT();
    // Emptied at T0 in one transaction; the refusals throw, so they commit nothing and are at T0 too.
    await t.run(async (ctx) => {
      for (let i = 0; i < 10; i++) {
        await theirs.limit(ctx, "n", { config: tenPerMinute });
        await ours.limit(ctx, "n", { config: tenPerMinute });
      }
    });
    const a = await convexErrorData(t.run((ctx) => theirs.limit(ctx, "n", { config: tenPerMinute, reserve: true, throws: true })));
    const b = await convexErrorData(t.run((ctx) => ours.limit(ctx, "n", { config: tenPerMinute, reserve: true, throws: true })));
    expect(a).toEqual({ kind: "RateLimited", name: "n", retryAfter: 6 * SECOND });
    expect(b).toEqual(a);
  });

  test("capacity 0 with reserve spaces work evenly", async () => {
    const t = makeT();
    const config: RateLimitConfig = { ...tenPerMinute, capacity: 0 };
    // Every reservation at T0, in one transaction.
    await t.run(async (ctx) => {
      for (const wait of [6, 12, 18]) {
        expect(await theirs.limit(ctx, "n", { config, reserve: true })).toEqual({ ok: true, retryAfter: wait * SECOND });
        expect(await ours.limit(ctx, "n", { config, reserve: true })).toMatchObject({ ok: true, retryAfter: wait * SECOND });
      }
    });
  });

  test("a count of 0 on a limit in debt is refused until the debt is repaid", async () => {
    const t = makeT();
    const config: RateLimitConfig = { ...tenPerMinute, capacity: 1 };
    // Both reservations at T0 in one transaction; the checks after it are queries at T0.
    await t.run(async (ctx) => {
      await theirs.limit(ctx, "n", { config, count: 3, reserve: true });
      await ours.limit(ctx, "n", { config, count: 3, reserve: true });
    });
    expect(await checkTheirs(t, config, { count: 0 })).toEqual({ ok: false, retryAfter: 12 * SECOND });
    expect(await checkOurs(t, config, { count: 0 })).toMatchObject({ ok: false, retryAfter: 12 * SECOND });
  });
});

describe("whole tokens stay whole (pure calculateRateLimit of both packages)", () => {
  // A 10/min bucket of 3, taken at 0, 1 and 2 s, holds 1/3 token; at 6 s that is exactly 1 again.
  test("three takes then a fourth at 6 s: upstream falls 1e-16 short and refuses, ours admits", () => {
    const config: RateLimitConfig = { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 };
    type Calc = typeof calculateRateLimit;
    const run = (calc: Calc) => {
      let state: { value: number; ts: number } | null = null;
      for (const t of [0, 1000, 2000]) {
        const r = calc(state, config, t, 1);
        state = { value: r.value, ts: r.ts };
      }
      return calc(state, config, 6000, 1);
    };
    const theirs = run(upstreamCalculate as Calc);
    const ours = run(calculateRateLimit);
    expect(theirs.value).toBeLessThan(0); // refused: -1.1e-16
    expect(theirs.retryAfter).toBeGreaterThan(0);
    expect(ours.value).toBe(0); // admitted, exactly
    expect(ours.retryAfter).toBeUndefined();
  });
});
