// Pure formatting and statistics for the demo's summaries: durations, numbers, percentages, the
// spread of a list of waits, and plain-text key/value blocks that fit an 80-column terminal.

/** Formats a number with thousands separators and a fixed number of decimals. */
export function num(x: number, decimals = 0): string {
  if (!Number.isFinite(x)) return String(x);
  return x.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** Formats a fraction (0.5) as a percentage ("50.0%"). */
export function pct(x: number, decimals = 1): string {
  if (!Number.isFinite(x)) return "n/a";
  return `${(x * 100).toFixed(decimals)}%`;
}

/**
 * Formats a duration in ms for people: "0s", "850ms", "5.2s", "45s", "1m30s", "2h05m".
 * Whole seconds under a minute drop the decimal; minutes and hours drop what is too small to matter.
 */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const sign = ms < 0 ? "-" : "";
  const a = Math.abs(ms);
  if (a === 0) return "0s";
  if (a < 1000) return `${sign}${Math.round(a)}ms`;
  if (a < 60_000) {
    const s = a / 1000;
    return `${sign}${Number.isInteger(s) || s >= 10 ? Math.round(s) : s.toFixed(1)}s`;
  }
  if (a < 3_600_000) {
    const m = Math.floor(a / 60_000);
    const s = Math.round((a - m * 60_000) / 1000);
    // 119.6 s rounds to 2m00s, not 1m60s.
    if (s === 60) return `${sign}${m + 1}m`;
    return s === 0 ? `${sign}${m}m` : `${sign}${m}m${String(s).padStart(2, "0")}s`;
  }
  const h = Math.floor(a / 3_600_000);
  const m = Math.round((a - h * 3_600_000) / 60_000);
  if (m === 60) return `${sign}${h + 1}h`;
  return m === 0 ? `${sign}${h}h` : `${sign}${h}h${String(m).padStart(2, "0")}m`;
}

/** A UTC clock time "HH:MM:SS" of an instant (ms since the epoch). */
export function clockTime(at: number): string {
  return new Date(at).toISOString().slice(11, 19);
}

/** The spread of a list of numbers. All fields are NaN for an empty list. */
export type Spread = { n: number; mean: number; p50: number; p90: number; max: number; min: number };

/** Computes the spread of `xs`: count, mean, median, 90th percentile (nearest rank), min, max. */
export function spread(xs: readonly number[]): Spread {
  if (xs.length === 0) return { n: 0, mean: NaN, p50: NaN, p90: NaN, max: NaN, min: NaN };
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  return {
    n: sorted.length,
    mean: sorted.reduce((s, x) => s + x, 0) / sorted.length,
    p50: rank(0.5),
    p90: rank(0.9),
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
  };
}

/** Describes a list of waits in ms in a few words: "mean 5.1s, max 6s", or "none". */
export function waits(xs: readonly number[]): string {
  const s = spread(xs);
  if (s.n === 0) return "none";
  return `mean ${duration(s.mean)}, max ${duration(s.max)}`;
}

/** One line of a summary: a label, a value and an optional note explaining it. */
export type SummaryRow = { label: string; value: string; note?: string };

/**
 * Lays summary rows out as "  label  value  note" lines no wider than `width`: labels padded to
 * the longest, values to the longest of at most `valueWidth` characters, notes wrapped in the
 * room left. A longer value gets its note on the lines under it, in the notes' column.
 */
export function summaryLines(rows: readonly SummaryRow[], width = 80, valueWidth = 24): string[] {
  const lw = Math.max(0, ...rows.map((r) => r.label.length));
  const vw = Math.max(0, ...rows.map((r) => r.value.length).filter((n) => n <= valueWidth));
  const indent = 2 + lw + 2 + vw + 2;
  // Too narrow to put notes beside values: give them their own, less indented, lines.
  const noteIndent = width - indent >= 24 ? indent : 6;
  const out: string[] = [];
  for (const r of rows) {
    const head = `  ${r.label.padEnd(lw)}  ${r.value.padEnd(vw)}`;
    const notes = r.note === undefined || r.note === "" ? [] : wrap(r.note, width - noteIndent);
    if (notes.length > 0 && r.value.length <= vw && noteIndent === indent) {
      out.push(`${head}  ${notes[0]}`);
      notes.shift();
    } else {
      const bare = head.trimEnd();
      // Only a value too long for the line is wrapped (which would collapse the padding).
      out.push(...(bare.length <= width ? [bare] : wrap(bare, width)));
    }
    for (const line of notes) out.push(`${" ".repeat(noteIndent)}${line}`);
  }
  return out;
}

/** Splits text into lines of at most `width` characters at spaces (a longer word stands alone). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line === "") line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** Round steps for a time axis, ms: 1 s up to a day. */
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map(
  (s) => s * 1000,
);

/** The smallest round time step (ms) that puts at most `maxTicks` ticks on a span of `spanMs`. */
export function timeStep(spanMs: number, maxTicks: number): number {
  return TIME_STEPS.find((s) => spanMs / s <= maxTicks) ?? TIME_STEPS[TIME_STEPS.length - 1]!;
}
