// The demo's HTML report (pure): one self-contained page, inline CSS and SVG, no scripts and no
// network assets, with a chart, a summary table and the checks for each scenario.
import { compact } from "./chart.js";
import { duration, timeStep } from "./format.js";
import { MARK_KINDS, type ChartData, type MarkKind, type ScenarioResult } from "./types.js";

/** What the page says about the run as a whole. */
export type ReportMeta = {
  /** The command that produced it, e.g. "npm run demo -- --fast". */
  command: string;
  seed: number;
  /** The simulated clock's start (ms since the epoch). */
  clockStart: number;
  /** Real time the whole run took, ms. */
  wallMs: number;
  /** convex-test calls made. */
  calls: number;
};

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

const LANE_COLORS: Record<MarkKind, string> = {
  admitted: "#1a9850",
  reserved: "#d68a00",
  ran: "#2b83ba",
  refused: "#d73027",
};
/** What each lane's total says, at the lane's end: "19 admitted". */
const LANE_LABELS: Record<MarkKind, string> = { admitted: "admitted", reserved: "reserved", ran: "ran", refused: "refused" };
/** What each lane holds, in the legend and tooltips. */
const LANE_NAMES: Record<MarkKind, string> = {
  admitted: "admitted now",
  reserved: "reserved for later",
  ran: "scheduled work ran",
  refused: "refused",
};

/**
 * A chart's layout, in viewBox units. The SVG scales to its column (CSS `width: 100%`), and its
 * text (12 units, see {@link CSS}) with it, so each chart is drawn twice and the page shows the
 * one that keeps the text 11 px or more: "wide" (720 units) in a column at least 720 px wide,
 * "narrow" (360 units, at most 520 px wide) below. Wide, each lane's total sits in the right
 * margin; narrow, above its lane. The left margin holds the token labels and the axis title.
 */
export type Layout = "wide" | "narrow";

const LAYOUTS = {
  wide: { width: 720, left: 84, right: 140, top: 26, plot: 200, axis: 30, header: 24, lane: 24, ticks: 6 },
  narrow: { width: 360, left: 62, right: 10, top: 24, plot: 150, axis: 30, header: 22, lane: 36, ticks: 3 },
} as const;
/** The least distance between two token labels: a line of text. */
const LABEL_GAP = 18;
/** The charts' text size, in viewBox units (see {@link CSS}). */
const FONT = 12;
/** Below the plot, room for the note on the reservation floor (the lowest the curve can reach). */
const NOTE_BAND = 18;

/** A number for an SVG attribute: at most two decimals. */
const f = (x: number) => String(Math.round(x * 100) / 100);

/**
 * subjectOf names what a chart is about from its title ("tokens of sendMessage for alice" →
 * "sendMessage for alice"; "free slots of …" likewise), without a note in parentheses that explains the chart ("below 0:
 * reserved ahead"); a parenthesis naming whose it is ("everyone's") stays.
 */
export function subjectOf(title: string): string {
  const subject = title.replace(/^(tokens|free slots) of /, "");
  return subject.replace(/\s*\([^)]*:[^)]*\)\s*$/, "");
}

/**
 * Renders a scenario's chart as an inline SVG: the tokens available as a stepped area (below zero,
 * reserved tokens, in another colour) with a labelled token axis, the capacity (and the
 * reservation floor) as dashed lines, a time axis, and one lane per kind of mark with bars as tall
 * as the events they hold, each ending in its total ("19 admitted"), under a line saying whose
 * requests they are. `id` makes the SVG's internal ids unique on the page.
 */
