// The exact window's log as entries (src/shared/kinds/window-log.ts), function by function: tables of exact instants at each documented boundary, and properties against naive references written here.
import { fc, test } from "@fast-check/vitest";
import { afterEach, beforeEach, describe, expect, vi } from "vitest";
import {
  EMPTY_LOG,
  MAX_LOG_BYTES,
  MAX_LOG_ENTRIES,
  MIN_LOG_ENTRIES,
  bounded,
  carriedLog,
  decodeLog,
  encodeLog,
  freedAt,
  live,
  logTotal,
  mergeLogs,
  splitLog,
  windowLog,
  withGivenBack,
  withTaken,
  withWithdrawn,
  type Entry,
} from "../src/shared/kinds/window-log.js";
import { runs, TIMEOUT } from "../tools/fast-check.js";
import { decideRow, paramsOf } from "../src/shared/kinds/algebra.js";
import { withValue } from "../src/shared/kinds/state.js";

type Bytes = typeof import("../src/shared/kinds/window-log-bytes.js");
const calls = vi.hoisted(() => ({ entryLength: 0 }));

// The real byte functions, entryLength counted: measuring a log's bytes is work `bounded` skips
// when there is no byte bound.
vi.mock("../src/shared/kinds/window-log-bytes.js", async (importOriginal) => {
  const real = await importOriginal<Bytes>();
  return { ...real, entryLength: (...a: Parameters<Bytes["entryLength"]>) => (calls.entryLength++, real.entryLength(...a)) };
});

/** Fresh, unfrozen entries (encodeLog freezes what it is given). */
const log = (...pairs: [number, number][]): Entry[] => pairs.map(([at, count]) => ({ at, count }));

/** A log as the tables write it: [at, count] pairs. */
const pairs = (entries: readonly Entry[] | undefined) => entries?.map((e) => [e.at, e.count]);

/** The bytes of a float64, little-endian. */
function f64(x: number): number[] {
  const b = new ArrayBuffer(8);
  new DataView(b).setFloat64(0, x, true);
  return [...new Uint8Array(b)];
}

/** `n` (whole, ≥ 0) as a base-128 varint, written plainly. */
function varint(n: number): number[] {
  const out: number[] = [];
  do {
    const low = n % 128;
    n = (n - low) / 128;
    out.push(n > 0 ? low + 128 : low);
  } while (n > 0);
  return out;
}

/** A fresh buffer holding `bytes`: never one decodeLog has seen. */
const buf = (bytes: number[]): ArrayBuffer => new Uint8Array(bytes).buffer;

/** The bytes encodeLog writes for `entries` (given a copy: it freezes what it is given). */
const encoded = (entries: readonly Entry[]): number[] => [...new Uint8Array(encodeLog(entries.map((e) => ({ ...e }))))];

/** decodeLog of a copy of the bytes, so nothing is served from its cache. */
const decodedCopy = (entries: readonly Entry[]) => decodeLog(buf(encoded(entries)));

describe("encodeLog: the bytes", () => {
  test.each([
    ["the empty log", [], []],
    ["one compact entry", [[5, 3]], [10, 3]],
    ["at 0, d = 0", [[0, 1]], [0, 1]],
    ["a two-byte header (2d = 128) and count", [[64, 200]], [128, 1, 200, 1]],
    ["a header of 400", [[200, 1]], [144, 3, 1]],
    ["the second entry is written from the first", [[5, 3], [7, 1], [7, 2]], [10, 3, 4, 1, 0, 2]],
    ["a fractional instant: 17 bytes", [[1.5, 2]], [1, ...f64(1.5), ...f64(2)]],
    ["a fractional count", [[3, 0.25]], [1, ...f64(3), ...f64(0.25)]],
    ["a negative first instant", [[-5, 1]], [1, ...f64(-5), ...f64(1)]],
    ["after a full entry, the next is written from its instant", [[1.5, 1], [3.5, 2], [5.5, 1]], [1, ...f64(1.5), ...f64(1), 4, 2, 4, 1]],
    ["a full entry between compact ones", [[2, 1], [2.5, 1], [4.5, 3]], [4, 1, 1, ...f64(2.5), ...f64(1), 4, 3]],
    ["a count past 2^53", [[1, 2 ** 60]], [1, ...f64(1), ...f64(2 ** 60)]],
  ] as [string, [number, number][], number[]][])("%s", (_name, entries, bytes) => {
    const buffer = encodeLog(log(...entries));
    expect(buffer.byteLength).toBe(bytes.length);
    expect([...new Uint8Array(buffer)]).toStrictEqual(bytes);
    // Decoded afresh, the bytes give the entries back.
    expect(pairs(decodeLog(buf(bytes)))).toStrictEqual(entries);
  });

  test("encodeLog freezes the entries it is given, and decodeLog of its buffer returns them", () => {
    const entries = log([1, 2], [3, 4]);
    const buffer = encodeLog(entries);
    expect(Object.isFrozen(entries)).toBe(true);
    expect(entries.every((e) => Object.isFrozen(e))).toBe(true);
    expect(decodeLog(buffer)).toBe(entries);
  });

  describe("an array already frozen is not frozen again", () => {
    afterEach(() => vi.restoreAllMocks());
    test("encodeLog of a frozen log calls no Object.freeze", () => {
      const entries = Object.freeze(log([1, 2], [3, 4]).map((e) => Object.freeze(e)));
      const freeze = vi.spyOn(Object, "freeze");
      const buffer = encodeLog(entries);
      expect(freeze).not.toHaveBeenCalled();
      expect(decodeLog(buffer)).toBe(entries);
    });
  });
});

