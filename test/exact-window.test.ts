// The exact sliding window (`kind: "sliding window"`, `exact` unset or true): its log's encoding,
// tables of explicit instants, and properties: in any window of `period` ms it never admits more
// than `rate`, per shard and in all, through the whole request flow (shards, layout changes and
// asynchronous mode's applier included); a refusal's retryAfter is the least whole ms that works.
import { fc, test } from "@fast-check/vitest";
import { ConvexError } from "convex/values";
import { describe, expect } from "vitest";
import { MINUTE, SECOND, evaluate, paramsOf, withValue, type State } from "../src/shared/kinds/algebra.js";
import { calculateRateLimit, decideRateLimit } from "../src/shared/kinds/predict.js";
import { validateConfig } from "../src/shared/validation/validate.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import {
  MAX_EXACT_RATE,
  MAX_LOG_ENTRIES,
  carriedLog,
  decodeLog,
  encodeLog,
  freedAt,
  live,
  windowLog,
  withGivenBack,
  withTaken,
  type Entry,
} from "../src/shared/kinds/window-log.js";
import { MemoryStore } from "../tools/memory-store.js";
import { seededRandom } from "../tools/random.js";
import { recordTally, runs, TIMEOUT } from "../tools/fast-check.js";

const SW = "sliding window" as const;
const T0 = 1_700_000_000_000;
const NAME = "limit";

/** The entries of a state's log (none without one). */
function entries(state: { log?: ArrayBuffer }): Entry[] {
  return state.log === undefined ? [] : [...decodeLog(state.log)!];
}

/** The bytes of `entries` as `encodeLog` writes them. */
function bytesOf(entries: Entry[]): number[] {
  return [...new Uint8Array(encodeLog(entries))];
}

describe("the log's encoding", () => {
  test.each<[string, Entry[], number[]]>([
    ["no entries: no bytes", [], []],
    // Header 2 × 5 (even: whole ms after the one before, here after instant 0), then the count.
    ["one whole entry", [{ at: 5, count: 1 }], [10, 1]],
    ["a second entry 3 ms later, of 2 tokens", [{ at: 5, count: 1 }, { at: 8, count: 2 }], [10, 1, 6, 2]],
    ["two entries at one instant", [{ at: 5, count: 1 }, { at: 5, count: 1 }], [10, 1, 0, 1]],
    // 2 × 100 = 200 = 0b1_1001000: low 7 bits with the continuation bit, then 1.
    ["a header over 127 takes two bytes", [{ at: 100, count: 1 }], [200, 1, 1]],
    ["a count over 127 takes two bytes", [{ at: 0, count: 300 }], [0, 172, 2]],
    ["128 is the first number of two bytes", [{ at: 0, count: 128 }], [0, 128, 1]],
    ["127 still fits in one", [{ at: 0, count: 127 }], [0, 127]],
  ])("%s", (_, list, bytes) => {
    expect(bytesOf(list)).toEqual(bytes);
    expect(decodeLog(new Uint8Array(bytes).buffer)).toEqual(list);
  });

  test("a fractional instant or count, or an instant before 0, is written in full: header 1 and two float64s", () => {
    for (const list of [[{ at: 0.5, count: 1 }], [{ at: 3, count: 0.25 }], [{ at: -4, count: 1 }]]) {
      const bytes = bytesOf(list);
      expect(bytes.length).toBe(17);
      expect(bytes[0]).toBe(1);
      expect(decodeLog(new Uint8Array(bytes).buffer)).toEqual(list);
    }
  });

  test("a steady key's entry at today's clock takes a few bytes, the first one its instant in full", () => {
    const list = Array.from({ length: 100 }, (_, i) => ({ at: T0 + i * 600, count: 1 }));
    // The first: a 6-byte header (2 × T0 < 2^42) and its count; the rest: 2-byte header, 1-byte count.
    expect(bytesOf(list).length).toBe(7 + 99 * 3);
  });

  test.each<[string, number[]]>([
    ["an odd header other than 1", [3, 1]],
    ["a count of 0", [10, 0]],
    ["cut short after a header", [10]],
    ["cut short in a varint", [200]],
    ["cut short in a full entry", [1, 0, 0, 0]],
    // In full: instant 10, count 1; then instant 0, count 1 (each float64 little-endian).
    ["an entry before the one before it", [1, 0, 0, 0, 0, 0, 0, 0x24, 0x40, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]],
    ["an instant that isn't finite", [1, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]],
  ])("bytes that aren't a log decode to undefined: %s", (_, bytes) => {
    expect(decodeLog(new Uint8Array(bytes).buffer)).toBeUndefined();
  });

  test.prop([fc.array(fc.record({ gap: fc.oneof(fc.nat(10_000), fc.double({ min: 0, max: 1e4, noNaN: true })), count: fc.oneof(fc.integer({ min: 1, max: 5000 }), fc.double({ min: 1e-6, max: 50, noNaN: true })) }), { maxLength: 60 }), fc.integer({ min: -1e13, max: 1e13 })], runs(300, 5000))(
    "every log in order of time reads back as written",
    (steps, start) => {
      let at = start;
      const list = steps.map(({ gap, count }) => ({ at: (at += gap), count }));
      // Decoded from a copy of the bytes (not the cache the encoder fills).
      const copy = encodeLog(list).slice(0);
      expect(decodeLog(copy)).toEqual(list);
    },
  );
});

