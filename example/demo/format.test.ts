// The demo's formatting helpers (format.ts): durations, numbers, spreads, wrapping and summary layout, table-driven with explicit values.
import { describe, expect, test } from "vitest";
import { duration, num, pct, spread, summaryLines, timeStep, waits, wrap } from "./format.js";

describe("duration", () => {
  test.each([
    [0, "0s"], // zero has no unit of its own
    [850, "850ms"], // under a second: ms
    [5_200, "5.2s"], // one decimal under 10 s
    [6_000, "6s"], // whole seconds drop the decimal
    [45_400, "45s"], // 10 s and up: whole seconds
    [90_000, "1m30s"], // minutes and seconds
    [119_600, "2m"], // rounds up into the next minute, not 1m60s
    [120_000, "2m"], // whole minutes drop the seconds
    [7_500_000, "2h05m"], // hours and minutes
    [-6_000, "-6s"], // negative durations keep their sign
  ])("%d ms is %s", (ms, text) => {
    expect(duration(ms)).toBe(text);
  });
});

describe("numbers", () => {
  test.each([
    [num(1234567), "1,234,567"], // thousands separators
    [num(3.14159, 2), "3.14"], // fixed decimals
    [num(Infinity), "Infinity"], // non-finite values are spelled out
    [pct(0.5), "50.0%"], // a fraction as a percentage
    [pct(NaN), "n/a"], // a ratio with nothing to divide
  ])("%s", (actual, expected) => {
    expect(actual).toBe(expected);
  });
});

describe("spread and waits", () => {
  test("mean, median, 90th percentile (nearest rank), min and max", () => {
    expect(spread([5, 1, 4, 2, 3, 6, 7, 8, 9, 10])).toEqual({ n: 10, mean: 5.5, p50: 5, p90: 9, min: 1, max: 10 });
  });
  test("an empty list has no spread", () => {
    expect(spread([]).mean).toBeNaN();
    expect(waits([])).toBe("none");
  });
  test("waits reads in durations", () => {
    expect(waits([4_000, 6_000])).toBe("mean 5s, max 6s");
  });
});

describe("wrap", () => {
  test.each([
    ["fits on one line", "a b c", 10, ["a b c"]],
    ["breaks at spaces", "aaa bbb ccc", 7, ["aaa bbb", "ccc"]],
    ["a word longer than the width stands alone", "x averyveryverylongword y", 8, ["x", "averyveryverylongword", "y"]],
    ["collapses runs of spaces", "a    b", 10, ["a b"]],
  ] as const)("%s", (_what, text, width, lines) => {
    expect(wrap(text, width)).toEqual(lines);
  });
});

describe("summaryLines", () => {
  const rows = [
    { label: "admitted", value: "39", note: "78.0%" },
    { label: "refusal waits", value: "mean 4.5s, max 4.8s", note: "retryAfter, until a token is back" },
    { label: "limit", value: "a value much longer than the value column", note: "its note goes under it" },
    { label: "no note", value: "1" },
  ];

  test("aligns labels and values, and puts notes in one column", () => {
    const lines = summaryLines(rows, 80);
    expect(lines[0]).toBe("  admitted       39                   78.0%");
    expect(lines[1]).toBe("  refusal waits  mean 4.5s, max 4.8s  retryAfter, until a token is back");
    // A value wider than the column pushes its note to the next line, in the notes' column.
    expect(lines[2]).toBe("  limit          a value much longer than the value column");
    expect(lines[3]).toBe(`${" ".repeat(38)}its note goes under it`);
    expect(lines[4]).toBe("  no note        1");
  });

  test("never exceeds the width, wrapping long notes", () => {
    const long = [{ label: "x", value: "1", note: "word ".repeat(40) }];
    for (const width of [40, 60, 80]) {
      for (const line of summaryLines([...rows, ...long], width)) expect(line.length).toBeLessThanOrEqual(width);
    }
  });
});

describe("timeStep", () => {
  test.each([
    [15_000, 8, 2_000], // 15 s in at most 8 ticks: every 2 s
    [60_000, 6, 10_000], // a minute in 6: every 10 s
    [3 * 3_600_000, 7, 1_800_000], // 3 h in 7: every 30 min
    [1e12, 5, 86_400_000], // beyond the table: a day
  ])("%d ms in at most %d ticks: %d ms", (span, ticks, step) => {
    expect(timeStep(span, ticks)).toBe(step);
  });
});
