// The exact window's bounded log (issue 39): merging past MAX_LOG_ENTRIES and carrying logs across a change of shard count, as tables at explicit instants; the window bound at rates up to 100,000 with fractional counts, shards, reshards, config changes and asynchronous mode; and exact retries on merged logs.
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { MINUTE, SECOND, evaluate, paramsOf, type State } from "../src/shared/kinds/algebra.js";
import { relayout, shardParams } from "../src/shared/shards/layout.js";
import { decideRateLimit } from "../src/shared/kinds/predict.js";
import type { StoredRow } from "../src/shared/shapes/stored.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import {
  MAX_LOG_BYTES,
  MAX_LOG_ENTRIES,
  MIN_LOG_ENTRIES,
  appendedLog,
  bounded,
  decodeLog,
  encodeLog,
  live,
  logTotal,
  mergeLogs,
  scanLog,
  splitLog,
  takenLog,
  trimmedLog,
  withTaken,
  type Entry,
} from "../src/shared/kinds/window-log.js";
import { MemoryStore } from "../tools/memory-store.js";
import { seededRandom } from "../tools/random.js";
import { recordTally, runs, TIMEOUT } from "../tools/fast-check.js";

const SW = "sliding window" as const;
const T0 = 1_700_000_000_000;
const NAME = "limit";

/** Entries from [instant, count] pairs. */
const log = (...pairs: [number, number][]): Entry[] => pairs.map(([at, count]) => ({ at, count }));

