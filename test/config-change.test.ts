// A config that changes under a live key, on convex-test with fake timers: each change is evaluated without throwing and never grants tokens the old or new limit wouldn't have; plus relayout's pure edge cases.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, MINUTE, SECOND, type RateLimitConfig } from "../src/client/index.js";
import { configTerms, relayout, resolvePhase, shardParams, termsHash } from "../src/shared/shards/layout.js";
import { isInvalidRateLimitError } from "../src/client/index.js";
import { inspectable, makeInspectableTest } from "./setup.js";

const api = inspectable.rateLimiter;
const HOUR_START = Date.UTC(2025, 0, 1, 12, 0, 0, 0);
const NAME = "changing";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(HOUR_START);
});
afterEach(() => vi.useRealTimers());

type T = ReturnType<typeof makeInspectableTest>;

/**
 * Takes one token at a time under `config` until refused; returns how many were admitted. One
 * transaction, so every take sees the same instant: convex-test's clock moves with commits, and
 * separate calls would refill a little between them.
 */
async function drain(t: T, config: RateLimitConfig, most = 1000): Promise<number> {
  return t.run(async (ctx) => {
    for (let admitted = 0; admitted < most; admitted++) {
      const r = await ctx.runMutation(api.lib.rateLimit, { name: NAME, config });
      if (!r.ok) return admitted;
    }
    throw new Error("never refused");
  });
}

const rows = (t: T) => t.run((ctx) => ctx.runQuery(api.inspect.rows, {}));

describe("each change is evaluated without throwing and grants nothing at the switch", () => {
  const onTheHour: RateLimitConfig = { kind: "fixed window", rate: 60, period: HOUR, start: 0 };
  const bucket: RateLimitConfig = { kind: "token bucket", rate: 60, period: HOUR };
  const sliding: RateLimitConfig = { kind: "sliding window", exact: false, rate: 60, period: HOUR, start: 0 };

  // Drained at 12:59, asked again at 13:30. `most` is what may pass then.
  test.each([
    // [why, before, after, most]
    ["fixed window → token bucket: refills from the window's end (13:00), not its start", onTheHour, bucket, 30],
    ["token bucket → fixed window: the first boundary after the last update (13:00) grants a window", bucket, onTheHour, 60],
    ["start moved to :30: the first new window after the old one's end (13:30)", onTheHour, { ...onTheHour, start: 30 * MINUTE }, 60],
    ["period shortened to a minute: minute windows from the old window's end", onTheHour, { ...onTheHour, period: MINUTE }, 60],
    ["capacity lowered: the value clamps", bucket, { ...bucket, capacity: 10 }, 10],
    ["shards 1 → 3", bucket, { ...bucket, shards: 3 }, 31],
    // A sliding window's promise ends at its last update, like a token bucket's.
    ["sliding window → token bucket: refills from the last update (12:59)", sliding, bucket, 31],
    ["token bucket → sliding window: the emptied bucket is a full window (12:00–13:00) sliding out over the next (30 by 13:30)", bucket, sliding, 30],
    ["fixed window → sliding window: nothing before the old window's end, then one window to slide out", onTheHour, sliding, 0],
    ["sliding window → fixed window: the first boundary after the last update (13:00) grants a window", sliding, onTheHour, 60],
  ] as [string, RateLimitConfig, RateLimitConfig, number][])("%s", async (_why, before, after, most) => {
    const t = makeInspectableTest();
    vi.setSystemTime(HOUR_START + 59 * MINUTE);
    expect(await drain(t, before)).toBeGreaterThan(0);
    vi.setSystemTime(HOUR_START + 90 * MINUTE);
    const check = await t.run((ctx) => ctx.runQuery(api.lib.checkRateLimit, { name: NAME, config: after }));
    const admitted = await drain(t, after);
    expect(admitted).toBeLessThanOrEqual(most);
    // The check decided without throwing, as the limits that followed at the same instant did.
    expect(check).toEqual(admitted > 0 ? { ok: true } : { ok: false, retryAfter: expect.any(Number) });
    // Every row now records the new layout, as the fingerprint of its terms (recorded for the name).
    for (const row of await rows(t)) {
      expect(row).toMatchObject({ h: termsHash(configTerms(after)) });
      expect(row).not.toHaveProperty("kind");
    }
  });

  test("after a switch the new config refills as usual", async () => {
    const t = makeInspectableTest();
    await drain(t, onTheHour);
    await drain(t, bucket); // the switch: nothing left to take
    vi.setSystemTime(HOUR_START + 50 * MINUTE);
    expect(await drain(t, bucket)).toBe(0); // the old window's tokens were spent until its end
    vi.setSystemTime(HOUR_START + 70 * MINUTE);
    expect(await drain(t, bucket)).toBe(10); // 60 an hour from 13:00: 10 by 13:10
  });
});