describe("the log's operations", () => {
  const log = [{ at: 10, count: 1 }, { at: 20, count: 2 }, { at: 30, count: 1 }];

  test("an entry leaves the window at exactly at + period", () => {
    expect(live(log, 1009, 1000)).toEqual(log);
    expect(live(log, 1010, 1000)).toEqual(log.slice(1));
    expect(live(log, 1030, 1000)).toEqual([]);
  });

  test("a take is kept in order of time, merged with one at its instant", () => {
    expect(withTaken(log, 30, 2)).toEqual([{ at: 10, count: 1 }, { at: 20, count: 2 }, { at: 30, count: 3 }]);
    expect(withTaken(log, 40, 1)).toEqual([...log, { at: 40, count: 1 }]);
    // A take before an entry ahead of it (a debt carried in) goes before it.
    expect(withTaken(log, 25, 1)).toEqual([log[0], log[1], { at: 25, count: 1 }, log[2]]);
  });

  test("giving back takes the oldest entries first, part of one if need be", () => {
    expect(withGivenBack(log, 1)).toEqual(log.slice(1));
    expect(withGivenBack(log, 2)).toEqual([{ at: 20, count: 1 }, log[2]]);
    expect(withGivenBack(log, 3)).toEqual([log[2]]);
    expect(withGivenBack(log, 4)).toEqual([]);
    expect(withGivenBack(log, 9)).toEqual([]);
  });

  test("a decoded log is frozen: a reader can't change what the next decision sees", () => {
    const bytes = encodeLog(log).slice(0);
    const entries = decodeLog(bytes)!;
    expect(Object.isFrozen(entries) && entries.every((e) => Object.isFrozen(e))).toBe(true);
    expect(() => (entries as Entry[]).splice(0, 1)).toThrow();
    expect(decodeLog(bytes)).toEqual(log);
  });

  test("past MAX_LOG_ENTRIES the entry cheapest to count later (tokens × ms) merges into the next", () => {
    // Counts 0.25, 0.5 and 0.75 in turn, so a merge that summed the wrong neighbours would show.
    const full = Array.from({ length: MAX_LOG_ENTRIES }, (_, i) => ({ at: i * 10 + (i === 7 ? 9 : 0), count: ((i % 3) + 1) * 0.25 }));
    // No bound on bytes here (fractional counts take 17 bytes an entry: see exact-window-bounded.test.ts).
    const after = withTaken(full, MAX_LOG_ENTRIES * 10, 0.5, MAX_LOG_ENTRIES, Infinity);
    expect(after.length).toBe(MAX_LOG_ENTRIES);
    // Entries 7 (at 79, 0.5) and 8 (at 80, 0.75) were the closest: 1 ms apart.
    expect(after.slice(6, 9)).toEqual([{ at: 60, count: 0.25 }, { at: 80, count: 1.25 }, { at: 90, count: 0.25 }]);
    const total = (list: readonly Entry[]) => list.reduce((sum, e) => sum + e.count, 0);
    expect(total(after)).toBe(total(full) + 0.5);
  });

  test.each<[string, number, number, number | undefined]>([
    // [why, value now, need, instant]: the log holds 1 at 10, 2 at 20 and 1 at 30; period 1000.
    ["one more token: when the oldest leaves", 0, 1, 1010],
    ["two: the second entry's two make three", 0, 2, 1020],
    ["three", 0, 3, 1020],
    ["four: the last entry too", 0, 4, 1030],
    ["with one already there, two more need the first two", 1, 3, 1020],
    ["more than the log can free", 0, 5, undefined],
  ])("freedAt: %s", (_, value, need, at) => {
    expect(freedAt(log, value, need, 1000)).toBe(at);
  });

  test("windowLog lists a row's takes; none without a log; undefined for bytes that aren't one", () => {
    expect(windowLog({ log: encodeLog(log).slice(0) })).toEqual(log);
    expect(windowLog({})).toEqual([]);
    expect(windowLog({ log: new Uint8Array([3]).buffer })).toBeUndefined();
  });

  test.each<[string, number, Entry[]]>([
    ["nothing used: no entries", 0, []],
    ["a debt owed: nothing to log", -2, []],
    ["used within one window's rate: one entry at ts", 4, [{ at: 500, count: 4 }]],
    ["exactly the rate", 10, [{ at: 500, count: 10 }]],
    // 25 of rate 10 is three windows' worth: held until two periods after ts, then one more period.
    ["a debt deeper than the rate: held a period per rate's worth", 25, [{ at: 2500, count: 25 }]],
  ])("a row without a log (another kind's, carried over): %s", (_, used, expected) => {
    expect(carriedLog(used, 500, 10, 1000)).toEqual(expected);
  });
});