describe("decodeLog", () => {
  test.each([
    ["the empty buffer", [], []],
    ["a header cut short", [128], undefined],
    ["a count missing", [10], undefined],
    ["a count cut short", [10, 128], undefined],
    ["an odd header other than 1", [3, 1], undefined],
    ["a full entry cut short", [1, ...f64(1), 0, 0], undefined],
    ["a full entry one byte short", [1, ...f64(1), ...f64(1).slice(0, 7)], undefined],
    ["a full entry exactly", [1, ...f64(7), ...f64(3)], [[7, 3]]],
    ["a count of 0", [2, 0], undefined],
    ["a full entry's count of 0", [1, ...f64(7), ...f64(0)], undefined],
    ["a negative count", [1, ...f64(7), ...f64(-1)], undefined],
    ["a NaN count", [1, ...f64(7), ...f64(NaN)], undefined],
    ["an infinite count", [1, ...f64(7), ...f64(Infinity)], undefined],
    ["an infinite instant", [1, ...f64(Infinity), ...f64(1)], undefined],
    ["a NaN instant", [1, ...f64(NaN), ...f64(1)], undefined],
    ["entries out of order", [1, ...f64(5), ...f64(1), 1, ...f64(3), ...f64(1)], undefined],
    ["two entries at one instant", [1, ...f64(5), ...f64(1), 0, 1], [[5, 1], [5, 1]]],
    ["a negative first instant", [1, ...f64(-5), ...f64(2)], [[-5, 2]]],
    ["a header of 128 (a continuation byte, then 1)", [128, 1, 1], [[64, 1]]],
    ["a last byte of 128 continues", [2, 128, 1], [[1, 128]]],
    ["a varint of 8 bytes (the longest read)", [128, 128, 128, 128, 128, 128, 128, 2, 1], [[2 ** 49, 1]]],
    ["a varint of 9 bytes", [128, 128, 128, 128, 128, 128, 128, 128, 0, 1], undefined],
    ["a count of 8 bytes", [2, 128, 128, 128, 128, 128, 128, 128, 1], [[1, 2 ** 49]]],
    ["a count of 9 bytes", [2, 128, 128, 128, 128, 128, 128, 128, 128, 0], undefined],
    ["trailing junk", [10, 3, 5], undefined],
  ] as [string, number[], [number, number][] | undefined][])("%s", (_name, bytes, entries) => {
    expect(pairs(decodeLog(buf(bytes)))).toStrictEqual(entries);
  });

  test("its answer is frozen, each entry too", () => {
    const entries = decodeLog(buf([10, 3, 4, 1]))!;
    expect(pairs(entries)).toStrictEqual([
      [5, 3],
      [7, 1],
    ]);
    expect(Object.isFrozen(entries)).toBe(true);
    expect(entries.every((e) => Object.isFrozen(e))).toBe(true);
  });

  test("the same buffer twice: the same array; other buffers: their own entries", () => {
    const a = buf([10, 3]);
    const b = buf([10, 3]);
    const c = buf([12, 1]);
    const first = decodeLog(a)!;
    expect(decodeLog(a)).toBe(first);
    const second = decodeLog(b)!;
    expect(second).not.toBe(first);
    expect(second).toStrictEqual(first);
    expect(pairs(decodeLog(c))).toStrictEqual([[6, 1]]);
    expect(decodeLog(c)).toBe(decodeLog(c));
    // Bad bytes are not remembered as a log.
    const bad = buf([3]);
    expect(decodeLog(bad)).toBeUndefined();
    expect(decodeLog(bad)).toBeUndefined();
  });
});

describe("logTotal", () => {
  test.each([
    [[], 0],
    [[[1, 2]], 2],
    [[[1, 2], [3, 4], [3, 0.5]], 6.5],
  ] as [[number, number][], number][])("%j", (entries, total) => {
    expect(logTotal(log(...entries))).toBe(total);
  });
});

describe("live: entries taken after t - period", () => {
  const entries = Object.freeze(log([100, 1], [200, 2], [300, 3]));
  test.each([
    [1099, [[100, 1], [200, 2], [300, 3]]],
    [1100, [[200, 2], [300, 3]]],
    [1199, [[200, 2], [300, 3]]],
    [1200, [[300, 3]]],
    [1300, []],
    [5000, []],
    [0, [[100, 1], [200, 2], [300, 3]]],
  ] as [number, [number, number][]][])("at t = %d (period 1000)", (t, expected) => {
    expect(pairs(live(entries, t, 1000))).toStrictEqual(expected);
  });
  test("nothing left: the same array", () => {
    expect(live(entries, 1099, 1000)).toBe(entries);
    expect(live(EMPTY_LOG, 0, 1000)).toBe(EMPTY_LOG);
  });
});