export function svgChart(data: ChartData, id: string, layout: Layout = "wide"): string {
  const G = LAYOUTS[layout];
  const points = [...data.points].sort((a, b) => a.at - b.at);
  const values = points.map((p) => p.value);
  const lo = Math.min(0, data.floor ?? 0, ...values);
  const hi = Math.max(data.capacity, ...values);
  const span = Math.max(1, data.end - data.start);
  const plotWidth = G.width - G.left - G.right;
  const x = (t: number) => G.left + ((t - data.start) / span) * plotWidth;
  const y = (v: number) => G.top + ((hi - v) / (hi - lo || 1)) * G.plot;
  const kinds = MARK_KINDS.filter((k) => data.marks.some((m) => m.kind === k));
  // The floor's note goes under the plot, where the curve never is, and the axis under the note.
  const band = data.floor !== undefined ? NOTE_BAND : 0;
  const axisY = G.top + G.plot + band;
  const lanesTop = axisY + G.axis + (kinds.length > 0 ? G.header : 0);
  const height = lanesTop + kinds.length * G.lane + 6;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${G.width} ${height}" class="chart ${layout}" role="img" aria-label="${escapeHtml(data.title)}">`,
  );
  // Above zero and below zero get their own clip, so one area takes two colours.
  parts.push(
    `<defs><clipPath id="${id}-up"><rect x="${G.left}" y="${G.top}" width="${plotWidth}" height="${f(y(0) - G.top)}"/></clipPath>` +
      `<clipPath id="${id}-down"><rect x="${G.left}" y="${f(y(0))}" width="${plotWidth}" height="${f(G.top + G.plot - y(0))}"/></clipPath></defs>`,
  );
  parts.push(`<rect class="plot" x="${G.left}" y="${G.top}" width="${plotWidth}" height="${G.plot}" fill="#fafafa" stroke="#ddd"/>`);
  // The token axis: its title, then reference lines with labels (the capacity, zero, the floor).
  parts.push(
    `<text transform="translate(4 ${f(G.top + G.plot / 2)}) rotate(-90)" text-anchor="middle" dominant-baseline="hanging" class="ax title">${escapeHtml(data.axis ?? "tokens available")}</text>`,
  );
  // In order of importance: a label closer than a line of text to one placed before it is left out
  // (its line stays), so no two overlap.
  const refs: { v: number; label: string; dash: boolean }[] = [{ v: 0, label: "0", dash: false }];
  refs.push({ v: data.capacity, label: compact(data.capacity), dash: data.capacity !== hi });
  if (data.floor !== undefined) refs.push({ v: data.floor, label: compact(data.floor), dash: data.floor !== lo });
  if (hi !== data.capacity) refs.push({ v: hi, label: compact(hi), dash: false });
  if (lo < 0 && lo !== data.floor) refs.push({ v: lo, label: compact(lo), dash: false });
  const labelled: number[] = [];
  for (const r of refs) {
    parts.push(
      `<line x1="${G.left}" x2="${G.left + plotWidth}" y1="${f(y(r.v))}" y2="${f(y(r.v))}" stroke="${r.v === 0 ? "#888" : "#ccc"}"${r.dash ? ' stroke-dasharray="4 3"' : ""}/>`,
    );
    if (labelled.some((at) => Math.abs(at - y(r.v)) < LABEL_GAP)) continue;
    labelled.push(y(r.v));
    parts.push(
      `<text x="${G.left - 6}" y="${f(y(r.v))}" text-anchor="end" dominant-baseline="middle" class="ax">${escapeHtml(r.label)}</text>`,
    );
  }
  // Over the capacity line, where the curve stays at or under it: the rightmost such stretch (the
  // curve, stepped, holds each sample's value until the next). Nowhere: the token label says it.
  const noteWidth = "capacity".length * FONT * 0.62 + 4;
  const valuesIn = (a: number, b: number) => {
    const t = (px: number) => data.start + ((px - G.left) / plotWidth) * span;
    const held = points.filter((p) => p.at <= t(a)).at(-1);
    return [...(held === undefined ? [] : [held.value]), ...points.filter((p) => p.at > t(a) && p.at <= t(b)).map((p) => p.value)];
  };
  for (let end = G.left + plotWidth - 4; end - noteWidth >= G.left; end -= 8) {
    if (valuesIn(end - noteWidth, end).every((v) => v <= data.capacity)) {
      parts.push(`<text x="${f(end)}" y="${f(y(data.capacity) - 4)}" text-anchor="end" class="note">capacity</text>`);
      break;
    }
  }
  if (data.floor !== undefined) {
    // Under the floor line: the curve never goes below it, so the note never crosses the curve.
    parts.push(
      `<text x="${G.left + plotWidth - 4}" y="${f(y(data.floor) + 4)}" text-anchor="end" dominant-baseline="hanging" class="note">most that may be reserved</text>`,
    );
  }
  // The stepped area: each sample holds until the next.
  if (points.length > 0) {
    const first = points[0]!;
    let steps = "";
    for (let i = 1; i < points.length; i++) steps += `H${f(x(points[i]!.at))}V${f(y(points[i]!.value))}`;
    steps += `H${f(x(Math.max(data.end, points[points.length - 1]!.at)))}`;
    const area = `M${f(x(first.at))},${f(y(0))}V${f(y(first.value))}${steps}V${f(y(0))}Z`;
    parts.push(`<path d="${area}" fill="#9ecae1" fill-opacity="0.6" clip-path="url(#${id}-up)"/>`);
    parts.push(`<path d="${area}" fill="#fdae61" fill-opacity="0.6" clip-path="url(#${id}-down)"/>`);
    parts.push(`<path d="M${f(x(first.at))},${f(y(first.value))}${steps}" fill="none" stroke="#3182bd" stroke-width="1.2"/>`);
  }
  // The time axis: the first label reads rightwards from the origin, the last leftwards from the
  // end, so neither leaves the plot's span.
  const step = timeStep(span, G.ticks);
  const last = Math.floor(span / step);
  for (let k = 0; k <= last; k++) {
    const tx = x(data.start + k * step);
    const anchor = k === 0 ? "start" : k === last && tx > G.left + plotWidth - 24 ? "end" : "middle";
    parts.push(
      `<line x1="${f(tx)}" x2="${f(tx)}" y1="${axisY}" y2="${axisY + 4}" stroke="#888"/>`,
      `<text x="${f(tx)}" y="${axisY + 6}" text-anchor="${anchor}" dominant-baseline="hanging" class="ax">${escapeHtml(duration(k * step))}</text>`,
    );
  }
  // One lane per kind of mark: events binned by 4 units, each bar as tall as its share of the
  // busiest, under a line saying whose requests they are, each with its total at the end.
  if (kinds.length > 0) {
    parts.push(
      `<text x="${G.left}" y="${axisY + G.axis + G.header - 6}" class="ax lanes">${
        // Narrow, a long name wouldn't fit; the legend under the chart names it.
        layout === "wide" ? `requests to ${escapeHtml(subjectOf(data.title))}, by outcome:` : "requests, by outcome:"
      }</text>`,
    );
  }
  const bins = Math.floor(plotWidth / 4);
  kinds.forEach((kind, lane) => {
    const counts = new Array<number>(bins).fill(0);
    for (const m of data.marks) {
      if (m.kind !== kind) continue;
      const b = Math.min(bins - 1, Math.max(0, Math.floor(((m.at - data.start) / span) * bins)));
      counts[b]! += 1;
    }
    const most = Math.max(...counts);
    const total = counts.reduce((s, n) => s + n, 0);
    const base = lanesTop + (lane + 1) * G.lane - 4;
    // Narrow, the total sits over the lane's bars, which keep the lane's lower part.
    const barRoom = layout === "wide" ? G.lane - 8 : G.lane - 22;
    parts.push(`<line x1="${G.left}" x2="${G.left + plotWidth}" y1="${base}" y2="${base}" stroke="#eee"/>`);
    let bars = "";
    counts.forEach((n, b) => {
      if (n === 0) return;
      const h = 3 + (barRoom * n) / most;
      bars += `<rect x="${f(G.left + b * 4)}" y="${f(base - h)}" width="3" height="${f(h)}"/>`;
    });
    parts.push(`<g fill="${LANE_COLORS[kind]}"><title>${escapeHtml(`${LANE_NAMES[kind]}: ${total}`)}</title>${bars}</g>`);
    const [tx, ty] = layout === "wide" ? [G.left + plotWidth + 6, base] : [G.left, base - G.lane + 16];
    parts.push(
      `<text x="${tx}" y="${ty}" class="ax total"><tspan class="n">${escapeHtml(compact(total))}</tspan> ${escapeHtml(LANE_LABELS[kind])}</text>`,
    );
  });
  parts.push(`</svg>`);
  return parts.join("\n");
}

