// Pure terminal output of the demo: each scenario's heading, description, chart, summary and
// checks, and the closing lines; every line fits the width asked for.
import { renderChart } from "./chart.js";
import { duration, num, summaryLines, wrap } from "./format.js";
import type { Check, ScenarioResult } from "./types.js";

/** How to print: width in columns, colour or not. */
export type TextOptions = { width: number; color: boolean };

const GREEN = "\x1b[32m";
const RED = "\x1b[31m";
const BOLD = "\x1b[1m";
const DIM = "\x1b[2m";
const RESET = "\x1b[0m";

/** Whether to colour a stream: only a terminal, and only when NO_COLOR is unset or empty. */
export function useColor(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? "") === "";
}

/** A check as one or more lines: "  ✓ name: detail", wrapped to the width. */
export function checkLines(c: Check, opts: TextOptions): string[] {
  const mark = c.ok ? "✓" : "✗";
  const painted = opts.color ? `${c.ok ? GREEN : RED}${mark}${RESET}` : mark;
  const lines = wrap(`${c.name}: ${c.detail}`, opts.width - 4);
  return lines.map((l, i) => (i === 0 ? `  ${painted} ${l}` : `    ${l}`));
}

/** The block printed for one scenario: `index` counts from 1 out of `count`. */
export function scenarioText(r: ScenarioResult, index: number, count: number, opts: TextOptions): string[] {
  // "── 1/4 title ───", the title wrapped at spaces under itself when the width is too narrow for it.
  const [first = "", ...rest] = wrap(`${index}/${count} ${r.title}`, opts.width - 5);
  const head = `── ${first} `;
  const heading = [head + "─".repeat(Math.max(0, opts.width - head.length)), ...rest.map((l) => `   ${l}`)];
  const lines = heading.map((l) => (opts.color ? `${BOLD}${l}${RESET}` : l));
  for (const a of r.about) lines.push(...wrap(a, opts.width));
  lines.push("");
  for (const chart of [r.chart, ...(r.alongside ?? [])]) {
    lines.push(...renderChart(chart, { width: opts.width, height: 8, color: opts.color }));
    lines.push("");
  }
  lines.push(...summaryLines(r.summary, opts.width));
  lines.push("");
  for (const c of r.checks) lines.push(...checkLines(c, opts));
  const took = `  ${num(r.calls)} convex-test calls in ${duration(r.wallMs)}`;
  lines.push(opts.color ? `${DIM}${took}${RESET}` : took);
  lines.push("");
  return lines;
}

/**
 * The closing lines: checks passed or failed (listing the failures), the calls made and the real
 * time the scenarios took (the sum of each one's, never more than `run.wallMs`), and the whole
 * run's real time.
 */
export function closingText(
  results: readonly ScenarioResult[],
  run: { wallMs: number; report: string | null },
  opts: TextOptions,
): string[] {
  const checks = results.flatMap((r) => r.checks.map((c) => ({ scenario: r.title, check: c })));
  const failed = checks.filter((c) => !c.check.ok);
  const calls = results.reduce((s, r) => s + r.calls, 0);
  const busy = results.reduce((s, r) => s + r.wallMs, 0);
  const lines: string[] = [];
  if (failed.length === 0) {
    const text = `all ${checks.length} checks passed`;
    lines.push(opts.color ? `${GREEN}${text}${RESET}` : text);
  } else {
    const text = `${failed.length} of ${checks.length} checks FAILED:`;
    lines.push(opts.color ? `${RED}${text}${RESET}` : text);
    for (const f of failed) {
      lines.push(...wrap(`${f.scenario}: ${f.check.name}: ${f.check.detail}`, opts.width - 4).map((l, i) => (i === 0 ? `  ✗ ${l}` : `    ${l}`)));
    }
  }
  // The scenarios' real time (each scenario's own, added up: they run one after another), then the
  // whole run's, which also loads the app and writes the report.
  const rate = busy > 0 ? ` (${num((calls / busy) * 1000)} per second)` : "";
  lines.push(
    ...wrap(`${num(calls)} convex-test calls in ${duration(busy)} of scenarios${rate}; ${duration(run.wallMs)} in all, loading the app included`, opts.width),
  );
  if (run.report !== null) lines.push(...wrap(`report: ${run.report}`, opts.width));
  return lines;
}
