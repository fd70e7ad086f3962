// Pure terminal charts: the tokens available over time as an area of block characters, with a
// lane of event marks per kind (admitted, reserved, ran, refused) under it and a time axis.
// Output is a list of lines no wider than the width asked for, with ANSI colour only on request.
import { duration, timeStep } from "./format.js";
import { MARK_KINDS, type ChartData, type MarkKind } from "./types.js";

/** How to draw: total width in columns (≥ 40), plot rows, and whether to use ANSI colour. */
export type ChartOptions = { width: number; height: number; color: boolean };

/** Lower blocks by eighths: index k is a cell filled k/8 from the bottom. */
const EIGHTHS = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"] as const;
/** Label column: 7 characters, a space, then the axis. */
const LABEL = 7;
const PREFIX = LABEL + 2;
/** Right of the plot: a lane's total count. */
const SUFFIX = 7;

/** ANSI colours for the parts of a chart. */
const COLORS = {
  area: "\x1b[36m",
  debt: "\x1b[33m",
  dim: "\x1b[2m",
  bold: "\x1b[1m",
  admitted: "\x1b[32m",
  reserved: "\x1b[33m",
  ran: "\x1b[36m",
  refused: "\x1b[31m",
} as const;
const RESET = "\x1b[0m";

/** Each lane's label, at most {@link LABEL} characters. */
export const LANE_LABELS: Record<MarkKind, string> = {
  admitted: "ok",
  reserved: "reserve",
  ran: "ran",
  refused: "refused",
};