/**
 * The page's styles. Charts fill their column and scale with it (viewBox); their text is 12
 * viewBox units, and the layout shown (see {@link Layout}) keeps a unit at 0.92 px or more, so
 * text stays 11 px or more from a 390 px phone to a desktop.
 */
const CSS = `
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 0; background: #fff; }
main { max-width: 960px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 6px; border-top: 1px solid #e5e5e5; padding-top: 20px; }
.meta { color: #666; font-size: 13px; overflow-wrap: anywhere; }
.status { display: inline-block; padding: 2px 10px; border-radius: 10px; font-weight: 600; font-size: 13px; }
.pass { background: #e3f4e8; color: #17693a; } .fail { background: #fbe3e1; color: #a1261b; }
p.about { margin: 4px 0; color: #333; overflow-wrap: anywhere; }
svg.chart { display: block; margin: 12px 0 4px; width: 100%; height: auto; font-family: system-ui, sans-serif; font-size: 12px; }
svg.chart.narrow { display: none; max-width: 520px; }
@media (max-width: 760px) { svg.chart.wide { display: none; } svg.chart.narrow { display: block; } }
svg .ax { fill: #555; } svg .note { fill: #767676; font-style: italic; } svg .total .n { font-weight: 700; fill: #222; }
svg .title, svg .lanes { fill: #444; }
.legend { font-size: 12px; color: #555; margin: 0 0 10px; }
.legend span { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; vertical-align: -1px; }
table { border-collapse: collapse; font-size: 14px; margin: 8px 0; }
td { padding: 3px 14px 3px 0; vertical-align: top; } td.v { font-variant-numeric: tabular-nums; white-space: nowrap; font-weight: 600; }
td.n { color: #666; font-size: 13px; }
ul.checks { list-style: none; padding: 0; margin: 8px 0; font-size: 14px; }
ul.checks li::before { display: inline-block; width: 1.4em; font-weight: 700; }
ul.checks li.ok::before { content: "✓"; color: #1a9850; } ul.checks li.bad::before { content: "✗"; color: #d73027; }
ul.checks .d { color: #666; }
@media (max-width: 640px) {
  main { padding: 16px 12px 32px; }
  table, tbody, tr, td { display: block; }
  tr { display: grid; grid-template-columns: auto 1fr; column-gap: 12px; margin: 0 0 8px; }
  td { padding: 0; } td.v { white-space: normal; } td.n { grid-column: 1 / -1; }
}
`;

