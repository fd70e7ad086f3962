// Exact shard splits (splitTotal, smallestPair): tables of awkward totals, and a brute-force comparison over many totals and shard counts.
import { describe, expect, test } from "vitest";
import { minus, smallestPair, splitTotal } from "../src/shared/core/split.js";

const parts = (total: number, n: number) => Array.from({ length: n }, (_, i) => splitTotal(total, n, i));
/** Sums in shard order, the way a whole limit's capacity is the sum of its shards'. */
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("splitTotal", () => {
  test.each([
    // [why, total, shards, expected parts]
    ["one shard keeps the whole", 10, 1, [10]],
    ["10 over 3: the remainder goes to the first shards", 10, 3, [4, 3, 3]],
    ["10 over 8 is 2,2,1,1,1,1,1,1, not 1.25 each", 10, 8, [2, 2, 1, 1, 1, 1, 1, 1]],
    ["100 over 16: four 7s and twelve 6s", 100, 16, [...Array<number>(4).fill(7), ...Array<number>(12).fill(6)]],
    ["1000 over 64: forty 16s and twenty-four 15s", 1000, 64, [...Array<number>(40).fill(16), ...Array<number>(24).fill(15)]],
    ["an even split", 12, 4, [3, 3, 3, 3]],
    ["the fraction goes to the last shard only", 10.5, 4, [3, 3, 2, 2.5]],
    ["a total below 1 shard each still sums (fraction on the last)", 2.5, 4, [1, 1, 0, 0.5]],
    ["zero", 0, 5, [0, 0, 0, 0, 0]],
  ] as [string, number, number, number[]][])("%s", (_why, total, n, expected) => {
    const got = parts(total, n);
    expect(got).toEqual(expected);
    expect(sum(got)).toBe(total);
  });

  test.each([
    // [why, total, shards]
    ["10/3 over 2", 10 / 3, 2],
    ["10/3 over 3", 10 / 3, 3],
    ["1/3 over 1", 1 / 3, 1],
    ["7.25 over 3", 7.25, 3],
    ["0.1 + 0.2 over 3", 0.1 + 0.2, 3],
    ["1000.7 over 64", 1000.7, 64],
    ["a large total with a small fraction", 123_456_789.001, 10],
  ])("fractional total %s: parts add up exactly", (_why, total, n) => {
    const got = parts(total, n);
    expect(sum(got)).toBe(total);
    // All but the last shard hold whole tokens, so none strands a fraction it can't spend.
    for (const part of got.slice(0, -1)) expect(Number.isInteger(part)).toBe(true);
    // Whole parts differ by at most one token.
    const whole = got.map(Math.floor);
    expect(Math.max(...whole) - Math.min(...whole)).toBeLessThanOrEqual(1);
  });

  test.each([1, 2, 3, 10, 1024])("Infinity over %i shards is Infinity for every shard", (n) => {
    expect(parts(Infinity, n).every((x) => x === Infinity)).toBe(true);
  });

  test("every whole total 0..300 over 1..40 shards sums exactly, evenly, in whole tokens", () => {
    const bad: string[] = [];
    for (let total = 0; total <= 300; total++) {
      for (let n = 1; n <= 40; n++) {
        const got = parts(total, n);
        const even = Math.max(...got) - Math.min(...got) <= 1;
        if (sum(got) !== total || !even || !got.every(Number.isInteger)) bad.push(`${total}/${n}: ${got.join(",")}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

describe("smallestPair", () => {
  test.each([
    // [why, total, shards, expected]
    ["one shard: the whole", 10, 1, 10],
    ["two shards: the whole", 10.5, 2, 10.5],
    ["10 over 8: two 1s", 10, 8, 2],
    ["10 over 3: 3 + 3", 10, 3, 6],
    ["100 over 16: 6 + 6", 100, 16, 12],
    ["1000 over 64: 15 + 15", 1000, 64, 30],
    ["the fraction on the last shard makes it one of the smallest", 10.5, 3, 6.5],
    ["a last shard smaller than the rest", 11.9, 4, 5.9],
    ["Infinity", Infinity, 4, Infinity],
  ])("%s", (_why, total, n, expected) => {
    expect(smallestPair(total, n)).toBeCloseTo(expected, 12);
  });

  test("equals the brute-force least pair for totals 0..60 (and fractional ones) over 2..20 shards", () => {
    const bad: string[] = [];
    for (let t = 0; t <= 60; t += 0.25) {
      for (let n = 2; n <= 20; n++) {
        const got = parts(t, n);
        let least = Infinity;
        for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) least = Math.min(least, got[i]! + got[j]!);
        if (smallestPair(t, n) !== least) bad.push(`${t}/${n}: ${smallestPair(t, n)} vs ${least}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

describe("minus: decimal amounts add up exactly", () => {
  test.each([
    // [why, a, b, expected]
    ["the last tenth of 3 leaves exactly 0", 0.10000000000000026, 0.1, 0],
    ["2.9 less a tenth is 2.8, not 2.8000000000000003", 2.9000000000000004, 0.1, 2.8],
    ["a third stays a third: it isn't a 12-digit decimal", 1, 2 / 3, 1 - 2 / 3],
    ["whole numbers are untouched", 7, 3, 4],
    ["a small difference comes out as its decimal", 1e-3, 1e-9, 0.000999999],
    ["zero minus zero", 0, 0, 0],
    // The 12 digits are counted from the larger operand's first significant digit.
    ["a hundredth's scale: 0.065458958 - 0.03637838904182 is 0.02908056895818", 0.065458958, 0.03637838904182, 0.02908056895818],
    ["at a trillion, a tenth is within float noise of the 12 digits: snapped to whole", 1142696697754.1, 5525547000000, -4382850302246],
    ["beyond 2^53 (no whole numbers in between), nothing is snapped", 2.75e16, 1.49e16, 1.26e16],
  ] as [string, number, number, number][])("%s", (_why, a, b, expected) => {
    expect(minus(a, b)).toBe(expected);
  });
});