test("a peek with a layout change pending writes nothing", async () => {
  const t = makeInspectableTest();
  const two: RateLimitConfig = { kind: "token bucket", rate: 10, period: MINUTE, shards: 2 };
  await drain(t, two);
  const before = await rows(t);
  const peek = await t.run((ctx) =>
    ctx.runMutation(api.lib.rateLimit, { name: NAME, config: { ...two, shards: 4 }, count: 0 }),
  );
  expect(peek.ok).toBe(true); // drained to exactly 0: not in debt
  expect(await rows(t)).toEqual(before);
});

test("a reservation whose wait doesn't fit in a number is an error naming count", async () => {
  const t = makeInspectableTest();
  const config: RateLimitConfig = { kind: "token bucket", rate: 10, period: MINUTE };
  const error = await t
    .run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config, count: 1e308, reserve: true }))
    .then(() => undefined, (e: unknown) => e);
  expect(isInvalidRateLimitError(error) && error.data).toMatchObject({ field: "count", value: "1e+308" });
  expect(await rows(t)).toEqual([]);
});

describe("relayout, pure", () => {
  const config = (shards: number, capacity = 100): RateLimitConfig => ({
    kind: "token bucket",
    rate: 100,
    period: MINUTE,
    capacity,
    shards,
  });
  const phase = resolvePhase(config(1), NAME, undefined);

  describe("a fixed window's debt repaid past 2^53 ms (reserved ahead with no maxReserved)", () => {
    // Windows of a minute from 0, 2 a window: a debt of 1e17 tokens is repaid 5e16 windows on,
    // past Number.MAX_SAFE_INTEGER ms, where a window count minus 1 is the same number.
    const owing = (value: number, rate: number) => [{ shard: 0, value, ts: 0, shards: 1, kind: "fixed window" as const, rate, period: MINUTE, capacity: rate }];
    const windows = (rate: number): RateLimitConfig => ({ kind: "fixed window", rate, period: MINUTE, start: 0 });

    test("raised from 2 to 3 a window: carried in a few steps, still owing for ages", () => {
      const [state] = relayout(owing(-1e17, 2), windows(3), 0, 0);
      // Scaled by the rates (3 a window where 2 were): repaid when the old terms would repay it.
      expect(state).toStrictEqual({ value: -1.5e17, ts: 0 });
    });

    test("a debt of one token at a rate of 1e-17 a window, raised to 3: owes until the old rate repays it", () => {
      const [state] = relayout(owing(-1, 1e-17), windows(3), 0, 0);
      // 3e17 tokens of the new rate: 1e17 windows, as the old rate takes (to the float's rounding).
      expect(state!.value).toBeLessThan(-2.9999999e17);
      expect(state!.value).toBeGreaterThanOrEqual(-3e17);
      expect(state!.ts).toBe(0);
    });

    test("a debt the scaling would carry past the most negative number is held there (finite, never a grant)", () => {
      const [state] = relayout(owing(-1e300, 1e-300), windows(1e300), 0, 0);
      expect(state).toStrictEqual({ value: -Number.MAX_VALUE, ts: 0 });
    });

    test("a debt repaid within 2^53 ms is carried window by window as before", () => {
      // 5 owed at 2 a window: repaid at the start of window 3, which then holds 1; raised to 3 a
      // window, windows 1 and 2 hold nothing and window 3 holds 1: 1 - 3 × 3 at window 0.
      const [state] = relayout(owing(-5, 2), windows(3), 0, 0);
      expect(state).toStrictEqual({ value: -8, ts: 0 });
    });
  });

  test("upstream rows (no layout recorded) are taken as the smallest layout that has them", () => {
    // Ten drained rows of an old 10-shard limit, now configured with 20: nothing was available.
    const legacy = Array.from({ length: 10 }, (_, shard) => ({ shard, value: 0, ts: 0 }));
    const states = relayout(legacy, config(20), phase, 0);
    expect(states).toHaveLength(20);
    expect(states.reduce((sum, s) => sum + s.value, 0)).toBe(0);
  });

  test("what a full shard can't take goes to a shard with room", () => {
    // 9.5 tokens over shares of 4, 3, 3 (capacity 10): all of it fits.
    const old = [{ shard: 0, value: 9.5, ts: 0, shards: 1, kind: "token bucket" as const }];
    const states = relayout(old, config(3, 10), phase, 0);
    expect(states.map((s) => s.value).reduce((a, b) => a + b, 0)).toBe(9.5);
    // Split as 3, 3, 3.5; the last share holds 3, so its half token goes to shard 0 (share 4).
    expect(states.map((s) => s.value)).toEqual([3.5, 3, 3]);
  });

  test("the total is split exactly, never above a share", () => {
    const old = [
      { shard: 0, value: 20, ts: 0, shards: 5, kind: "token bucket" as const },
      { shard: 1, value: 0, ts: 0, shards: 5, kind: "token bucket" as const },
    ]; // shards 2-4 missing: full under the old layout (20 each)
    const states = relayout(old, config(10), phase, 0);
    expect(states.reduce((sum, s) => sum + s.value, 0)).toBe(80);
    for (const s of states) expect(s.value).toBeLessThanOrEqual(10);
  });
});