/** The width of a line as a terminal shows it: ANSI colour codes take no columns. */
export function visibleWidth(line: string): number {
  return [...line.replace(/\x1b\[[0-9;]*m/g, "")].length;
}

/** Formats an axis value compactly: 3, 0.5, 1.5k, 40k, -200k, 1.2M. */
export function compact(x: number): string {
  const a = Math.abs(x);
  const sign = x < 0 ? "-" : "";
  const trim = (s: string) => s.replace(/\.0$/, "");
  if (a >= 1e6) return `${sign}${trim((a / 1e6).toFixed(1))}M`;
  if (a >= 1e4) return `${sign}${Math.round(a / 1e3)}k`;
  if (a >= 1e3) return `${sign}${trim((a / 1e3).toFixed(1))}k`;
  if (Number.isInteger(x)) return String(x);
  return `${sign}${trim(a.toFixed(a < 10 ? 1 : 0))}`;
}

/**
 * The vertical scale: `rows` rows of `step` tokens each, `above` of them above zero (the rest
 * below), so zero always falls on a row boundary and both signs share one step.
 */
export type Scale = { step: number; above: number; rows: number };

/** Chooses the scale that fits [lo, hi] (lo ≤ 0 ≤ hi) in `rows` rows with the smallest step. */
export function scaleFor(lo: number, hi: number, rows: number): Scale {
  const top = hi > 0 ? hi : lo < 0 ? 0 : 1;
  if (!(lo < 0)) return { step: top / rows, above: rows, rows };
  if (!(top > 0)) return { step: -lo / rows, above: 0, rows };
  let best: Scale = { step: Infinity, above: 1, rows };
  for (let above = 1; above < rows; above++) {
    const step = Math.max(top / above, -lo / (rows - above));
    if (step < best.step) best = { step, above, rows };
  }
  return best;
}

/** The glyph of one cell of the area: row `r` (0 at the top) of column value `v`. */
export function cellGlyph(v: number, r: number, scale: Scale): string {
  const hi = (scale.above - r) * scale.step; // the cell's top edge, in tokens
  const lo = hi - scale.step;
  if (lo >= 0) {
    // Above zero: filled from the bottom up to v.
    const eighths = Math.round((8 * Math.min(Math.max(v - lo, 0), scale.step)) / scale.step);
    return EIGHTHS[eighths]!;
  }
  // Below zero: filled from the top down to v (reserved tokens, a debt).
  const fill = Math.min(Math.max(hi - v, 0), scale.step) / scale.step;
  if (fill >= 7 / 8) return "█";
  if (fill >= 1 / 2) return "▀";
  if (fill >= 1 / 8) return "▔";
  return " ";
}

/** The value of each of `width` columns: the mean of the samples in it, else the last one before. */
export function columnValues(data: ChartData, width: number): number[] {
  const span = Math.max(1, data.end - data.start);
  const sums = new Array<number>(width).fill(0);
  const counts = new Array<number>(width).fill(0);
  const points = [...data.points].sort((a, b) => a.at - b.at);
  for (const p of points) {
    const c = Math.floor(((p.at - data.start) / span) * width);
    if (c < 0 || c >= width) continue;
    sums[c]! += p.value;
    counts[c]! += 1;
  }
  const out: number[] = [];
  let last = points.find((p) => p.at <= data.start)?.value ?? points[0]?.value ?? 0;
  for (let c = 0; c < width; c++) {
    if (counts[c]! > 0) last = sums[c]! / counts[c]!;
    out.push(last);
  }
  return out;
}

/** How many marks of each kind fall in each of `width` columns. */
export function laneCounts(data: ChartData, width: number): Map<MarkKind, number[]> {
  const span = Math.max(1, data.end - data.start);
  const lanes = new Map<MarkKind, number[]>();
  for (const m of data.marks) {
    const lane = lanes.get(m.kind) ?? new Array<number>(width).fill(0);
    const c = Math.min(width - 1, Math.max(0, Math.floor(((m.at - data.start) / span) * width)));
    lane[c]! += 1;
    lanes.set(m.kind, lane);
  }
  return lanes;
}

/** The time axis: a rule with ticks, and relative time labels under them ("0s", "30s", "1m"). */
export function timeAxis(start: number, end: number, width: number): [string, string] {
  const span = Math.max(1, end - start);
  const perColumn = span / width;
  // Ticks at least 10 columns apart, so their labels fit between them.
  const step = timeStep(span, width / 10);
  const rule = new Array<string>(width).fill("─");
  let labels = "";
  for (let k = 0; k * step <= span; k++) {
    const c = Math.round((k * step) / perColumn);
    if (c >= width) break;
    rule[c] = "┬";
    const text = duration(k * step);
    // A label starts at its tick; one that would touch the previous one, or overflow, is left out.
    if (c >= labels.length + (labels.length === 0 ? 0 : 1) && c + text.length <= width + SUFFIX) {
      labels = labels.padEnd(c) + text;
    }
  }
  return [`${" ".repeat(PREFIX - 1)}└${rule.join("")}`, `${" ".repeat(PREFIX)}${labels}`.trimEnd()];
}

/**
 * Renders a chart as lines at most `opts.width` columns wide: a title, the area of tokens
 * available (rows of eighth blocks; below zero, reserved tokens hang from the zero line), the
 * time axis, then one lane per kind of mark, each column's bar as tall as its share of the lane's
 * busiest column, with the lane's total at the right.
 */
export function renderChart(data: ChartData, opts: ChartOptions): string[] {
  const paint = (color: keyof typeof COLORS, s: string) => (opts.color && s.trim() !== "" ? `${COLORS[color]}${s}${RESET}` : s);
  const width = Math.max(20, opts.width - PREFIX - SUFFIX);
  const rows = Math.max(2, opts.height);
  const values = columnValues(data, width);
  // The floor (minus maxReserved) is left out: eight rows can't spare the room for it.
  const lo = Math.min(0, ...values);
  const hi = Math.max(data.capacity, ...values);
  const scale = scaleFor(lo, hi, rows);
  const lines: string[] = [paint("bold", data.title)];
  for (let r = 0; r < rows; r++) {
    let label = "";
    // The top and bottom rows are labelled with the extremes they hold (the capacity, the
    // deepest debt), which read better than the rows' edges.
    if (r === 0) label = compact(hi);
    else if (r === scale.above && scale.above > 0) label = "0";
    else if (r === rows - 1) label = compact(lo);
    const fill: keyof typeof COLORS = r >= scale.above ? "debt" : "area";
    // Runs of cells of one colour are painted together, to keep the escape codes few.
    const runs: { color: keyof typeof COLORS; text: string }[] = [];
    for (const v of values) {
      let glyph = cellGlyph(v, r, scale);
      let color: keyof typeof COLORS = fill;
      // The first row under zero shows the zero line where nothing hangs from it.
      if (glyph === " " && r === scale.above && scale.above > 0) {
        glyph = "▔";
        color = "dim";
      }
      const last = runs[runs.length - 1];
      if (last !== undefined && last.color === color) last.text += glyph;
      else runs.push({ color, text: glyph });
    }
    const tail = runs[runs.length - 1];
    if (tail !== undefined) tail.text = tail.text.trimEnd();
    const cells = runs.map((run) => paint(run.color, run.text)).join("");
    lines.push(`${label.padStart(LABEL)} ${label === "" ? "│" : "┤"}${cells}`.trimEnd());
  }
  lines.push(...timeAxis(data.start, data.end, width));
  const lanes = laneCounts(data, width);
  for (const kind of MARK_KINDS) {
    const lane = lanes.get(kind);
    if (lane === undefined) continue;
    const most = Math.max(...lane);
    const bars = lane.map((n) => (n === 0 ? " " : EIGHTHS[Math.max(1, Math.round((8 * n) / most))]!)).join("");
    const total = lane.reduce((s, n) => s + n, 0);
    lines.push(`${LANE_LABELS[kind].padStart(LABEL)}  ${paint(kind, bars)}${compact(total).padStart(SUFFIX)}`);
  }
  return lines;
}