describe("bounded: merging past the most entries a log keeps", () => {
  test.each<[string, Entry[], number, Entry[]]>([
    ["within the bound: unchanged", log([0, 1], [10, 1]), 2, log([0, 1], [10, 1])],
    // Costs (tokens × ms): 1 × 10, 1 × 1, 5 × 9: the second merges into the third.
    ["the cheapest in tokens × ms merges into the next", log([0, 1], [10, 1], [11, 5], [20, 1]), 3, log([0, 1], [11, 6], [20, 1])],
    // Closest in time is 10 → 11 (1 ms), but that entry holds 50 tokens: 50 ms × token against 10.
    ["a big entry close to the next costs more than a small one further away", log([0, 1], [10, 50], [11, 1]), 2, log([10, 51], [11, 1])],
    // Costs 1 × 10 and 1 × 10: a tie merges the oldest pair.
    ["a tie merges the oldest pair", log([0, 1], [10, 1], [20, 1]), 2, log([10, 2], [20, 1])],
    ["down to one entry: everything at the latest instant", log([0, 1], [10, 2], [20, 3]), 1, log([20, 6])],
    ["fractional counts merge alike", log([0, 0.25], [5, 0.5], [100, 0.25]), 2, log([5, 0.75], [100, 0.25])],
  ])("%s", (_, entries, max, expected) => {
    const out = bounded(entries.slice(), max);
    expect(out).toEqual(expected);
    expect(logTotal(out)).toBe(logTotal(entries));
  });

  test("withTaken keeps MAX_LOG_ENTRIES (32): the 33rd take merges the cheapest pair", () => {
    // Takes of 1 every 100 ms, except one at 599, 1 ms before the next: that pair is the cheapest.
    const full = Array.from({ length: MAX_LOG_ENTRIES }, (_, i) => ({ at: i * 100 + (i === 5 ? 99 : 0), count: 1 }));
    expect(MAX_LOG_ENTRIES).toBe(32);
    const after = withTaken(full, 5000, 1);
    expect(after.length).toBe(32);
    expect(after.slice(3, 6)).toEqual(log([300, 1], [400, 1], [600, 2]));
    expect(after.at(-1)).toEqual({ at: 5000, count: 1 });
  });

  test.each<[string, number, number, number]>([
    // [what, count of each take, entries kept, bytes]: 40 takes 1 s apart, from instant 0.
    // Whole counts under 128, a second apart: 3 bytes an entry (2 for 2 × 1000, 1 for the count),
    // the first too (the merged first entry's instant, from 0, takes 2): 32 entries, 96 bytes.
    ["small whole counts: the entries' bound", 1, 32, 96],
    // Counts of 200 take two bytes: 4 bytes an entry, so the bytes bind first.
    ["big whole counts: the bytes' bound", 200, 28, 112],
    // Fractional counts (π/10: no sum of them is whole) take 17 bytes an entry: merged down to
    // MIN_LOG_ENTRIES, and no further.
    ["fractional counts: never fewer than MIN_LOG_ENTRIES", Math.PI / 10, 8, 136],
  ])("withTaken keeps at most MAX_LOG_BYTES (112) while over MIN_LOG_ENTRIES (8): %s", (_, count, kept, bytes) => {
    expect([MAX_LOG_BYTES, MIN_LOG_ENTRIES]).toEqual([112, 8]);
    let entries: readonly Entry[] = [];
    for (let i = 0; i < 40; i++) entries = withTaken(entries, i * 1000, count);
    expect(entries.length).toBe(kept);
    expect(encodeLog(entries).byteLength).toBe(bytes);
    // Whole counts add up exactly; π/10s to within float rounding of the sum.
    if (Number.isInteger(count)) expect(logTotal(entries)).toBe(40 * count);
    else expect(logTotal(entries)).toBeCloseTo(40 * count, 12);
  });

  test("a log an earlier version wrote with more entries is read whole, and merged down on the next take", () => {
    const old = Array.from({ length: 100 }, (_, i) => ({ at: T0 + i * 10, count: 1 }));
    const config: RateLimitConfig = { kind: SW, rate: 1000, period: MINUTE };
    const row: State = { value: 900, ts: T0 + 990, log: encodeLog(old) };
    expect(evaluate(row, paramsOf(config, 0), T0 + 1000)).toMatchObject({ value: 900 });
    const d = decideRateLimit(row, config, { now: T0 + 1000 });
    expect(d.ok).toBe(true);
    const entries = decodeLog(d.log!)!;
    expect(entries.length).toBe(MAX_LOG_ENTRIES);
    expect(logTotal(entries)).toBe(101);
    // Every token comes back no earlier than it would have, and the oldest still at T0 + 1 min.
    expect(entries[0]!.at).toBeGreaterThanOrEqual(T0);
  });

  test("merged, a take is refused until the later instant it was merged into, to the ms", () => {
    // Rate 3 per second, at most 2 entries (the bound as a parameter): takes at 0, 10 and 500.
    const c: RateLimitConfig = { kind: SW, rate: 3, period: SECOND };
    const p = paramsOf(c, 0);
    let entries: readonly Entry[] = [];
    for (const at of [0, 10, 500]) entries = withTaken(entries, at, 1, 2);
    // 0 → 10 costs 1 × 10, 10 → 500 costs 1 × 490: the take at 0 is counted at 10.
    expect(entries).toEqual(log([10, 2], [500, 1]));
    const row: State = { value: 0, ts: 500, log: encodeLog(entries) };
    expect(evaluate(row, p, 1009).value).toBe(0);
    expect(evaluate(row, p, 1010).value).toBe(2);
    expect(decideRateLimit(row, c, { now: 600 })).toMatchObject({ ok: false, retryAfter: 410 });
  });
});

/** How often the byte paths wrote, and declined, in the property below. */
const written = { wrote: 0, declined: 0 };

