// The Monitor's axes and marks (axis.ts) and number formats (format.ts): table-driven, on explicit
// spans and positions.
import { describe, expect, it } from "vitest";
import { groupMarks, placeLabels, timeTicks, type PlacedMark } from "./axis.js";
import { formatDuration, formatTokens, unitFor } from "./format.js";
import type { Mark, Scale } from "./model.js";

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
  const mark = (id: number, t: number, outcome: Mark["outcome"], v: number): PlacedMark => ({ id, t, outcome, label: `#${id}`, v });
  // 10 px a second across, 20 px a token up: a ms is 0.01 px, a token's thousandth 0.02 px.
  const seconds: Scale = { x: (t) => 64 + t / 100, y: (v) => 200 - 20 * v };
  // 10 px a ms across: the same instants stand apart.
  const ms: Scale = { x: (t) => 64 + 10 * t, y: seconds.y };

  it("counts marks drawn on the same spot, and keeps others apart", () => {
    const grouped = groupMarks(
      [
        mark(1, 0, "admitted", 4),
        mark(2, 0, "admitted", 3), // 20 px lower
        mark(3, 6000, "refused", 0),
        mark(4, 6000, "refused", 0),
        mark(5, 6000, "refused", 0),
        mark(6, 6000, "admitted", 0), // another outcome
      ],
      seconds,
    );
    expect(grouped.map((g) => [g.id, g.outcome, g.count])).toEqual([
      [1, "admitted", 1],
      [2, "admitted", 1],
      [3, "refused", 3], // "×3"
      [6, "admitted", 1],
    ]);
    expect(grouped[2]?.labels).toEqual(["#3", "#4", "#5"]);
  });

  it("counts a burst's refusals a ms apart as one mark on a chart of seconds, and not on a chart of ms", () => {
    // The deployment decides two requests a ms: refusals at 6003, 6003 and 6004 ms, each with the
    // tokens of its own instant (0.0005 a ms): less than a pixel apart either way at 10 px a second.
    const burst = [mark(1, 6003, "refused", 0.0015), mark(2, 6003, "refused", 0.0015), mark(3, 6004, "refused", 0.002)];
    const onSeconds = groupMarks(burst, seconds);
    expect(onSeconds.map((g) => [g.id, g.t, g.count])).toEqual([[1, 6003, 3]]);
    expect(onSeconds[0]?.labels).toEqual(["#1", "#2", "#3"]);
    // At 10 px a ms the third is drawn 10 px to the right: a mark of its own.
    expect(groupMarks(burst, ms).map((g) => [g.id, g.count])).toEqual([
      [1, 2],
      [3, 1],
    ]);
  });

  it("groups within a pixel of a group's first mark, both ways, and no further", () => {
    // The second mark (at 1 ms, 1 token) drawn (x, y) px from the first (at 0, 0 tokens).
    const at = (x: number, y: number): Scale => ({ x: (t) => (t === 0 ? 100 : 100 + x), y: (v) => (v === 0 ? 50 : 50 + y) });
    const pair = [mark(1, 0, "admitted", 0), mark(2, 1, "admitted", 1)];
    expect(groupMarks(pair, at(0.99, -0.99)).map((g) => g.count)).toEqual([2]);
    expect(groupMarks(pair, at(1, 0)).map((g) => g.count)).toEqual([1, 1]);
    expect(groupMarks(pair, at(0, -1)).map((g) => g.count)).toEqual([1, 1]);
    // Measured from the first mark, not the last joined: 0.6 px steps make a pair, then a new mark.
    const steps: Scale = { x: (t) => 100 + 0.6 * t, y: () => 50 };
    const drift = [mark(1, 0, "refused", 0), mark(2, 1, "refused", 0), mark(3, 2, "refused", 0)];
    expect(groupMarks(drift, steps).map((g) => [g.id, g.count])).toEqual([
      [1, 2],
      [3, 1],
    ]);
  });
});