describe("decisions at explicit instants", () => {
  const config: RateLimitConfig = { kind: SW, rate: 3, period: SECOND };

  test("three in any second: the fourth waits for the first to leave, to the ms", () => {
    let row: State | null = null;
    const seen: [number, boolean, number | undefined][] = [];
    for (const now of [0, 100, 200, 300, 999, 1000, 1099, 1100, 1200, 1200]) {
      const d = decideRateLimit(row, config, { now });
      seen.push([now, d.ok, d.retryAfter]);
      row = d;
    }
    expect(seen).toEqual([
      [0, true, undefined],
      [100, true, undefined],
      [200, true, undefined],
      [300, false, 700],
      [999, false, 1],
      [1000, true, undefined],
      [1099, false, 1],
      [1100, true, undefined],
      [1200, true, undefined],
      [1200, false, 800],
    ]);
    expect(entries(row!)).toEqual([{ at: 1000, count: 1 }, { at: 1100, count: 1 }, { at: 1200, count: 1 }]);
  });

  test("the approximate window (exact: false) passes more than the rate in some second; the exact one never", () => {
    // Three at the end of one aligned window, then three just after the boundary: the
    // approximation weighs the first three by what's left of the window and lets more through.
    const approximate: RateLimitConfig = { kind: SW, rate: 3, period: SECOND, exact: false, start: 0 };
    const admitted = (c: RateLimitConfig) => {
      let row: State | null = null;
      const at: number[] = [];
      for (const now of [997, 998, 999, 1001, 1500, 1600, 1700, 1800]) {
        const d = decideRateLimit(row, c, { now });
        if (d.ok) at.push(now);
        row = d;
      }
      return at;
    };
    expect(admitted(config)).toEqual([997, 998, 999]);
    const loose = admitted(approximate);
    expect(loose.filter((t) => t > 999 - SECOND && t <= 1999).length).toBeGreaterThan(3);
  });

  test("a count larger than one entry waits for as many to leave as it needs", () => {
    const c: RateLimitConfig = { kind: SW, rate: 5, period: SECOND };
    let row: State | null = null;
    for (const [now, count] of [[0, 2], [300, 2], [600, 1]] as const) row = decideRateLimit(row, c, { now, count });
    // Three tokens need the 2 from t = 0 and the 2 from t = 300 gone: at 1300.
    const refused = decideRateLimit(row, c, { now: 700, count: 3 });
    expect(refused).toMatchObject({ ok: false, retryAfter: 600 });
    expect(decideRateLimit(row, c, { now: 1299, count: 3 }).ok).toBe(false);
    expect(decideRateLimit(row, c, { now: 1300, count: 3 }).ok).toBe(true);
  });

  test("a clock that goes backwards neither gains nor loses: the take is logged at the row's instant", () => {
    let row: State | null = decideRateLimit(null, config, { now: 5000 });
    row = decideRateLimit(row, config, { now: 4000 });
    expect(entries(row)).toEqual([{ at: 5000, count: 2 }]);
    expect(row.ts).toBe(5000);
    expect(evaluate(row, paramsOf(config, 0), 4500)).toMatchObject({ value: 1, ts: 5000 });
  });

  test("a row whose window has emptied carries no log, however it emptied", () => {
    const p = paramsOf(config, 0);
    const row = decideRateLimit(decideRateLimit(null, config, { now: 0 }), config, { now: 100 });
    // The takes left the window.
    expect(evaluate(row, p, 1100)).toStrictEqual({ value: 3, ts: 1100 });
    // Every take given back.
    expect(withValue(evaluate(row, p, 200), p, 3)).toStrictEqual({ value: 3, ts: 200 });
  });

  test("count 0 peeks: it logs nothing", () => {
    const d = decideRateLimit(null, config, { now: 10, count: 0 });
    expect(d).toEqual({ ok: true, retryAfter: undefined, value: 3, ts: 10 });
  });

  test("calculateRateLimit returns the log to store, and a value that shows what's missing", () => {
    const full = calculateRateLimit(null, config, 0, 3);
    expect(full.value).toBe(0);
    const over = calculateRateLimit(full, config, 500, 2);
    expect(over).toMatchObject({ value: -2, ts: 500, retryAfter: 500, windowStart: undefined });
  });

  test("withValue gives back the oldest takes first", () => {
    const p = paramsOf(config, 0);
    let row: State | null = null;
    for (const now of [0, 100, 200]) row = decideRateLimit(row, config, { now });
    const back = withValue(evaluate(row, p, 300), p, 1);
    expect(entries(back)).toEqual([{ at: 100, count: 1 }, { at: 200, count: 1 }]);
  });

  test("a credit of a take that wasn't the latest can't let a later window pass the rate", () => {
    // Rate 2: takes at 0 and 500; at 600 the take at 0 is credited (its work failed). What stands
    // is the take at 500 alone, so (0, 1000] may hold one more, and no more.
    const c: RateLimitConfig = { kind: SW, rate: 2, period: SECOND };
    const p = paramsOf(c, 0);
    let row: State = decideRateLimit(decideRateLimit(null, c, { now: 0 }), c, { now: 500 });
    const cur = evaluate(row, p, 600);
    row = withValue(cur, p, cur.value + 1);
    const at1000 = [decideRateLimit(row, c, { now: 1000 })];
    at1000.push(decideRateLimit(at1000[0]!, c, { now: 1000 }));
    expect(at1000.map((d) => d.ok)).toEqual([true, false]);
  });

  test("bytes that aren't a log are replaced by the entries rebuilt from the value", () => {
    const p = paramsOf(config, 0);
    const bad = { value: 1, ts: 100, log: new Uint8Array([3, 1]).buffer };
    const cur = evaluate(bad, p, 200);
    expect(cur.value).toBe(1);
    expect(entries(cur)).toEqual([{ at: 100, count: 2 }]);
  });
});