describe("a call's work on the bytes agrees with the entries'", () => {
  // Logs of whole or fractional counts at whole or fractional instants, some more than a log
  // keeps (an earlier version's), cut at some instant, then a take at or after the last entry.
  const entryArb = fc.record({
    gap: fc.oneof({ arbitrary: fc.nat(3), weight: 2 }, { arbitrary: fc.nat(5000), weight: 2 }, { arbitrary: fc.double({ min: 0, max: 50, noNaN: true }), weight: 1 }),
    count: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 300 }), weight: 9 }, { arbitrary: fc.double({ min: 0.01, max: 5, noNaN: true }), weight: 1 }),
  });
  const takeArb = fc.oneof({ arbitrary: fc.integer({ min: 1, max: 300 }), weight: 4 }, { arbitrary: fc.constant(0.5), weight: 1 });
  test.prop([fc.array(entryArb, { maxLength: 45 }), fc.nat(60_000), fc.oneof(fc.constant(0), fc.nat(3000)), takeArb], runs(300, 5000))(
    "scanLog, trimmedLog, appendedLog and takenLog write what live and withTaken do",
    (list, cut, after, count) => {
      let at = T0;
      const entries = list.map((e) => ({ at: (at += e.gap), count: e.count }));
      const bytes = encodeLog(entries.slice());
      const t = T0 + cut;
      const kept = live(entries, t, MINUTE);
      const scan = scanLog(bytes, t - MINUTE)!;
      expect([scan.entries, scan.live, scan.total]).toEqual([entries.length, kept.length, logTotal(kept)]);
      if (kept.length === 0) return;
      const trimmed = trimmedLog(bytes, scan);
      expect(decodeLog(trimmed.slice(0))).toEqual(kept);
      expect(trimmed).toEqual(encodeLog(kept.slice()));
      // A take at the last entry's instant, or later.
      const when = Math.max(t, kept.at(-1)!.at + after);
      const expected = encodeLog(withTaken(kept, when, count).slice());
      const appended = appendedLog(trimmed, scanLog(trimmed, -Infinity)!, when, count);
      const taken = takenLog(bytes, scan, when, count);
      // Each writes exactly what withTaken leaves, or declines (the entries' path then runs).
      if (appended !== undefined) expect(appended).toEqual(expected);
      expect(taken === undefined).toBe(appended === undefined);
      if (taken !== undefined) expect(taken).toEqual(expected);
      written[taken === undefined ? "declined" : "wrote"]++;
    },
  );

  test.prop([fc.uint8Array({ maxLength: 40 }), fc.integer()], runs(500, 10000))("scanLog refuses exactly the bytes decodeLog refuses, and agrees on the rest", (raw, after) => {
    const buffer = raw.slice().buffer;
    const entries = decodeLog(buffer.slice(0));
    const scan = scanLog(buffer, after);
    expect(scan === undefined).toBe(entries === undefined);
    if (entries === undefined || scan === undefined) return;
    const kept = entries.filter((e) => e.at > after);
    expect([scan.entries, scan.live, scan.total]).toEqual([entries.length, kept.length, logTotal(kept)]);
  });

  test("and both ways happen (not vacuous)", () => {
    expect(written.wrote).toBeGreaterThan(20);
    expect(written.declined).toBeGreaterThan(20);
  });
});

describe("mergeLogs and splitLog: a key's logs across a change of shard count", () => {
  test("mergeLogs puts shards' logs in order of time, adding entries at one instant", () => {
    expect(mergeLogs([log([0, 1], [20, 2]), log([10, 1], [20, 1])])).toEqual(log([0, 1], [10, 1], [20, 3]));
    expect(mergeLogs([])).toEqual([]);
  });

  test.each<[string, Entry[], number[], Entry[][]]>([
    ["one shard: the log itself", log([0, 3], [10, 1]), [10], [log([0, 3], [10, 1])]],
    // Running totals 4 and 6 over shares 5 and 5: 2 + 2, then 1 + 1.
    ["even shares: each entry halved", log([0, 4], [10, 2]), [5, 5], [log([0, 2], [10, 1]), log([0, 2], [10, 1])]],
    // An odd token goes to the shard furthest behind its share, the first on a tie; the next odd
    // one to the other, so running totals stay within a token of their shares.
    ["odd tokens alternate", log([0, 1], [10, 1], [20, 1], [30, 1]), [5, 5], [log([0, 1], [20, 1]), log([10, 1], [30, 1])]],
    // Shares 4, 3, 3 of 10: running total 10 → 4, 3, 3.
    ["uneven shares, whole tokens", log([0, 10]), [4, 3, 3], [log([0, 4]), log([0, 3]), log([0, 3])]],
    ["a fractional count splits in proportion", log([0, 0.5]), [2, 2], [log([0, 0.25]), log([0, 0.25])]],
    // Shares 1.5 and 1.5 of 3 whole tokens: 2 and 1, the first over its capacity by half a token,
    // which goes to the second.
    ["no shard over its capacity while another has room", log([0, 3]), [1.5, 1.5], [log([0, 1.5]), log([0, 1.5])]],
  ])("splitLog: %s", (_, entries, shares, expected) => {
    const out = splitLog(entries, shares);
    expect(out).toEqual(expected);
    expect(logTotal(out.flat())).toBe(logTotal(entries));
  });

  test("splitLog bounds each shard's log", () => {
    const many = Array.from({ length: 200 }, (_, i) => ({ at: i, count: 1 }));
    const out = splitLog(many, [100, 100]);
    for (const l of out) expect(l.length).toBeLessThanOrEqual(MAX_LOG_ENTRIES);
    expect(logTotal(out.flat())).toBe(200);
  });
});

