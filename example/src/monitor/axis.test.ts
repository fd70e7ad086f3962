// The Monitor's axes and marks (axis.ts) and number formats (format.ts): table-driven, on explicit
// spans and positions.
import { describe, expect, it } from "vitest";
import { groupMarks, placeLabels, timeTicks } from "./axis.js";
import { formatDuration, formatTokens, unitFor } from "./format.js";
import type { Mark } from "./model.js";

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;

describe("unitFor", () => {
  it.each([
    [0, "s"],
    [90 * S, "s"], // a minute and a half still reads in seconds
    [3 * MIN, "min"],
    [2.9 * H, "min"],
    [3 * H, "h"],
    [3 * D, "d"],
    [3650 * D, "d"], // no unit above days
  ])("a span of %d ms is shown in %s", (span, suffix) => {
    expect(unitFor(span).suffix).toBe(suffix);
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0 s"],
    [1500, "1.5 s"],
    [1234, "1.234 s"], // seconds to the ms
    [90 * S, "90 s"],
    [150 * S, "2.5 min"],
    [2 * H, "2 h"],
    [12 * MIN, "12 min"],
    [5.5 * H, "5.5 h"],
    [2_000_000 * S, "23.15 d"],
    [-3 * S, "-3 s"],
  ])("%d ms reads %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe("formatTokens", () => {
  it.each([
    [5, "5"],
    [0.0049, "0"], // rounds, never "-0"
    [-0.001, "0"],
    [2.456, "2.46"],
    [40_000, "40,000"],
  ])("%d reads %s", (v, text) => {
    expect(formatTokens(v)).toBe(text);
  });
});

describe("timeTicks", () => {
  it("labels a short span in seconds, relative to the origin", () => {
    const { unit, ticks } = timeTicks(10 * S, 20 * S, 10 * S, 5);
    expect(unit.suffix).toBe("s");
    expect(ticks.map((t) => t.label)).toEqual(["0 s", "2 s", "4 s", "6 s", "8 s", "10 s"]);
    expect(ticks[1]?.t).toBe(12 * S);
  });

  it.each([
    [20 * MIN, "min", ["0 min", "5 min", "10 min", "15 min", "20 min"]],
    [10 * H, "h", ["0 h", "2 h", "4 h", "6 h", "8 h", "10 h"]],
    [23.15 * D, "d", ["0 d", "5 d", "10 d", "15 d", "20 d"]],
  ])("switches to the unit a span of %d ms calls for (%s)", (span, suffix, labels) => {
    const { unit, ticks } = timeTicks(0, span, 0, 5);
    expect(unit.suffix).toBe(suffix);
    expect(ticks.map((t) => t.label)).toEqual(labels);
  });
});

describe("placeLabels", () => {
  const place = (xs: number[], text = "10 s") => placeLabels(xs.map((x) => ({ x, text })), 50, 450, 6);

  it("centres labels that fit", () => {
    expect(place([100, 250])).toEqual([
      { x: 100, text: "10 s", anchor: "middle" },
      { x: 250, text: "10 s", anchor: "middle" },
    ]);
  });

  it("reads inward at the edges, so no label crosses the plot's sides (or the y axis at the origin)", () => {
    expect(place([50, 450]).map((l) => l.anchor)).toEqual(["start", "end"]);
  });

  it("drops a label that would touch the one before it", () => {
    // Each is 24 wide: at 100 and 120 they overlap; 160 clears 100's by 36.
    expect(place([100, 120, 160]).map((l) => l.x)).toEqual([100, 160]);
  });

  it("drops a label too wide for the plot", () => {
    expect(placeLabels([{ x: 60, text: "x".repeat(100) }], 50, 450, 6)).toEqual([]);
  });
});

describe("groupMarks", () => {
  const mark = (id: number, t: number, outcome: Mark["outcome"], v?: number): Mark => ({
    id,
    t,
    outcome,
    label: `#${id}`,
    ...(v === undefined ? {} : { v }),
  });

  it("counts marks drawn on the same spot, and keeps others apart", () => {
    const grouped = groupMarks([
      mark(1, 0, "admitted", 4),
      mark(2, 0, "admitted", 3),
      mark(3, 6000, "refused", 0),
      mark(4, 6000, "refused", 0),
      mark(5, 6000, "refused", 0),
      mark(6, 6000, "admitted", 0),
    ]);
    expect(grouped.map((g) => [g.id, g.outcome, g.count])).toEqual([
      [1, "admitted", 1],
      [2, "admitted", 1],
      [3, "refused", 3], // "×3"
      [6, "admitted", 1],
    ]);
    expect(grouped[2]?.labels).toEqual(["#3", "#4", "#5"]);
  });

  it("groups marks read off the curve (no height of their own) by instant", () => {
    expect(groupMarks([mark(1, 5, "refused"), mark(2, 5, "refused")]).map((g) => g.count)).toEqual([2]);
  });
});