describe("withTaken", () => {
  const base = Object.freeze(log([1, 1], [5, 2], [10, 2]));
  test.each([
    ["after the last", 12, 3, [[1, 1], [5, 2], [10, 2], [12, 3]]],
    ["at the last", 10, 3, [[1, 1], [5, 2], [10, 5]]],
    ["at a middle entry, ahead of a later one", 5, 1, [[1, 1], [5, 3], [10, 2]]],
    ["between entries", 7, 4, [[1, 1], [5, 2], [7, 4], [10, 2]]],
    ["before all", 0, 1, [[0, 1], [1, 1], [5, 2], [10, 2]]],
    ["at the first", 1, 0.5, [[1, 1.5], [5, 2], [10, 2]]],
  ] as [string, number, number, [number, number][]][])("%s", (_name, at, count, expected) => {
    expect(pairs(withTaken(base, at, count))).toStrictEqual(expected);
  });
  test("into the empty log", () => {
    expect(pairs(withTaken(EMPTY_LOG, 7, 2))).toStrictEqual([[7, 2]]);
  });
  test("bounded to max entries", () => {
    // Costs before the merge: 1 × 4, 2 × 5, 2 × 2 (a tie: the oldest pair merges).
    expect(pairs(withTaken(base, 12, 3, 3))).toStrictEqual([
      [5, 3],
      [10, 2],
      [12, 3],
    ]);
  });
  test("bounded to maxBytes", () => {
    // 2 + 2 + 2 + 2 bytes = 8; 9 entries to pass MIN_LOG_ENTRIES.
    const nine = Object.freeze(log(...Array.from({ length: 8 }, (_, k): [number, number] => [k + 1, 1])));
    expect(encodeLog(log(...Array.from({ length: 8 }, (_, k): [number, number] => [k + 1, 1]))).byteLength).toBe(16);
    expect(withTaken(nine, 9, 1, 32, 18)).toHaveLength(9);
    expect(pairs(withTaken(nine, 9, 1, 32, 17))).toStrictEqual([[2, 2], ...Array.from({ length: 7 }, (_, k) => [k + 3, 1])]);
  });
  test("the defaults: MAX_LOG_ENTRIES entries, MAX_LOG_BYTES bytes", () => {
    const full = Object.freeze(log(...Array.from({ length: MAX_LOG_ENTRIES }, (_, k): [number, number] => [k + 1, 1])));
    const taken = withTaken(full, MAX_LOG_ENTRIES + 1, 1);
    expect(taken).toHaveLength(MAX_LOG_ENTRIES);
    expect(pairs(taken)!.slice(0, 2)).toStrictEqual([
      [2, 2],
      [3, 1],
    ]);
  });
});

describe("bounded", () => {
  /** `n` entries 100 ms apart from 100, each of 200 tokens: 4 bytes each. */
  const fourByte = (n: number) => log(...Array.from({ length: n }, (_, k): [number, number] => [100 * (k + 1), 200]));

  test.each([
    ["max entries exactly: unchanged", log([1, 1], [2, 1], [3, 1]), 3, Infinity, [[1, 1], [2, 1], [3, 1]]],
    ["one past: the cheapest pair merges into the later", log([0, 1], [10, 1], [11, 5], [100, 1]), 3, Infinity, [[0, 1], [11, 6], [100, 1]]],
    ["cost is tokens × gap, not tokens ÷ gap", log([0, 1], [1, 2], [100, 50], [101, 1]), 3, Infinity, [[1, 3], [100, 50], [101, 1]]],
    ["cost counts the earlier entry's tokens", log([0, 5], [2, 1], [4, 1]), 2, Infinity, [[0, 5], [4, 2]]],
    ["cost is the gap, not the sum of instants", log([100, 1], [110, 1], [1000, 1], [1009, 1]), 3, Infinity, [[100, 1], [110, 1], [1009, 2]]],
    ["ties merge the oldest pair", log([0, 1], [1, 1], [2, 1], [3, 1]), 3, Infinity, [[1, 2], [2, 1], [3, 1]]],
    ["down to one", log([0, 1], [1, 1], [2, 1], [3, 1]), 1, Infinity, [[3, 4]]],
    ["overflowing costs: the first pair", log([0, 1e300], [1e10, 1e300], [2e10, 1e300]), 2, Infinity, [[1e10, 2e300], [2e10, 1e300]]],
  ] as [string, Entry[], number, number, [number, number][]][])("%s", (_name, entries, max, maxBytes, expected) => {
    expect(pairs(bounded(entries, max, maxBytes))).toStrictEqual(expected);
  });

  test("MAX_LOG_BYTES exactly: unchanged; one byte past: one merge", () => {
    expect(MAX_LOG_BYTES).toBe(112);
    const exactly = fourByte(28);
    expect(encodeLog(fourByte(28)).byteLength).toBe(112);
    expect(bounded(exactly)).toStrictEqual(fourByte(28));
    // A first entry of 5 bytes (2d = 16,384 takes 3): 113 bytes.
    const past = log([8192, 200], ...fourByte(27).map((e): [number, number] => [e.at + 8192, 200]));
    expect(encodeLog(past.map((e) => ({ ...e }))).byteLength).toBe(113);
    const merged = bounded(past);
    expect(merged).toHaveLength(27);
    expect(pairs(merged)!.slice(0, 2)).toStrictEqual([
      [8292, 400],
      [8392, 200],
    ]);
    expect(encodeLog(merged).byteLength).toBe(109);
  });

  test("more bytes than allowed but MIN_LOG_ENTRIES entries: unchanged; one more: merged down to MIN_LOG_ENTRIES", () => {
    expect(MIN_LOG_ENTRIES).toBe(8);
    // Fractional counts: 17 bytes each.
    const full = (n: number) => log(...Array.from({ length: n }, (_, k): [number, number] => [k + 1, 0.5]));
    expect(encodeLog(full(8)).byteLength).toBe(136);
    expect(bounded(full(8))).toStrictEqual(full(8));
    expect(pairs(bounded(full(9)))).toStrictEqual([[2, 1], ...full(7).map((e) => [e.at + 2, 0.5])]);
    expect(pairs(bounded(full(9), 32, 17 * 9))).toStrictEqual(pairs(full(9)));
    expect(bounded(full(9), 32, 17 * 9 - 1)).toHaveLength(8);
  });

  test("MAX_LOG_ENTRIES by default; a byte bound while merging for entries", () => {
    const many = () => log(...Array.from({ length: 40 }, (_, k): [number, number] => [k, 1]));
    expect(bounded(many())).toHaveLength(MAX_LOG_ENTRIES);
    // Equal costs: the oldest pair merges; then a pair holding the merged entry costs more.
    expect(pairs(bounded(many()))!.slice(0, 10)).toStrictEqual([
      [1, 2],
      [3, 2],
      [5, 2],
      [7, 2],
      [9, 2],
      [11, 2],
      [13, 2],
      [15, 2],
      [16, 1],
      [17, 1],
    ]);
    // After the entry bound, bytes: 32 entries at 2 bytes each and 16 bytes allowed leave 8.
    expect(bounded(many(), 32, 16)).toHaveLength(8);
  });

  test("without a byte bound no entry's bytes are measured", () => {
    calls.entryLength = 0;
    bounded(log([0, 1], [1, 1], [2, 1]), 2, Infinity);
    expect(calls.entryLength).toBe(0);
    bounded(log([0, 1], [1, 1], [2, 1]), 2, 100);
    expect(calls.entryLength).toBeGreaterThan(0);
  });

  test("changes the array it is handed, and returns it", () => {
    const entries = log([0, 1], [1, 1], [2, 1]);
    expect(bounded(entries, 2)).toBe(entries);
    expect(pairs(entries)).toStrictEqual([
      [1, 2],
      [2, 1],
    ]);
  });
});

