// The Monitor chart's axes and marks, as plain data: a time axis whose unit follows the span
// shown (seconds up to days), tick labels kept inside the plot and apart from each other, and
// requests with the same outcome drawn on the same spot counted as one mark. Pure.
import { formatIn, unitFor, type TimeUnit } from "./format.js";
import { ticks, type Mark, type Scale } from "./model.js";

/** One tick of the time axis: instant `t` (ms) and its label, relative to the origin. */
export type TimeTick = { t: number; label: string };

/**
 * timeTicks returns about `about` ticks covering [from, to] (instants, ms), labelled relative to
 * `origin` in the unit the span calls for, at round values of that unit.
 */
export function timeTicks(from: number, to: number, origin: number, about: number): { unit: TimeUnit; ticks: TimeTick[] } {
  const unit = unitFor(to - from);
  const values = ticks((from - origin) / unit.ms, (to - origin) / unit.ms, about);
  return {
    unit,
    ticks: values.map((v) => ({ t: origin + v * unit.ms, label: formatIn(v * unit.ms, unit) })),
  };
}

/** A label placed on an axis: where its anchor is and which side of the text that is. */
export type PlacedLabel = { x: number; text: string; anchor: "start" | "middle" | "end" };

/**
 * placeLabels lays out labels centred under their ticks at `x`, moving the anchor of one that would
 * cross `left` or `right` to that edge's side (so it reads inward from its tick), and dropping any
 * that would come closer than `gap` to the label kept before it. Widths are estimated at
 * `charWidth` per character.
 */
export function placeLabels(
  labels: readonly { x: number; text: string }[],
  left: number,
  right: number,
  charWidth: number,
  gap = 6,
): PlacedLabel[] {
  const out: PlacedLabel[] = [];
  let end = -Infinity;
  for (const { x, text } of [...labels].sort((a, b) => a.x - b.x)) {
    const w = text.length * charWidth;
    let anchor: PlacedLabel["anchor"] = "middle";
    let x0 = x - w / 2;
    if (x0 < left) {
      anchor = "start";
      x0 = x;
    } else if (x + w / 2 > right) {
      anchor = "end";
      x0 = x - w;
    }
    if (x0 < left - 0.5 || x0 + w > right + 0.5 || x0 < end + gap) continue;
    out.push({ x, text, anchor });
    end = x0 + w;
  }
  return out;
}

/** A chart mark with its height: the tokens it is drawn at (see `Mark.v`). */
export type PlacedMark = Mark & { v: number };

/** A chart mark standing for `count` requests drawn on the same spot, with the same outcome. */
export type GroupedMark = PlacedMark & { count: number; labels: string[] };

/**
 * groupMarks merges marks that would be drawn on top of each other into one, counting them, so
 * three refusals at once read "×3": marks with the same outcome placed by `scale` less than a
 * pixel from a group's first mark, across and up. The instant alone can't say that: a burst's
 * requests are decided a ms or two apart (two to a ms, as a deployment's commits move its clock),
 * a small fraction of a pixel on a chart of seconds, while on a chart of ms they stand apart.
 * Order is kept: a group sits where its first mark was.
 */
export function groupMarks(marks: readonly PlacedMark[], scale: Scale): GroupedMark[] {
  const groups: { x: number; y: number; mark: GroupedMark }[] = [];
  for (const m of marks) {
    const x = scale.x(m.t);
    const y = scale.y(m.v);
    const g = groups.find((g) => g.mark.outcome === m.outcome && Math.abs(g.x - x) < 1 && Math.abs(g.y - y) < 1);
    if (g === undefined) groups.push({ x, y, mark: { ...m, count: 1, labels: [m.label] } });
    else {
      g.mark.count += 1;
      g.mark.labels.push(m.label);
    }
  }
  return groups.map((g) => g.mark);
}
