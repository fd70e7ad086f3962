// How the UI writes numbers, durations and instants: tokens with at most 2 decimals, times in a
// unit that suits their size. Pure.

/** Formats a token count with at most 2 decimals. */
export function formatTokens(v: number): string {
  return (Math.round(v * 100) / 100 + 0).toLocaleString("en-US", { maximumFractionDigits: 2 });
}

/** Formats ms as seconds with at most 3 decimals: "1.5 s". */
export function formatSeconds(ms: number): string {
  return `${(Math.round(ms) / 1000).toLocaleString("en-US", { maximumFractionDigits: 3 })} s`;
}

/** A unit durations are written in. */
export type TimeUnit = { ms: number; suffix: string };

/** The units, smallest first. */
export const TIME_UNITS: readonly TimeUnit[] = [
  { ms: 1000, suffix: "s" },
  { ms: 60_000, suffix: "min" },
  { ms: 3_600_000, suffix: "h" },
  { ms: 86_400_000, suffix: "d" },
];

/**
 * unitFor picks the unit for a span of `span` ms: the largest that fits at least `fits` times
 * (default 3, for an axis, so a minute and a half reads in seconds, ten minutes in minutes and a
 * week in days).
 */
export function unitFor(span: number, fits = 3): TimeUnit {
  let unit = TIME_UNITS[0] as TimeUnit;
  for (const u of TIME_UNITS) if (span >= fits * u.ms) unit = u;
  return unit;
}

/** Formats `ms` in `unit` with at most `digits` decimals (default 2): "90 s", "1.5 min", "2 d". */
export function formatIn(ms: number, unit: TimeUnit, digits = 2): string {
  const scale = 10 ** digits;
  const v = Math.round((ms / unit.ms) * scale) / scale + 0;
  return `${v.toLocaleString("en-US", { maximumFractionDigits: digits })} ${unit.suffix}`;
}

/**
 * Formats a duration or an instant (ms) in the largest unit it holds twice, to the ms when in
 * seconds: "1.234 s", "90 s", "2.5 min", "2 h", "12 d".
 */
export function formatDuration(ms: number): string {
  const unit = unitFor(Math.abs(ms), 2);
  return formatIn(ms, unit, unit === TIME_UNITS[0] ? 3 : 2);
}
