// The benchmark's statistics, against values worked by hand.
import { describe, expect, test } from "vitest";
import { median, medianInterval, quantile } from "./stats.js";

const ranks = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("median and quantile", () => {
  test("interpolate between the nearest values", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5], 0.25)).toBe(2);
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75);
  });
});

describe("medianInterval", () => {
  // Coverage 1 - 2 P(B <= k - 1), B ~ Binomial(n, 1/2): the largest k reaching 95 %.
  test.each([
    // n = 10: P(B <= 1) = 11/1024, twice is 2.1 %; P(B <= 2) = 56/1024, twice is 10.9 %: k = 2.
    [10, [2, 9]],
    // n = 40: P(B <= 13) = 0.0192, twice 3.8 %; P(B <= 14) = 0.0403, twice 8.1 %: k = 14.
    [40, [14, 27]],
    // n = 7: P(B <= 0) = 1/128, twice 1.6 %; P(B <= 1) = 8/128, twice 12.5 %: k = 1, the whole range.
    [7, [1, 7]],
    // n = 5: even the whole range covers only 1 - 2/32 = 93.75 %.
    [5, [1, 5]],
    [1, [1, 1]],
  ] as [number, [number, number]][])("%i draws: order statistics %j", (n, expected) => {
    expect(medianInterval(ranks(n).reverse())).toEqual(expected);
  });

  test("a lower confidence narrows it", () => {
    // n = 10 at 75 %: P(B <= 2) twice is 10.9 % <= 25 %; P(B <= 3) = 176/1024, twice 34.4 %: k = 3.
    expect(medianInterval(ranks(10), 0.75)).toEqual([3, 8]);
  });
});