describe("withGivenBack: off the oldest entries first", () => {
  const base = Object.freeze(log([1, 2], [5, 3]));
  test.each([
    [1, [[1, 1], [5, 3]]],
    [2, [[5, 3]]],
    [3, [[5, 2]]],
    [4, [[5, 1]]],
    [5, []],
    [7, []],
    [0.5, [[1, 1.5], [5, 3]]],
  ] as [number, [number, number][]][])("giving back %d", (count, expected) => {
    expect(pairs(withGivenBack(base, count))).toStrictEqual(expected);
  });
  test("float noise in what is left is none", () => {
    // 0.3 − 0.1 is 0.19999999999999998 in floats: the second entry is used up exactly.
    expect(pairs(withGivenBack(log([1, 0.1], [2, 0.2], [3, 1]), 0.3))).toStrictEqual([[3, 1]]);
    expect(pairs(withGivenBack(log([1, 0.1], [2, 0.3]), 0.3))).toStrictEqual([[2, 0.1]]);
  });
  test("entries not given back keep their counts exactly", () => {
    // 0.1 + 0.2 is 0.30000000000000004: not rounded to 0.3 by a subtraction of nothing.
    expect(pairs(withGivenBack(log([1, 1], [5, 0.1 + 0.2]), 1))).toStrictEqual([[5, 0.30000000000000004]]);
  });
  test("the empty log", () => {
    expect(withGivenBack(EMPTY_LOG, 3)).toStrictEqual([]);
  });
  test("an entry that holds what is given back but for float noise goes whole: no entry of 0 tokens, which no log may hold", () => {
    // 0.1 + 0.2 is 0.30000000000000004, more than 0.3 by noise that minus snaps to 0.
    const out = withGivenBack(log([1, 0.1 + 0.2], [5, 1]), 0.3);
    expect(pairs(out)).toStrictEqual([[5, 1]]);
    expect(decodeLog(encodeLog(out))).toStrictEqual(out);
  });
  test("through a row: takes of 0.1 + 0.2 tokens and, later, of 1, then a credit of 0.3: the older take is given back whole", () => {
    const p = paramsOf({ kind: "sliding window", rate: 10, period: 1000 }, 0);
    const first = decideRow(null, p, 1000, 0.1 + 0.2, false);
    if (!first.ok || first.next === undefined) throw new Error("refused");
    const second = decideRow(first.next, p, 1500, 1, false);
    if (!second.ok || second.next === undefined) throw new Error("refused");
    const credited = withValue(second.next, p, second.next.value + 0.3);
    expect(credited.log === undefined ? undefined : decodeLog(credited.log)).toStrictEqual([{ at: 1500, count: 1 }]);
  });
});

describe("withWithdrawn", () => {
  const base = Object.freeze(log([1, 2], [5, 3], [9, 1]));
  test.each([
    ["fewer than the entry at `at` holds", 5, 1, [[1, 2], [5, 2], [9, 1]]],
    ["exactly what it holds", 5, 3, [[1, 2], [9, 1]]],
    ["more: the rest off the oldest", 5, 4, [[1, 1], [9, 1]]],
    ["more than all", 5, 10, []],
    ["no entry at `at`: off the oldest", 3, 1, [[1, 1], [5, 3], [9, 1]]],
    ["the first entry", 1, 1, [[1, 1], [5, 3], [9, 1]]],
    ["the last entry, more than it holds", 9, 3, [[5, 3]]],
  ] as [string, number, number, [number, number][]][])("%s", (_name, at, count, expected) => {
    expect(pairs(withWithdrawn(base, at, count))).toStrictEqual(expected);
  });
});