describe("validation", () => {
  const bad = (config: unknown) => {
    try {
      validateConfig(config as RateLimitConfig);
    } catch (e) {
      return (e as ConvexError<{ field: string; message: string }>).data;
    }
    return undefined;
  };

  test("no cap on the rate: the log is bounded whatever the rate, so any rate per shard is accepted", () => {
    expect(MAX_EXACT_RATE).toBe(Infinity);
    expect(bad({ kind: SW, rate: 1000, period: MINUTE })).toBeUndefined();
    expect(bad({ kind: SW, rate: 100_000, period: MINUTE })).toBeUndefined();
    expect(bad({ kind: SW, rate: 2000.5, period: MINUTE, shards: 2 })).toBeUndefined();
    expect(bad({ kind: SW, rate: 1e9, period: SECOND })).toBeUndefined();
  });

  test("an exact window has no start; the approximate one does", () => {
    expect(bad({ kind: SW, rate: 5, period: MINUTE, start: 0 })?.field).toBe("config.start");
    expect(bad({ kind: SW, rate: 5, period: MINUTE, exact: true, start: 0 })?.field).toBe("config.start");
    expect(bad({ kind: SW, rate: 5, period: MINUTE, exact: false, start: 0 })).toBeUndefined();
  });

  test("exact must be a boolean", () => {
    expect(bad({ kind: SW, rate: 5, period: MINUTE, exact: "yes" })).toMatchObject({ field: "config.exact", message: 'config.exact = "yes": must be true or false' });
  });
});