/** Renders the whole report page for `results`. */
export function renderReport(results: readonly ScenarioResult[], meta: ReportMeta): string {
  const checks = results.flatMap((r) => r.checks);
  const failed = checks.filter((c) => !c.ok);
  const status =
    failed.length === 0
      ? `<span class="status pass">all ${checks.length} checks passed</span>`
      : `<span class="status fail">${failed.length} of ${checks.length} checks failed</span>`;
  const sections = results.map((r, i) => {
    const rows = r.summary
      .map(
        (s) =>
          `<tr><td>${escapeHtml(s.label)}</td><td class="v">${escapeHtml(s.value)}</td><td class="n">${escapeHtml(s.note ?? "")}</td></tr>`,
      )
      .join("\n");
    const list = r.checks
      .map((c) => `<li class="${c.ok ? "ok" : "bad"}">${escapeHtml(c.name)} <span class="d">— ${escapeHtml(c.detail)}</span></li>`)
      .join("\n");
    // One chart, or several on the same time axis (the same traffic under other limits).
    const charts = [r.chart, ...(r.alongside ?? [])]
      .map((chart, j) => {
        const legend = MARK_KINDS.filter((k) => chart.marks.some((m) => m.kind === k))
          .map((k) => `<span style="background:${LANE_COLORS[k]}"></span>${LANE_NAMES[k]}`)
          .join("");
        const id = j === 0 ? `c${i}` : `c${i}-${j}`;
        return `${svgChart(chart, id, "wide")}
${svgChart(chart, `${id}n`, "narrow")}
<p class="legend">${escapeHtml(chart.title)}; under it, the requests to ${escapeHtml(subjectOf(chart.title))}, one lane per outcome, with its total:${legend}</p>`;
      })
      .join("\n");
    return `<section id="${escapeHtml(r.id)}-${i}">
<h2>${i + 1}. ${escapeHtml(r.title)}</h2>
${r.about.map((a) => `<p class="about">${escapeHtml(a)}</p>`).join("\n")}
${charts}
<table>
${rows}
</table>
<ul class="checks">
${list}
</ul>
</section>`;
  });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>convex-rate-limiter demo report</title>
<style>${CSS}</style>
</head>
<body>
<main>
<h1>convex-rate-limiter: demo report</h1>
<p class="meta">${escapeHtml(meta.command)} · seed ${meta.seed} · simulated clock from ${escapeHtml(new Date(meta.clockStart).toISOString())} · ${meta.calls.toLocaleString("en-US")} convex-test calls in ${escapeHtml(duration(meta.wallMs))} real time</p>
<p>The example app's own Convex functions, run in-process on convex-test with a simulated clock. Each chart shows the tokens available over simulated time; below zero, tokens reserved ahead. ${status}</p>
${sections.join("\n")}
</main>
</body>
</html>
`;
}