describe("withWithdrawn at the first entry", () => {
  test("its tokens come off that entry: float noise in what is left is none", () => {
    // 0.30000000000000004 − 0.3 is float noise: the entry is used up, not left holding 0 tokens.
    expect(pairs(withWithdrawn(log([1, 0.1 + 0.2], [5, 1]), 1, 0.3))).toStrictEqual([[5, 1]]);
  });
});

describe("carriedLog", () => {
  test.each([
    [0, []],
    [-1, []],
    [NaN, []],
    [5, [[1000, 5]]],
    [10, [[1000, 10]]],
    [11, [[1600, 11]]],
    [20, [[1600, 20]]],
    [30, [[2200, 30]]],
    [0.5, [[1000, 0.5]]],
  ] as [number, [number, number][]][])("%d tokens used (rate 10, period 600, at 1000)", (used, expected) => {
    expect(pairs(carriedLog(used, 1000, 10, 600))).toStrictEqual(expected);
  });
  test("none used: the empty log", () => {
    expect(carriedLog(0, 1000, 10, 600)).toBe(EMPTY_LOG);
  });
});

describe("mergeLogs", () => {
  test.each([
    [[], []],
    [[[]], []],
    [[[[1, 2]]], [[1, 2]]],
    [
      [
        [[1, 1], [5, 2]],
        [[3, 1], [5, 4]],
        [[0, 1], [5, 1], [9, 9]],
      ],
      [[0, 1], [1, 1], [3, 1], [5, 7], [9, 9]],
    ],
    [
      [
        [[7, 1]],
        [[2, 1], [2, 2]],
      ],
      [[2, 3], [7, 1]],
    ],
  ] as [[number, number][][], [number, number][]][])("%j", (logs, expected) => {
    expect(pairs(mergeLogs(logs.map((l) => log(...l))))).toStrictEqual(expected);
  });
  test("new entries: merging never changes the logs", () => {
    const a = Object.freeze(log([1, 1]).map((e) => Object.freeze(e)));
    const b = Object.freeze(log([1, 2]).map((e) => Object.freeze(e)));
    expect(pairs(mergeLogs([a, b]))).toStrictEqual([[1, 3]]);
    expect(pairs(a)).toStrictEqual([[1, 1]]);
  });
});

describe("splitLog", () => {
  test.each([
    ["one shard: the log, bounded", [[1, 1], [2, 3]], [7], [[[1, 1], [2, 3]]]],
    ["even shares of whole tokens: a tie to the first", [[1, 1], [2, 1], [3, 1]], [1, 1], [[[1, 1], [3, 1]], [[2, 1]]]],
    ["in proportion", [[1, 4]], [3, 1], [[[1, 3]], [[1, 1]]]],
    ["a token left over goes to the shard furthest behind", [[1, 1]], [1, 2], [[], [[1, 1]]]],
    ["whole parts first, then the rest", [[1, 5], [2, 5]], [1, 1], [[[1, 3], [2, 2]], [[1, 2], [2, 3]]]],
    ["three shards", [[1, 2], [2, 2]], [1, 1, 1], [[[1, 1], [2, 1]], [[1, 1]], [[2, 1]]]],
    ["fractional: in proportion to how far behind", [[1, 0.5]], [1, 3], [[[1, 0.125]], [[1, 0.375]]]],
    ["fractional: a shard ahead gets none", [[1, 1], [2, 0.5]], [1, 1], [[[1, 1]], [[2, 0.5]]]],
    ["fractional: only the first behind", [[1, 1], [2, 0.5]], [1, 2], [[[2, 0.5]], [[1, 1]]]],
    ["over its capacity: the excess to a shard with room", [[1, 1]], [0.5, 0.5], [[[1, 0.5]], [[1, 0.5]]]],
    ["the latest entry's excess moves", [[1, 1], [2, 1], [3, 1]], [1.5, 1.5], [[[1, 1], [3, 0.5]], [[2, 1], [3, 0.5]]]],
    ["only what the room takes moves", [[1, 1]], [0.25, 0.5], [[[1, 0.25]], [[1, 0.75]]]],
    ["the excess to every shard with room, in order", [[1, 1]], [0.25, 0.25, 0.5], [[[1, 0.25]], [[1, 0.25]], [[1, 0.5]]]],
    ["an entry moved whole leaves nothing behind", [[1, 2], [2, 0.25]], [0.75, 0.25, 0.5], [[[1, 1]], [[2, 0.25]], [[1, 1]]]],
    // The first shard alone is behind: its part, count × behind ÷ behind, is an ulp off 0.75, and
    // the remainder goes back to it.
    ["fractional: the float remainder to the one shard given any", [[1, 2], [2, 0.75]], [1, 0.5], [[[1, 1], [2, 0.75]], [[1, 1]]]],
    ["a whole token to the shard furthest behind, not to one ahead", [[1, 3], [2, 1], [3, 1]], [1, 4, 4], [[[1, 1]], [[1, 1], [2, 1]], [[1, 1], [3, 1]]]],
    ["the over shard's own room is none", [[1, 1]], [0.75, 0.75], [[[1, 0.75]], [[1, 0.25]]]],
    ["what one shard took is no longer excess for the next", [[1, 1]], [0.25, 0.5, 0.5], [[[1, 0.25]], [[1, 0.5]], [[1, 0.25]]]],
    ["five shards, fractions moving to several", [[2, 2], [4, 1], [5, 2]], [0.9, 2, 0.3, 1.3, 0.8], [[[4, 0.9]], [[2, 1], [5, 1]], [[4, 0.1], [5, 0.2]], [[2, 1]], [[5, 0.8]]]],
    // 1e-12 is below half an ulp of the running total: no shard is behind, and the last takes it.
    ["a fraction no shard is behind for: to the last shard", [[1, 1e6], [2, 1e-12]], [1, 1], [[[1, 5e5]], [[1, 5e5], [2, 1e-12]]]],
    ["a fraction no shard is behind for: to the last of three", [[1, 3e6], [2, 1e-12]], [1, 1, 1], [[[1, 1e6]], [[1, 1e6]], [[1, 1e6], [2, 1e-12]]]],
    ["all over capacity: nothing moves", [[1, 3], [2, 3]], [1, 1], [[[1, 2], [2, 1]], [[1, 1], [2, 2]]]],
  ] as [string, [number, number][], number[], [number, number][][]][])("%s", (_name, entries, shares, expected) => {
    expect(splitLog(Object.freeze(log(...entries)), shares).map(pairs)).toStrictEqual(expected);
  });

  test("an excess off the over shard's latest entry, to the shard with room", () => {
    // [1, 1] → shard 0 (a tie); [2, 0.25] and [3, 0.25] → shard 1 (shard 0 is ahead); [4, 1]:
    // running total 2.5, behind [0.25, 0.75]: the token to shard 1. Given [1, 1.5]: shard 1 is
    // 0.25 over, shard 0 has 0.25 room: 0.25 of [4, 1] moves to shard 0.
    const out = splitLog(Object.freeze(log([1, 1], [2, 0.25], [3, 0.25], [4, 1])), [1.25, 1.25]);
    expect(out.map(pairs)).toStrictEqual([
      [
        [1, 1],
        [4, 0.25],
      ],
      [
        [2, 0.25],
        [3, 0.25],
        [4, 0.75],
      ],
    ]);
  });

  test("a count of 2^40 tokens is shared out in whole parts at once, not token by token", () => {
    expect(splitLog(Object.freeze(log([1, 2 ** 40])), [1, 1]).map(pairs)).toStrictEqual([[[1, 2 ** 39]], [[1, 2 ** 39]]]);
    expect(splitLog(Object.freeze(log([1, 2 ** 40 + 1])), [1, 3]).map(pairs)).toStrictEqual([[[1, 2 ** 38]], [[1, 3 * 2 ** 38 + 1]]]);
  });

  test("each shard's log bounded", () => {
    const many = Object.freeze(log(...Array.from({ length: 80 }, (_, k): [number, number] => [k, 2])));
    const out = splitLog(many, [1000, 1000]);
    expect(out.map((l) => l.length)).toStrictEqual([MAX_LOG_ENTRIES, MAX_LOG_ENTRIES]);
    expect(out.map(logTotal)).toStrictEqual([80, 80]);
    expect(splitLog(many, [1000])[0]).toHaveLength(MAX_LOG_ENTRIES);
  });
});

