// The demo's terminal chart (chart.ts): scale, cell glyphs, column values, mark lanes and the time axis, table-driven, and whole charts checked for width and colour.
import { describe, expect, test } from "vitest";
import { cellGlyph, columnValues, compact, laneCounts, renderChart, scaleFor, timeAxis, visibleWidth } from "./chart.js";
import type { ChartData } from "./types.js";

describe("compact", () => {
  test.each([
    [3, "3"], // small whole numbers as they are
    [0.5, "0.5"], // small fractions keep a decimal
    [1500, "1.5k"], // thousands with one decimal
    [40_000, "40k"], // tens of thousands rounded
    [-200_000, "-200k"], // negatives keep their sign
    [1_200_000, "1.2M"], // millions
  ])("%d is %s", (x, text) => {
    expect(compact(x)).toBe(text);
  });
});

describe("scaleFor", () => {
  test("all positive: every row above zero", () => {
    expect(scaleFor(0, 3, 8)).toEqual({ step: 3 / 8, above: 8, rows: 8 });
  });
  test("both signs: zero on a row boundary, the smallest step that fits both", () => {
    // 40k above and 72k below in 8 rows: 3 rows of 14.4k... above (43k ≥ 40k), 5 below (72k).
    const s = scaleFor(-72_000, 40_000, 8);
    expect(s.above).toBe(3);
    expect(s.step).toBeCloseTo(14_400, 6);
    expect(s.step * s.above).toBeGreaterThanOrEqual(40_000);
    expect(s.step * (s.rows - s.above)).toBeGreaterThanOrEqual(72_000);
  });
  test("nothing to show still gets a scale", () => {
    expect(scaleFor(0, 0, 4)).toEqual({ step: 0.25, above: 4, rows: 4 });
  });
});

describe("cellGlyph", () => {
  const scale = { step: 1, above: 2, rows: 4 }; // rows cover [1,2] [0,1] | [-1,0] [-2,-1]
  test.each([
    [2, 0, "█"], // full top row
    [1.5, 0, "▄"], // half of the top row, from the bottom
    [1.5, 1, "█"], // the row below is full
    [0, 1, " "], // nothing at zero
    [-0.5, 2, "▀"], // half a token of debt hangs from the zero line
    [-1, 2, "█"], // a whole row of debt
    [-1.2, 3, "▔"], // a fifth of the next row
    [-1, 3, " "], // nothing below the debt
    [1, 2, " "], // positive values leave the rows under zero empty
  ])("value %d in row %d is %s", (v, r, glyph) => {
    expect(cellGlyph(v, r, scale)).toBe(glyph);
  });
});

const data: ChartData = {
  title: "tokens",
  start: 0,
  end: 100,
  capacity: 10,
  points: [
    { at: 0, value: 10 },
    { at: 10, value: 8 },
    { at: 12, value: 6 },
    { at: 50, value: 0 },
  ],
  marks: [
    { at: 0, kind: "admitted" },
    { at: 10, kind: "admitted" },
    { at: 11, kind: "admitted" },
    { at: 99, kind: "refused" },
    { at: 150, kind: "refused" }, // past the end: clamped into the last column
  ],
};

describe("columnValues and laneCounts", () => {
  test("each column is the mean of its samples, else the last one before", () => {
    // 10 columns of 10 ms: [0,10) has 10; [10,20) has 8 and 6; [50,60) has 0.
    expect(columnValues(data, 10)).toEqual([10, 7, 7, 7, 7, 0, 0, 0, 0, 0]);
  });
  test("marks are counted per column and kind", () => {
    const lanes = laneCounts(data, 10);
    expect(lanes.get("admitted")).toEqual([1, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(lanes.get("refused")).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    expect(lanes.has("ran")).toBe(false);
  });
});

describe("timeAxis", () => {
  test("ticks at round steps with relative labels under them", () => {
    const [rule, labels] = timeAxis(0, 60_000, 60);
    expect(rule.trimStart().startsWith("└┬")).toBe(true);
    // 60 columns of 1 s: ticks every 10 s (10 columns apart).
    expect([...rule].filter((c) => c === "┬")).toHaveLength(6);
    expect(labels.trim().split(/\s+/)).toEqual(["0s", "10s", "20s", "30s", "40s", "50s"]);
  });
});

describe("renderChart", () => {
  test("fits the width, with a lane per kind of mark and its total", () => {
    for (const width of [40, 80, 120]) {
      const lines = renderChart(data, { width, height: 6, color: false });
      for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
      expect(lines.some((l) => l.trimStart().startsWith("ok") && l.trimEnd().endsWith("3"))).toBe(true);
      expect(lines.some((l) => l.trimStart().startsWith("refused") && l.trimEnd().endsWith("2"))).toBe(true);
    }
  });

  test("labels the capacity and zero, and uses no escape codes without colour", () => {
    const lines = renderChart(data, { width: 80, height: 6, color: false });
    expect(lines[0]).toBe("tokens");
    expect(lines[1]!.trimStart().startsWith("10 ┤")).toBe(true);
    expect(lines[6]!.trimStart().startsWith("0 ┤")).toBe(true);
    expect(lines.join("\n")).not.toContain("\x1b[");
  });

  test("with colour, escape codes don't count towards the width", () => {
    const lines = renderChart(data, { width: 80, height: 6, color: true });
    expect(lines.join("\n")).toContain("\x1b[32m"); // admitted in green
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
  });

  test("a debt hangs below a zero line, down to the deepest value", () => {
    const debt: ChartData = { ...data, points: [{ at: 0, value: 10 }, { at: 50, value: -30 }], marks: [] };
    const lines = renderChart(debt, { width: 60, height: 8, color: false });
    const zero = lines.find((l) => l.trimStart().startsWith("0 ┤"));
    expect(zero).toBeDefined();
    expect(zero).toContain("▔"); // the zero line where nothing hangs yet
    expect(lines.find((l) => l.trimStart().startsWith("-30 ┤"))).toContain("█");
  });
});
