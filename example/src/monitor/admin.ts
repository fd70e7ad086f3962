// The admin view's model: the minutes its metrics chart shows, filled in where a minute saw no
// requests, and how a key's state reads in its table. Pure: instants come in as ms.
import { METRICS_BUCKET_MS, type KeyStatus, type LimitConfig, type MetricsResult } from "convex-rate-limiter";
import { formatDuration, formatTokens } from "./format.js";

/**
 * adminLimits lists the app's named rate limits for the view's choice, those with metrics first
 * (concurrency limits have no keys to list and no metrics).
 */
export function adminLimits(limits: Readonly<Record<string, LimitConfig>>): { name: string; metrics: boolean }[] {
  return Object.entries(limits)
    .flatMap(([name, config]) => (config.kind === "concurrency" ? [] : [{ name, metrics: config.metrics === true }]))
    .sort((a, b) => Number(b.metrics) - Number(a.metrics));
}

/** One minute of the chart: requests admitted, reserved and refused in it. */
export type MinuteCounts = { bucket: number; admitted: number; reserved: number; refused: number };

/**
 * chartSpan returns the `minutes` whole minutes (UTC-aligned) up to and including the one holding
 * `now`: `from` inclusive, `to` exclusive, both ms. It changes only when a new minute starts, so a
 * query keyed on it is not re-run every render.
 */
export function chartSpan(now: number, minutes: number): { from: number; to: number } {
  const to = Math.floor(now / METRICS_BUCKET_MS) * METRICS_BUCKET_MS + METRICS_BUCKET_MS;
  return { from: to - minutes * METRICS_BUCKET_MS, to };
}

/** minuteSeries returns every minute of `metrics`' span, oldest first, with zeros where none was listed. */
export function minuteSeries(metrics: Pick<MetricsResult, "from" | "to" | "buckets">): MinuteCounts[] {
  const byBucket = new Map(metrics.buckets.map((b) => [b.bucket, b]));
  const out: MinuteCounts[] = [];
  for (let bucket = metrics.from; bucket < metrics.to; bucket += METRICS_BUCKET_MS) {
    const b = byBucket.get(bucket);
    out.push({ bucket, admitted: b?.admitted ?? 0, reserved: b?.reserved ?? 0, refused: b?.refused ?? 0 });
  }
  return out;
}

/** The most requests in any one minute of `series` (0 when empty). */
export function busiest(series: readonly MinuteCounts[]): number {
  return Math.max(0, ...series.map((m) => m.admitted + m.reserved + m.refused));
}

/** minuteLabel writes a minute's start as its UTC clock time, "09:05". */
export function minuteLabel(bucket: number): string {
  return new Date(bucket).toISOString().slice(11, 16);
}

/** describeSeries says in one sentence what the chart shows, for screen readers. */
export function describeSeries(series: readonly MinuteCounts[]): string {
  const sum = (f: (m: MinuteCounts) => number) => series.reduce((s, m) => s + f(m), 0);
  const first = series[0];
  const last = series.at(-1);
  if (first === undefined || last === undefined) return "No minutes to show.";
  const span = `${minuteLabel(first.bucket)} to ${minuteLabel(last.bucket + METRICS_BUCKET_MS)} UTC`;
  const total = sum((m) => m.admitted + m.reserved + m.refused);
  if (total === 0) return `No requests from ${span}.`;
  return `From ${span}: ${sum((m) => m.admitted)} requests admitted, ${sum((m) => m.reserved)} reserved and ${sum((m) => m.refused)} refused; at most ${busiest(series)} in one minute.`;
}

/** What a key's row in the admin table says: its tokens now, and when it is full again. */
export function keyCells(k: KeyStatus): { key: string; tokens: string; full: string } {
  return {
    key: k.key ?? "(global)",
    tokens: `${formatTokens(k.value)} of ${formatTokens(k.capacity)}`,
    full: k.fullIn <= 0 ? "full" : `in ${formatDuration(k.fullIn)}`,
  };
}