describe("a changed clock is carried over from the row, not from the reader's time", () => {
  const before: RateLimitConfig = { kind: "fixed window", rate: 10, period: HOUR, start: 0 };
  // Review finding: carried-over state stamped with each reader's time never refilled when no
  // request wrote it, e.g. when every caller used `throws` (a throw writes nothing).
  test.each([
    ["start moved to :30", { ...before, start: 30 * MINUTE }],
    ["switched to a token bucket", { kind: "token bucket", rate: 10, period: HOUR }],
  ] as [string, RateLimitConfig][])("%s: callers using throws see the same refills as the others", async (_why, after) => {
    const admittedWith = async (throws: boolean) => {
      const t = makeInspectableTest();
      vi.setSystemTime(HOUR_START + 10 * MINUTE);
      await drain(t, before);
      let admitted = 0;
      for (let step = 0; step < 30; step++) {
        vi.advanceTimersByTime(10 * MINUTE); // one request every 10 minutes for 5 hours
        const r = await t
          .run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: after, throws }))
          .catch(() => ({ ok: false }));
        if (r.ok) admitted++;
      }
      return admitted;
    };
    const quiet = await admittedWith(true);
    expect(quiet).toBeGreaterThan(0);
    expect(quiet).toBe(await admittedWith(false));
  });

  test("switching from upstream: a fixed-window row of its random phase, drained a day ago, is full", async () => {
    const t = makeInspectableTest();
    const config: RateLimitConfig = { kind: "fixed window", rate: 10, period: HOUR };
    // Upstream's window start: its own random phase (:17), a day ago, nothing left then.
    const ts = HOUR_START - 24 * HOUR - 43 * MINUTE;
    await t.run((ctx) => ctx.runMutation(api.inspect.insertUpstreamRow, { name: NAME, shard: 0, value: 0, ts }));
    for (let i = 0; i < 10; i++) {
      const r = await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config, throws: true }));
      expect(r.ok).toBe(true);
    }
    expect((await t.run((ctx) => ctx.runQuery(api.lib.checkRateLimit, { name: NAME, config }))).ok).toBe(false);
  });
});