describe("freedAt", () => {
  const entries = Object.freeze(log([1, 1], [2, 2], [5, 4]));
  test.each([
    [0, 1, 11],
    [0, 3, 12],
    [0, 4, 15],
    [0, 7, 15],
    [0, 8, undefined],
    [2, 3, 11],
    [2, 9, 15],
    [5, 3, 11],
    [-1, 3, 15],
  ] as [number, number, number | undefined][])("room %d, need %d (period 10)", (value, need, expected) => {
    expect(freedAt(entries, value, need, 10)).toBe(expected);
  });
  test("no entries: never", () => {
    expect(freedAt(EMPTY_LOG, 5, 1, 10)).toBeUndefined();
  });
  test("float noise is no shortfall", () => {
    // 0.7 + 0.1 is 0.7999999999999999 in floats.
    expect(freedAt(log([3, 0.1]), 0.7, 0.8, 10)).toBe(13);
  });
});

describe("windowLog", () => {
  test("a row without a log: the empty log; bad bytes: undefined; a log: its entries", () => {
    expect(windowLog({})).toBe(EMPTY_LOG);
    expect(windowLog({ log: undefined })).toBe(EMPTY_LOG);
    expect(windowLog({ log: buf([3]) })).toBeUndefined();
    expect(pairs(windowLog({ log: buf([10, 3]) }))).toStrictEqual([[5, 3]]);
  });
});

// Properties against naive references.

/** A log in order of time: whole instants (from `start`) and whole counts, or anything. */
const wholeLog = (maxLength: number, maxGap = 300, maxCount = 300) =>
  fc
    .array(fc.tuple(fc.integer({ min: 0, max: maxGap }), fc.integer({ min: 1, max: maxCount })), { maxLength })
    .map((steps) => {
      let at = 0;
      return steps.map(([gap, count]) => ({ at: (at += gap), count }));
    });

const anyLog = fc
  .array(
    fc.tuple(
      fc.oneof(fc.integer({ min: 0, max: 2 ** 20 }), fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true })),
      fc.oneof(fc.integer({ min: 1, max: 2 ** 40 }), fc.double({ min: 1e-9, max: 1e15, noNaN: true, noDefaultInfinity: true })),
    ),
    { maxLength: 12 },
  )
  .chain((steps) =>
    fc.integer({ min: -(2 ** 20), max: 2 ** 20 }).map((start) => {
      let at = start;
      return steps.map(([gap, count]) => ({ at: (at += gap) === 0 ? 0 : at, count }));
    }),
  );