describe("a change of shard count carries each take at its instant (relayout, explicit instants)", () => {
  const rate = 10;
  const config = (shards: number): RateLimitConfig => ({ kind: SW, rate, period: MINUTE, shards });
  /** A stored row of shard `shard` of `shards`, with its log. */
  const row = (shard: number, shards: number, ts: number, entries: Entry[]): StoredRow => ({
    shard,
    shards,
    kind: "exact sliding window",
    rate: shardParams(config(shards), 0, shard).rate,
    period: MINUTE,
    capacity: shardParams(config(shards), 0, shard).capacity,
    value: shardParams(config(shards), 0, shard).capacity - logTotal(entries),
    ts,
    ...(entries.length > 0 ? { log: encodeLog(entries) } : {}),
  });
  /** The whole limit's tokens at `t` over the states of `shards` shards. */
  const total = (states: State[], shards: number, t: number) =>
    states.reduce((sum, s, i) => sum + evaluate(s, shardParams(config(shards), 0, i), t).value, 0);
  /** What the old rule gave: every token used taken at the stamp (a full window from the last write). */
  const oldRule = (used: number, stamp: number, t: number) => (t >= stamp + MINUTE ? rate : rate - used);

  // One shard that took 3 at T0, 2 at T0 + 20 s and 4 at T0 + 40 s, carried to 2 shards at T0 + 50 s.
  const one = [row(0, 1, T0 + 40_000, log([T0, 3], [T0 + 20_000, 2], [T0 + 40_000, 4]))];

  test("1 → 2 shards: the shards share the takes, each at its own instant", () => {
    const states = relayout(one, config(2), 0, T0 + 50_000);
    const logs = states.map((s) => decodeLog(s.log!)!);
    expect(logs).toEqual([log([T0, 2], [T0 + 20_000, 1], [T0 + 40_000, 2]), log([T0, 1], [T0 + 20_000, 1], [T0 + 40_000, 2])]);
    expect(states.map((s) => [s.value, s.ts])).toEqual([[0, T0 + 40_000], [1, T0 + 40_000]]);
  });

  test.each<[string, number, number, number]>([
    // [when, instant after T0, tokens now, tokens under the old rule]
    ["at the change", 50_000, 1, 1],
    ["the first takes leave a minute after they were taken", 60_000, 4, 1],
    ["one ms before the second leave", 79_999, 4, 1],
    ["the second", 80_000, 6, 1],
    ["the old rule gave them all back only at the stamp plus a minute", 100_000, 10, 10],
  ])("tokens back no later than the old rule, sooner where they can: %s", (_, dt, now, old) => {
    const states = relayout(one, config(2), 0, T0 + 50_000);
    expect(total(states, 2, T0 + dt)).toBe(now);
    expect(oldRule(9, T0 + 40_000, T0 + dt)).toBe(old);
    expect(now).toBeGreaterThanOrEqual(old);
  });

  test("3 → 2 shards: the shards' logs put together, then shared out; the stamp is the latest write", () => {
    const three = [
      row(0, 3, T0 + 10_000, log([T0, 2], [T0 + 10_000, 1])),
      row(1, 3, T0 + 30_000, log([T0 + 30_000, 3])),
      row(2, 3, T0 + 5_000, log()),
    ];
    const states = relayout(three, config(2), 0, T0 + 45_000);
    expect(states.map((s) => decodeLog(s.log!))).toEqual([
      log([T0, 1], [T0 + 10_000, 1], [T0 + 30_000, 1]),
      log([T0, 1], [T0 + 30_000, 2]),
    ]);
    expect(states.map((s) => s.ts)).toEqual([T0 + 30_000, T0 + 30_000]);
    expect(total(states, 2, T0 + 60_000)).toBe(6);
    expect(total(states, 2, T0 + 70_000)).toBe(7);
    expect(total(states, 2, T0 + 90_000)).toBe(10);
  });

  test("a raised capacity's extra tokens are taken at the stamp: no more at once than before", () => {
    const raised = { ...config(2), rate: 12 };
    const states = relayout(one, raised, 0, T0 + 50_000);
    const sum = (t: number) => states.reduce((s, st, i) => s + evaluate(st, shardParams(raised, 0, i), t).value, 0);
    expect(sum(T0 + 40_000)).toBe(1);
    expect(sum(T0 + 60_000)).toBe(4);
    expect(sum(T0 + 100_000)).toBe(12);
  });

  test("through the whole flow: a key resharded mid-window takes back tokens as they leave", () => {
    const store = new MemoryStore();
    const random = seededRandom(7);
    for (const at of [T0, T0 + 1, T0 + 2, T0 + 30_000]) expect(store.limit({ name: NAME, config: config(1), count: 2 }, at, random).ok).toBe(true);
    // 8 of 10 used; resharded to 2 shards of 5 at T0 + 40 s.
    const left = (t: number) => store.getValue({ name: NAME, config: config(2), details: true }, t, random);
    expect(left(T0 + 40_000).total?.value).toBe(2);
    // The first three takes (6 tokens) leave at T0 + 1 min and the 2 ms after: under the old rule
    // nothing came back before T0 + 90 s.
    expect(left(T0 + MINUTE + 2).total?.value).toBe(8);
    expect(left(T0 + 90_000).total?.value).toBe(10);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

/** The most admitted in any window `(t − period, t]` over `admitted` ([instant, tokens], in order). */
function windows(admitted: readonly (readonly [number, number, number])[], period: number): { worst: number; over: number } {
  let sum = 0;
  let first = 0;
  let worst = 0;
  let over = -Infinity;
  for (let i = 0; i < admitted.length; i++) {
    sum += admitted[i]![1];
    while (admitted[first]![0] <= admitted[i]![0] - period) sum -= admitted[first++]![1];
    // The bound for this window: the largest rate in force in it (a change applies from then on).
    let bound = 0;
    for (let j = first; j <= i; j++) bound = Math.max(bound, admitted[j]![2]);
    worst = Math.max(worst, sum / bound);
    over = Math.max(over, sum - bound);
  }
  return { worst, over };
}

const tally = { runs: 0, merged: 0, nearBound: 0, sharded: 0, resharded: 0, changed: 0, async: 0, highRate: 0 };
recordTally("exact window, bounded", tally);

describe("the window bound with a bounded log", () => {
  const configArb = fc.record({
    rate: fc.constantFrom(40, 100, 1000, 2500.5, 100_000),
    period: fc.constantFrom(SECOND, 1000 / 3, MINUTE),
    shards: fc.constantFrom(1, 1, 1, 2, 3, 10),
    async: fc.boolean(),
  });
  const opArb = fc.record({
    // In thousandths of a period: mostly bunched (a window holds more takes than a log keeps), sometimes far.
    gap: fc.oneof({ arbitrary: fc.nat(3), weight: 4 }, { arbitrary: fc.nat(20), weight: 2 }, { arbitrary: fc.double({ min: 0, max: 300, noNaN: true }), weight: 1 }),
    // As a share of the rate per shard: mostly small takes (some 50 fill a shard's window, past
    // what its log keeps), some big ones.
    share: fc.oneof(
      { arbitrary: fc.constant(0.02), weight: 3 },
      { arbitrary: fc.double({ min: 0.005, max: 0.04, noNaN: true }), weight: 3 },
      { arbitrary: fc.double({ min: 0.04, max: 0.5, noNaN: true }), weight: 1 },
    ),
    whole: fc.boolean(),
    action: fc.oneof({ arbitrary: fc.constant("limit"), weight: 12 }, { arbitrary: fc.constantFrom("apply", "reshard", "change"), weight: 1 }),
  });

  test.prop([configArb, fc.array(opArb, { minLength: 40, maxLength: 150, size: "max" }), fc.integer()], { ...runs(150, 1500), timeout: TIMEOUT })(
    "in any window of period ms, never more than the rate in force (rates up to 100,000; fractional counts; shards, reshards, changes, async)",
    ({ rate, period, shards, async }, ops, seed) => {
      let config: RateLimitConfig = { kind: SW, rate, period, shards, ...(async ? { applyUpdates: "asynchronously" as const } : {}) };
      const store = new MemoryStore();
      const random = seededRandom(seed);
      const admitted: [number, number, number][] = [];
      let now = T0;
      let merged = false;
      for (const op of ops) {
        now += op.gap * period * 0.001;
        if (op.action === "apply") {
          store.apply(now);
          continue;
        }
        if (op.action === "reshard" || op.action === "change") {
          if (async) store.apply(now);
          if (op.action === "reshard") {
            tally.resharded++;
            config = { ...config, shards: [1, 2, 3, 10][(([1, 2, 3, 10].indexOf(config.shards ?? 1) + 1) % 4)]! };
          } else {
            tally.changed++;
            // Half or double the rate, within what its shards can serve.
            const next: number = op.whole ? config.rate * 2 : config.rate / 2;
            if (next >= 10 * (config.shards ?? 1) && next <= 200_000) config = { ...config, rate: next };
          }
          continue;
        }
        const perShard = config.rate / (config.shards ?? 1);
        const raw = op.share * perShard;
        const count = op.whole ? Math.max(1, Math.floor(raw)) : raw;
        let r;
        try {
          r = store.limit({ name: NAME, config, count }, now, random);
        } catch {
          continue;
        }
        if (r.ok) admitted.push([now, count, config.rate]);
        const rows = store.read({ name: NAME }).rows;
        // At a bound: as many entries as a log keeps, or within an entry of its bytes.
        const atBound = (log: ArrayBuffer) => decodeLog(log)!.length === MAX_LOG_ENTRIES || log.byteLength > MAX_LOG_BYTES - 17;
        if (rows.some((row) => row.log !== undefined && atBound(row.log))) merged = true;
      }
      tally.runs++;
      if (merged) tally.merged++;
      if ((config.shards ?? 1) > 1 || shards > 1) tally.sharded++;
      if (async) tally.async++;
      if (rate >= 100_000) tally.highRate++;
      const { worst, over } = windows(admitted, period);
      // Within 2 % of the rate in some window (fractional counts seldom add up to it exactly).
      if (worst >= 0.98) tally.nearBound++;
      // Float noise of a fractional count's arithmetic, relative to the rate.
      expect(over).toBeLessThanOrEqual(1e-9 * rate);
    },
  );

  test("and the histories merge logs, come near the bound, shard, reshard, change and run asynchronously (not vacuous)", () => {
    expect(tally.runs).toBeGreaterThan(0);
    expect(tally.merged).toBeGreaterThan(tally.runs / 10);
    expect(tally.nearBound).toBeGreaterThan(tally.runs / 20);
    expect(tally.sharded).toBeGreaterThan(tally.runs / 10);
    expect(tally.async).toBeGreaterThan(tally.runs / 10);
    expect(tally.highRate).toBeGreaterThan(tally.runs / 20);
    expect(tally.resharded).toBeGreaterThan(0);
    expect(tally.changed).toBeGreaterThan(0);
  });
});

describe("retryAfter on a merged log is the least whole ms that works (unsharded)", () => {
  test.prop(
    [
      fc.constantFrom(50, 100, 1000, 100_000),
      fc.constantFrom(SECOND, 7, 1000 / 3, MINUTE),
      fc.array(fc.record({ gap: fc.double({ min: 0, max: 0.05, noNaN: true }), share: fc.double({ min: 0.001, max: 0.1, noNaN: true }) }), { minLength: 40, maxLength: 120 }),
    ],
    runs(200, 3000),
  )("a retry at now + retryAfter succeeds and one ms earlier is refused", (rate, period, ops) => {
    const config: RateLimitConfig = { kind: SW, rate, period };
    let row: State | null = null;
    let now = T0;
    for (const op of ops) {
      now += op.gap * period;
      const count = Math.max(1, Math.floor(op.share * rate));
      const d = decideRateLimit(row, config, { now, count });
      if (d.ok) {
        row = d;
        continue;
      }
      // Refusals write nothing: the retry sees the same row.
      expect(decideRateLimit(row, config, { now: now + d.retryAfter!, count }).ok).toBe(true);
      if (d.retryAfter! > 1) expect(decideRateLimit(row, config, { now: now + d.retryAfter! - 1, count }).ok).toBe(false);
    }
  });
});