describe("changes that used to gain tokens, now carried over on the row's own terms", () => {
  test("raising the shard count of a key in reservation debt admits nothing before the debt is repaid", async () => {
    const t = makeInspectableTest();
    const one: RateLimitConfig = { kind: "token bucket", rate: 60, period: HOUR, maxReserved: 60 };
    const four: RateLimitConfig = { ...one, shards: 4 };
    // 60 taken and 30 more reserved: 30 owed, repaid at 60 an hour by 12:30.
    vi.setSystemTime(HOUR_START);
    expect((await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: one, count: 60 }))).ok).toBe(true);
    const reserved = await t.run((ctx) =>
      ctx.runMutation(api.lib.rateLimit, { name: NAME, config: one, count: 30, reserve: true }),
    );
    expect(reserved).toEqual({ ok: true, retryAfter: 30 * MINUTE });
    // Just before the debt is repaid, under four shards, nothing passes, whichever shards are drawn.
    vi.setSystemTime(HOUR_START + 30 * MINUTE - 1);
    for (let i = 0; i < 20; i++) {
      expect((await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: four }))).ok).toBe(false);
    }
    // Every shard's part of the debt is repaid at 12:30: one token each 4 minutes per shard after.
    vi.setSystemTime(HOUR_START + 34 * MINUTE);
    expect(await drain(t, four)).toBeLessThanOrEqual(4);
  });

  test("a token bucket deep in debt switched to a sliding window admits nothing before its windows repay it", async () => {
    const t = makeInspectableTest();
    const bucket: RateLimitConfig = { kind: "token bucket", rate: 60, period: HOUR, maxReserved: 200 };
    const sliding: RateLimitConfig = { kind: "sliding window", exact: false, rate: 60, period: HOUR, start: 0 };
    vi.setSystemTime(HOUR_START);
    expect((await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: bucket, count: 60 }))).ok).toBe(true);
    const reserved = await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: bucket, count: 200, reserve: true }));
    expect(reserved).toEqual({ ok: true, retryAfter: 200 * MINUTE });
    // Owed 200 at 12:00, in the 12:00 hour; a sliding window repays at most 60 an hour from the
    // next: 140 owed at 14:00, 80 at 15:00, 20 at 16:00, nothing by 16:20. (It used to forget a
    // debt within two windows, whatever its depth.)
    for (const at of [2 * HOUR, 3 * HOUR, 4 * HOUR + 20 * MINUTE - 1]) {
      vi.setSystemTime(HOUR_START + at);
      expect(await drain(t, sliding)).toBe(0);
    }
    vi.setSystemTime(HOUR_START + 4 * HOUR + 30 * MINUTE);
    expect(await drain(t, sliding)).toBe(10);
  });

  test("shortening a fixed window's period on the same phase doesn't refill the window just emptied", async () => {
    const t = makeInspectableTest();
    const hourly: RateLimitConfig = { kind: "fixed window", rate: 10, period: HOUR, start: 0 };
    const quarterly: RateLimitConfig = { kind: "fixed window", rate: 10, period: 15 * MINUTE, start: 0 };
    vi.setSystemTime(HOUR_START + 5 * MINUTE);
    expect(await drain(t, hourly)).toBe(10);
    // 12:20: a 15-minute window would have opened at 12:15, but the hourly one holds until 13:00.
    vi.setSystemTime(HOUR_START + 20 * MINUTE);
    expect(await drain(t, quarterly)).toBe(0);
    vi.setSystemTime(HOUR_START + 59 * MINUTE);
    expect(await drain(t, quarterly)).toBe(0);
    vi.setSystemTime(HOUR_START + 60 * MINUTE);
    expect(await drain(t, quarterly)).toBe(10);
  });

  test("a fixed window switched to a token bucket refills from the old window's end at the new rate, not a window later", async () => {
    const t = makeInspectableTest();
    const perMinute: RateLimitConfig = { kind: "fixed window", rate: 10, period: MINUTE, start: 0 };
    const bucket: RateLimitConfig = { kind: "token bucket", rate: 60, period: HOUR };
    vi.setSystemTime(HOUR_START + 10 * SECOND);
    expect(await drain(t, perMinute)).toBe(10);
    // The old window ends at 12:01; the bucket then gains one a minute: 9 by 12:10.
    vi.setSystemTime(HOUR_START + 10 * MINUTE);
    expect(await drain(t, bucket)).toBe(9);
  });

  test("raising a token bucket's rate applies from the row's last update, the end of its promise", async () => {
    const t = makeInspectableTest();
    const slow: RateLimitConfig = { kind: "token bucket", rate: 60, period: HOUR };
    const fast: RateLimitConfig = { kind: "token bucket", rate: 600, period: HOUR };
    vi.setSystemTime(HOUR_START);
    expect(await drain(t, slow)).toBe(60);
    // 12:01: the new rate from the row's last update (12:00) gives 10, not the old terms' 1.
    vi.setSystemTime(HOUR_START + MINUTE);
    expect(await drain(t, fast)).toBe(10);
    // From then on, the new rate: 10 a minute.
    vi.setSystemTime(HOUR_START + 2 * MINUTE);
    expect(await drain(t, fast)).toBe(10);
  });

  test("after a change, a check's retryAfter holds at the retry though nothing wrote in between", async () => {
    const t = makeInspectableTest();
    const slow: RateLimitConfig = { kind: "token bucket", rate: 60, period: HOUR };
    const fast: RateLimitConfig = { kind: "token bucket", rate: 600, period: HOUR, capacity: 600 };
    vi.setSystemTime(HOUR_START);
    expect(await drain(t, slow)).toBe(60);
    vi.setSystemTime(HOUR_START + MINUTE);
    const peek = await t.run((ctx) => ctx.runQuery(api.lib.checkRateLimit, { name: NAME, config: fast, count: 40 }));
    expect(peek).toEqual({ ok: false, retryAfter: 3 * MINUTE });
    vi.setSystemTime(HOUR_START + 4 * MINUTE - 1);
    const early = await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: fast, count: 40 }));
    expect(early.ok).toBe(false);
    vi.setSystemTime(HOUR_START + 4 * MINUTE);
    const retry = await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: fast, count: 40 }));
    expect(retry).toEqual({ ok: true, retryAfter: undefined });
  });
});