/** The bytes of a log, written plainly. */
function naiveEncode(entries: readonly Entry[]): number[] {
  const out: number[] = [];
  let last = 0;
  for (const { at, count } of entries) {
    const d = at - last;
    if (Number.isSafeInteger(d) && d >= 0 && 2 * d < Number.MAX_SAFE_INTEGER && Number.isSafeInteger(count) && count > 0) out.push(...varint(2 * d), ...varint(count));
    else out.push(1, ...f64(at), ...f64(count));
    last = at;
  }
  return out;
}

/** A log's bytes read plainly: undefined where they aren't a log. */
function naiveDecode(bytes: number[]): [number, number][] | undefined {
  const out: [number, number][] = [];
  let i = 0;
  let last = 0;
  const readVarint = (): number | undefined => {
    let n = 0;
    for (let k = 0; k < 8; k++) {
      if (i >= bytes.length) return undefined;
      const b = bytes[i++]!;
      n += (b % 128) * 128 ** k;
      if (b < 128) return n;
    }
    return undefined;
  };
  const readF64 = (): number => new DataView(new Uint8Array(bytes.slice(i, (i += 8))).buffer).getFloat64(0, true);
  while (i < bytes.length) {
    const header = readVarint();
    let at: number;
    let count: number | undefined;
    if (header === undefined) return undefined;
    if (header === 1) {
      if (bytes.length - i < 16) return undefined;
      at = readF64();
      count = readF64();
    } else if (header % 2 === 1) return undefined;
    else {
      at = last + header / 2;
      count = readVarint();
      if (count === undefined) return undefined;
    }
    if (!Number.isFinite(at) || (out.length > 0 && at < last) || !Number.isFinite(count) || !(count > 0)) return undefined;
    out.push([at, count]);
    last = at;
  }
  return out;
}

/** A log's bytes as encodeLog counts them. */
const sizeOf = (entries: readonly Entry[]) => encodeLog(entries.map((e) => ({ ...e }))).byteLength;

/** bounded written plainly: measure, merge the cheapest pair (the oldest on a tie), repeat. */
function naiveBounded(entries: readonly Entry[], max: number, maxBytes: number): [number, number][] {
  let out = entries.map((e) => ({ ...e }));
  while (out.length > max || (sizeOf(out) > maxBytes && out.length > MIN_LOG_ENTRIES)) {
    const costs = out.slice(1).map((e, k) => out[k]!.count * (e.at - out[k]!.at));
    const k = costs.indexOf(Math.min(...costs)) + 1;
    out = [...out.slice(0, k - 1), { at: out[k]!.at, count: out[k - 1]!.count + out[k]!.count }, ...out.slice(k + 1)];
  }
  return out.map((e) => [e.at, e.count]);
}

/** The tokens taken at or before `x`. */
const upTo = (entries: readonly Entry[], x: number) => entries.filter((e) => e.at <= x).reduce((s, e) => s + e.count, 0);

/** `count` tokens given back plainly, oldest first (whole counts). */
function naiveGivenBack(entries: readonly Entry[], count: number): [number, number][] {
  let left = count;
  const out: [number, number][] = [];
  for (const e of entries) {
    const off = Math.min(left, e.count);
    left -= off;
    if (e.count - off > 0) out.push([e.at, e.count - off]);
  }
  return out;
}

/** Logs merged plainly: each instant's tokens added up, in order of time. */
function naiveMerge(logs: readonly (readonly Entry[])[]): [number, number][] {
  const byAt = new Map<number, number>();
  for (const l of logs) for (const e of l) byAt.set(e.at, (byAt.get(e.at) ?? 0) + e.count);
  return [...byAt].sort((a, b) => a[0] - b[0]);
}