describe("an exact window's config change keeps its log (whole flow, in-memory store)", () => {
  const three: RateLimitConfig = { kind: SW, rate: 3, period: MINUTE };
  /** A key that took one token at T0, T0 + 10 s and T0 + 20 s under `three`. */
  function full(): MemoryStore {
    const store = new MemoryStore();
    for (const at of [T0, T0 + 10_000, T0 + 20_000]) expect(store.limit({ name: NAME, config: three }, at, seededRandom(1)).ok).toBe(true);
    return store;
  }
  const left = (store: MemoryStore, config: RateLimitConfig, at: number) =>
    store.getValue({ name: NAME, config, sampleShards: config.shards ?? 1, details: true }, at, seededRandom(2)).total!.value;

  test("raised to 6: nothing more at once; each old take still leaves when it would have, the 3 new ones a minute after the last write", () => {
    const store = full();
    const six: RateLimitConfig = { ...three, rate: 6 };
    expect(left(store, six, T0 + 30_000)).toBe(0);
    expect(left(store, six, T0 + MINUTE - 1)).toBe(0);
    expect(left(store, six, T0 + MINUTE)).toBe(1);
    expect(left(store, six, T0 + MINUTE + 10_000)).toBe(2);
    expect(left(store, six, T0 + MINUTE + 20_000 - 1)).toBe(2);
    expect(left(store, six, T0 + MINUTE + 20_000)).toBe(6);
  });

  test("the period shortened to 30 s: each take still leaves a minute after it was taken", () => {
    const store = full();
    const half: RateLimitConfig = { ...three, period: 30_000 };
    expect(left(store, half, T0 + 30_000)).toBe(0);
    expect(left(store, half, T0 + MINUTE - 1)).toBe(0);
    expect(left(store, half, T0 + MINUTE)).toBe(1);
    expect(left(store, half, T0 + MINUTE + 20_000)).toBe(3);
  });

  test("lowered to 2: the key owes one until the first take leaves", () => {
    const store = full();
    const two: RateLimitConfig = { ...three, rate: 2 };
    expect(left(store, two, T0 + 30_000)).toBe(-1);
    expect(store.limit({ name: NAME, config: two }, T0 + 30_000, seededRandom(3))).toEqual({ ok: false, retryAfter: 40_000 });
    expect(left(store, two, T0 + MINUTE + 10_000)).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

/**
 * The most admitted in any half-open window of `period` ms, `(t - period, t]`, over `admitted`
 * ([instant, tokens] in order of time): the window ending at each admission is the worst one
 * ending near it.
 */
function worstWindow(admitted: readonly (readonly [number, number])[], period: number): number {
  let worst = 0;
  let sum = 0;
  let first = 0;
  for (let i = 0; i < admitted.length; i++) {
    sum += admitted[i]![1];
    while (admitted[first]![0] <= admitted[i]![0] - period) sum -= admitted[first++]![1];
    worst = Math.max(worst, sum);
  }
  return worst;
}

/** What the bound's histories exercised, so the property is seen not to be vacuous. */
const tally = { runs: 0, refusals: 0, atBound: 0, sharded: 0, async: 0, resharded: 0 };
recordTally("exact window", tally);

describe("the window bound, through the whole request flow", () => {
  const configArb = fc.record({
    rate: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constantFrom(2.5, 10 / 3)),
    period: fc.constantFrom(SECOND, 7, 1000 / 3, MINUTE),
    shards: fc.constantFrom(1, 1, 2, 3),
    async: fc.boolean(),
  });
  const opArb = fc.record({
    // In hundredths of a period: mostly bunched (to reach the bound), sometimes spread, sometimes back.
    gap: fc.oneof(fc.constant(0), fc.nat(3), fc.nat(30), fc.double({ min: 0, max: 2, noNaN: true }), fc.constant(-5)),
    count: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 4 }), fc.double({ min: 0.01, max: 2, noNaN: true })),
    action: fc.constantFrom("limit", "limit", "limit", "limit", "apply", "reshard"),
  });

  test.prop([configArb, fc.array(opArb, { minLength: 20, maxLength: 120, size: "max" }), fc.integer()], { ...runs(400, 3000), timeout: TIMEOUT })(
    "in any window of period ms, the limit admits at most rate tokens in all",
    ({ rate, period, shards, async }, ops, seed) => {
      const n = Math.min(shards, Math.floor(rate));
      let config: RateLimitConfig = { kind: SW, rate, period, shards: n, ...(async ? { applyUpdates: "asynchronously" as const } : {}) };
      const store = new MemoryStore();
      const random = seededRandom(seed);
      const admitted: [number, number][] = [];
      let now = T0;
      let latest = T0;
      for (const op of ops) {
        // A sharded limit's clock only moves forward: each shard logs a take at its own row's
        // clock, which never runs back, and with a clock running back the shards' clocks differ,
        // so no one instant stands for every take of the limit (a take counted at the latest
        // instant before it can be logged earlier on its shard, and leave that shard's window
        // before it would leave this count's). A clock running back is covered unsharded here,
        // transactional and asynchronous, and per shard in properties.test.ts.
        // A reshard's gap is the next call's, which runs under the new layout: monotone too (the
        // new layout may be a sharded one whose rows were written later than a clock set back).
        // Monotone from the latest instant any call saw: an unsharded clock set back, then
        // resharded, would give the new shards a clock before the rows they were carried into.
        const monotone = (config.shards ?? 1) > 1 || op.action === "reshard";
        now = monotone ? Math.max(latest, now + Math.max(0, op.gap * period * 0.01)) : now + op.gap * period * 0.01;
        latest = Math.max(latest, now);
        if (op.action === "apply") {
          store.apply(now);
          continue;
        }
        if (op.action === "reshard") {
          tally.resharded++;
          if (async) store.apply(now);
          const next: number = 1 + ((config.shards ?? 1) % Math.min(3, Math.floor(rate)));
          config = { ...config, shards: next };
          continue;
        }
        const count = Math.min(op.count, rate / (config.shards ?? 1) >= 2 ? op.count : 1);
        let r;
        try {
          r = store.limit({ name: NAME, config, count }, now, random);
        } catch {
          continue; // a count this layout can never serve
        }
        if (r.ok) admitted.push([Math.max(now, admitted.at(-1)?.[0] ?? -Infinity), count]);
        else tally.refusals++;
      }
      tally.runs++;
      if (n > 1) tally.sharded++;
      if (async) tally.async++;
      if (Math.abs(worstWindow(admitted, period) - rate) < 1e-9) tally.atBound++;
      // Admissions are counted at the later of their instant and the one before (the row's
      // clock never runs backwards, so a take at an earlier instant is logged at the row's).
      expect(worstWindow(admitted, period)).toBeLessThanOrEqual(rate + 1e-9);
    },
  );

  test("and the histories reach the bound, refuse, shard, reshard and run asynchronously (not vacuous)", () => {
    expect(tally.runs).toBeGreaterThan(0);
    expect(tally.refusals).toBeGreaterThan(tally.runs);
    // Exactly at the rate in some window: rarer than near it (fractional counts seldom add up to
    // it, and a key carried over from another kind is counted conservatively); about one run in twelve (33 ± 5 of 400 over 24 runs of the suite,
    // npm run test:tallies), which is why this property has 400 runs. At least 5 sd below.
    expect(tally.atBound).toBeGreaterThan(tally.runs / 80);
    expect(tally.sharded).toBeGreaterThan(tally.runs / 10);
    expect(tally.async).toBeGreaterThan(tally.runs / 10);
    expect(tally.resharded).toBeGreaterThan(0);
  });
});

describe("retryAfter is the least whole ms that works", () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 20 }),
      fc.constantFrom(SECOND, 7, 1000 / 3),
      fc.array(fc.record({ gap: fc.double({ min: 0, max: 0.5, noNaN: true }), count: fc.integer({ min: 1, max: 3 }) }), { maxLength: 60 }),
    ],
    runs(300, 5000),
  )("a retry at now + retryAfter succeeds and one ms earlier is refused", (rate, period, ops) => {
    const config: RateLimitConfig = { kind: SW, rate, period };
    let row: State | null = null;
    let now = T0;
    for (const { gap, count } of ops) {
      now += gap * period;
      const c = Math.min(count, rate);
      const d = decideRateLimit(row, config, { now, count: c });
      if (d.ok) {
        row = d;
        continue;
      }
      expect(Number.isInteger(d.retryAfter) && d.retryAfter >= 1).toBe(true);
      expect(decideRateLimit(row, config, { now: now + d.retryAfter, count: c }).ok).toBe(true);
      if (d.retryAfter > 1) expect(decideRateLimit(row, config, { now: now + d.retryAfter - 1, count: c }).ok).toBe(false);
    }
  });
});