describe("the stored row after a write: patched under the same terms, replaced under others", () => {
  const stored = async (t: T) =>
    (await rows(t)).map(({ _id, _creationTime, ...fields }) => fields);

  test("a sliding window's row, written again under the same terms, keeps its fields; as a token bucket, it loses prev", async () => {
    const t = makeInspectableTest();
    const sliding: RateLimitConfig = { kind: "sliding window", exact: false, rate: 60, period: HOUR, start: 0 };
    const bucket: RateLimitConfig = { kind: "token bucket", rate: 60, period: HOUR };
    await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: sliding }));
    vi.setSystemTime(HOUR_START + MINUTE);
    await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: sliding }));
    expect(await stored(t)).toEqual([{ name: NAME, shard: 0, value: 58, ts: HOUR_START + MINUTE, prev: 0, h: termsHash(configTerms(sliding)) }]);
    vi.setSystemTime(HOUR_START + 2 * MINUTE);
    await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: bucket }));
    const [row] = await stored(t);
    expect(Object.keys(row!).sort()).toEqual(["h", "name", "shard", "ts", "value"]);
    expect(row!.h).toBe(termsHash(configTerms(bucket)));
  });

  test("a row an earlier version wrote with its terms in full is replaced: the fingerprint stands for them", async () => {
    const t = makeInspectableTest();
    const config: RateLimitConfig = { kind: "token bucket", rate: 10, period: HOUR };
    const p = shardParams(config, 0, 0);
    await t.run((ctx) =>
      ctx.runMutation(api.inspect.insertRow, {
        name: NAME, shard: 0, value: 4, ts: HOUR_START, shards: 1, kind: p.kind, rate: p.rate, period: p.period, capacity: p.capacity, terms: p.terms!,
      }),
    );
    await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config }));
    expect(await stored(t)).toEqual([{ name: NAME, shard: 0, value: 3, ts: HOUR_START, h: termsHash(configTerms(config)) }]);
  });

  test("upstream's row is rewritten compact: its state and the fingerprint", async () => {
    const t = makeInspectableTest();
    const config: RateLimitConfig = { kind: "token bucket", rate: 10, period: HOUR };
    await t.run((ctx) => ctx.runMutation(api.inspect.insertUpstreamRow, { name: NAME, shard: 0, value: 4, ts: HOUR_START }));
    await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config }));
    expect(await stored(t)).toEqual([{ name: NAME, shard: 0, value: 3, ts: HOUR_START, h: termsHash(configTerms(config)) }]);
  });
});