describe("properties", () => {
  beforeEach(() => {
    calls.entryLength = 0;
  });

  test.prop([anyLog], runs(200, 5000))(
    "encodeLog writes the plain encoding; decodeLog reads it back exactly",
    (entries) => {
      const bytes = naiveEncode(entries);
      expect(encoded(entries)).toStrictEqual(bytes);
      expect(decodeLog(buf(bytes))).toStrictEqual(entries);
    },
    TIMEOUT,
  );

  /** Bytes near a log's: entries (compact, full, odd headers, long varints), cut anywhere. */
  const nearLog = fc
    .array(
      fc.oneof(
        fc.tuple(fc.integer({ min: 0, max: 2 ** 20 }), fc.integer({ min: 0, max: 2 ** 20 })).map(([h, c]) => [...varint(2 * h), ...varint(c)]),
        fc.tuple(fc.double(), fc.double()).map(([a, c]) => [1, ...f64(a), ...f64(c)]),
        fc.integer({ min: 0, max: 255 }).map((b) => [b]),
        fc.integer({ min: 6, max: 10 }).map((k) => [...Array.from({ length: k }, () => 128), 2, 1]),
      ),
      { maxLength: 6 },
    )
    .chain((chunks) => {
      const bytes = chunks.flat();
      return fc.integer({ min: 0, max: bytes.length }).map((cut) => bytes.slice(0, cut));
    });

  test.prop([nearLog], runs(300, 10000))(
    "decodeLog answers as a plain reading of the bytes does",
    (bytes) => {
      expect(pairs(decodeLog(buf(bytes)))).toStrictEqual(naiveDecode(bytes));
    },
    TIMEOUT,
  );

  test.prop([wholeLog(45, 300), fc.integer({ min: 1, max: 40 }), fc.oneof(fc.constant(Infinity), fc.integer({ min: 10, max: 150 }))], runs(150, 3000))(
    "bounded merges as the plain algorithm does, keeps the total and counts every token at its instant or later",
    (entries, max, maxBytes) => {
      const expected = naiveBounded(entries, max, maxBytes);
      const out = bounded(entries.map((e) => ({ ...e })), max, maxBytes);
      expect(pairs(out)).toStrictEqual(expected);
      expect(out.length).toBeLessThanOrEqual(max);
      if (out.length > MIN_LOG_ENTRIES) expect(sizeOf(out)).toBeLessThanOrEqual(maxBytes);
      expect(logTotal(out)).toBe(logTotal(entries));
      for (const e of entries) expect(upTo(out, e.at)).toBeLessThanOrEqual(upTo(entries, e.at));
    },
    TIMEOUT,
  );

  test.prop([wholeLog(40, 200), fc.integer({ min: 0, max: 9000 }), fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 40 })], runs(150, 3000))(
    "withTaken: inserted in order, merged at its instant, bounded",
    (entries, at, count, max) => {
      const frozen = decodeLog(encodeLog(entries))!;
      // After every entry at or before `at`, added to the last of them if it is at `at`.
      const i = entries.filter((e) => e.at <= at).length;
      const inserted =
        i > 0 && entries[i - 1]!.at === at
          ? entries.map((e, k) => (k === i - 1 ? { at, count: e.count + count } : { ...e }))
          : [...entries.slice(0, i), { at, count }, ...entries.slice(i)].map((e) => ({ ...e }));
      expect(pairs(withTaken(frozen, at, count, max))).toStrictEqual(naiveBounded(inserted, max, MAX_LOG_BYTES));
    },
    TIMEOUT,
  );

  test.prop([wholeLog(12, 50), fc.integer({ min: 0, max: 700 }), fc.integer({ min: 1, max: 300 })], runs(200, 5000))(
    "live keeps exactly the entries after t - period",
    (entries, t, period) => {
      expect(live(entries, t, period)).toStrictEqual(entries.filter((e) => e.at > t - period));
    },
    TIMEOUT,
  );

  test.prop([wholeLog(10, 20, 6), fc.integer({ min: 1, max: 50 })], runs(200, 5000))(
    "withGivenBack takes off the oldest first",
    (entries, count) => {
      expect(pairs(withGivenBack(Object.freeze(entries), count))).toStrictEqual(naiveGivenBack(entries, count));
    },
    TIMEOUT,
  );

  test.prop([wholeLog(10, 3, 6), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 40 })], runs(200, 5000))(
    "withWithdrawn takes off the entry at its instant first, the rest off the oldest",
    (entries, at, count) => {
      const i = entries.findIndex((e) => e.at === at);
      let expected: [number, number][];
      if (i < 0) expected = naiveGivenBack(entries, count);
      else {
        const off = Math.min(count, entries[i]!.count);
        const rest = entries.map((e, k) => ({ at: e.at, count: k === i ? e.count - off : e.count })).filter((e) => e.count > 0);
        expected = naiveGivenBack(rest, count - off);
      }
      expect(pairs(withWithdrawn(Object.freeze(entries), at, count))).toStrictEqual(expected);
    },
    TIMEOUT,
  );

  test.prop([fc.array(wholeLog(6, 5, 9), { maxLength: 4 })], runs(200, 5000))(
    "mergeLogs adds each instant's tokens, in order of time",
    (logs) => {
      expect(pairs(mergeLogs(logs))).toStrictEqual(naiveMerge(logs));
    },
    TIMEOUT,
  );

  test.prop([wholeLog(10, 20, 9), fc.integer({ min: -5, max: 20 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 100 })], runs(200, 5000))(
    "freedAt is the instant the entry that frees the last token needed leaves",
    (entries, value, need, period) => {
      let room = value;
      let expected: number | undefined;
      for (const e of entries) {
        room += e.count;
        if (room >= need) {
          expected = e.at + period;
          break;
        }
      }
      expect(freedAt(entries, value, need, period)).toBe(expected);
    },
    TIMEOUT,
  );

  test.prop([wholeLog(8, 5, 7), fc.array(fc.integer({ min: 1, max: 24 }).map((q) => q / 4), { minLength: 1, maxLength: 4 })], runs(300, 8000))(
    "splitLog: the shards' logs merge back to the log, each token at its instant; within a token of each share; none over while another has room",
    (entries, shares) => {
      const out = splitLog(Object.freeze(entries.map((e) => Object.freeze(e))), shares);
      expect(out).toHaveLength(shares.length);
      expect(pairs(mergeLogs(out))).toStrictEqual(naiveMerge([entries]));
      const totals = out.map(logTotal);
      for (let i = 0; i < shares.length; i++) {
        for (const e of out[i]!) expect(e.count).toBeGreaterThan(0);
        for (let k = 1; k < out[i]!.length; k++) expect(out[i]![k]!.at).toBeGreaterThanOrEqual(out[i]![k - 1]!.at);
        for (let j = 0; j < shares.length; j++) expect(totals[i]! > shares[i]! && totals[j]! < shares[j]!).toBe(false);
      }
      // Before any excess moves, each shard's running total keeps within a token of its share of
      // the log's. A shard that was over ends at or over its capacity: none moved if all end under.
      if (totals.every((g, i) => g < shares[i]!)) {
        const sum = shares.reduce((a, b) => a + b, 0);
        for (const e of entries) {
          const total = upTo(entries, e.at);
          for (let i = 0; i < shares.length; i++) expect(Math.abs(upTo(out[i]!, e.at) * sum - total * shares[i]!)).toBeLessThan(sum);
        }
      }
    },
    TIMEOUT,
  );
});
