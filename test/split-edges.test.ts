// The edges of src/shared/core/split.ts that split.test.ts leaves open: pairAccepts, wholeIfClose, takeCount, landed, and where minus stops snapping.
import { describe, expect, test } from "vitest";
import { landed, minus, pairAccepts, splitTotal, takeCount, wholeIfClose } from "../src/shared/core/split.js";

describe("splitTotal with one shard", () => {
  // The split's own arithmetic (floor, then the fraction added back) does not give every total back
  // bit for bit: -0 comes back 0 and -0.3 as -0.30000000000000004. One shard skips it.
  test.each([
    ["-0 stays -0", -0, -0],
    ["-0.3 stays -0.3", -0.3, -0.3],
    ["-0.1 stays -0.1", -0.1, -0.1],
  ] as [string, number, number][])("%s", (_why, total, expected) => {
    expect(splitTotal(total, 1, 0)).toBe(expected);
  });
});

describe("pairAccepts", () => {
  test.each([
    // [why, va, vb, count, floor, expected]
    ["the fuller alone, to exactly 0, even under a floor the pair can't meet", 5, 2, 5, 10, true],
    ["the fuller alone, whichever side it is on", 2, 5, 5, 10, true],
    ["neither alone, both together to exactly the floor", 3, 2, 5, 0, true],
    ["both together into debt down to the floor", 3, 2, 6, -1, true],
    ["both together below the floor", 3, 2, 6, 0, false],
    ["both together 0.1 below the floor", 3, 2, 5.1, 0, false],
  ] as [string, number, number, number, number, boolean][])("%s", (_why, va, vb, count, floor, expected) => {
    expect(pairAccepts(va, vb, count, floor)).toBe(expected);
  });
});

describe("wholeIfClose", () => {
  test.each([
    // [why, x, expected]
    ["an ulp below 3 is 3", 2.9999999999999996, 3],
    ["an ulp above -3 is -3", -2.9999999999999996, -3],
    ["a half stays", 2.5, 2.5],
    ["exactly 1e-12 from a whole number below 1 is that number (the bound is inclusive)", 1e-12, 0],
    ["at a million the bound is relative: 1e-7 off is within 1e-12 of it", 1000000.0000001, 1000000],
    ["at a million, 1e-5 off is not", 1000000.00001, 1000000.00001],
  ] as [string, number, number][])("%s", (_why, x, expected) => {
    expect(wholeIfClose(x)).toBe(expected);
  });
});

describe("minus: where the snapping stops", () => {
  test.each([
    // [why, a, b, expected]
    // 12 - floor(log10(2e-288)) is 300 digits: still snapped (the plain difference is 9.999999999999993e-289).
    ["at 300 digits, snapped", 1.9999999999999994e-288, 1e-288, 9.999999999999999e-289],
    // 303 digits: past the 300 where 10 ** digits nears the float range; the plain difference.
    ["past 300 digits, not snapped", 1.9999999999999992e-291, 1e-291, 9.999999999999993e-292],
    // The plain difference, 7152557.373002861, is exactly scale * 1e-13 from 7152557.373: the bound is inclusive.
    ["float noise of exactly the bound is snapped", 28610229.4921875, 21457672.11918464, 7152557.373],
  ] as [string, number, number, number][])("%s", (_why, a, b, expected) => {
    expect(minus(a, b)).toBe(expected);
  });
});

describe("takeCount and landed", () => {
  test.each([
    // [why, from, to, take, landed]
    ["whole numbers: the difference", 5, 3, 2, 3],
    // Both 1.42 and the plain difference land on 6.02: the plain one is taken, as the fold recorded it.
    ["the plain difference, when it lands and the snapped one differs", 7.44, 6.02, 1.4200000000000008, 6.02],
    // Neither 157.88299999999978 nor 157.883 subtracted from `from` with minus gives 6.83000000000029
    // back, so the take is the plain difference and the shard lands on 6.83, the decimal it is noise off.
    ["neither lands: the plain difference, and the shard lands on the decimal", 164.71300000000008, 6.83000000000029, 157.88299999999978, 6.83],
  ] as [string, number, number, number, number][])("%s", (_why, from, to, take, land) => {
    expect(takeCount(from, to)).toBe(take);
    expect(landed(from, to)).toBe(land);
    // Landed values land on themselves.
    expect(landed(from, land)).toBe(land);
  });

  test("a value that never lands (NaN) ends after the loop's passes, not in a hang", () => {
    expect(landed(Number.NaN, 1)).toBeNaN();
  });
});
