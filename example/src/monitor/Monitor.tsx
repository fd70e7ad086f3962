// The Monitor section: the chart of a limit's available tokens, and a one-line readout.
import { calculateRateLimit, type RateLimitConfig } from "convex-rate-limiter";
import type { ReactNode } from "react";
import { capacityOf } from "../playground/config.js";
import { Chart, formatSeconds, formatTokens, type ChartProps } from "./Chart.js";
import { valueAt, type Segment } from "./model.js";

/** The least span (ms) the chart shows after `now`, so a projection is always visible. */
const MIN_LOOKAHEAD = 2000;

/** The wait (ms) from `now` until the limit is full again with no more requests; 0 if it is. */
export function refillTime(config: RateLimitConfig, segments: readonly Segment[], now: number): number {
  const state = segments.filter((s) => s.from <= now).at(-1)?.state ?? null;
  // The wait until the value reaches capacity, from the algebra itself: exact for both kinds.
  return calculateRateLimit(state, config, now, capacityOf(config)).retryAfter ?? 0;
}

/**
 * The instant up to which the chart projects: long enough to see the limit refill completely,
 * and at least a fifth of the history shown, but no more than `maxLookahead` ms.
 */
export function horizon(
  config: RateLimitConfig,
  segments: readonly Segment[],
  from: number,
  now: number,
  maxLookahead: number,
): number {
  const lookahead = Math.max(MIN_LOOKAHEAD, refillTime(config, segments, now) * 1.15, (now - from) * 0.2);
  return now + Math.min(lookahead, maxLookahead);
}

/** The chart's props but its description, which the monitor writes itself. */
export type MonitorProps = Omit<ChartProps, "description"> & {
  /** What the chart is about (e.g. "simulated" or "live"), shown under the heading. */
  children?: ReactNode;
};

/** Monitor shows the chart with a readout of the tokens available at `now`. */
export function Monitor({ config, segments, from, to, now, origin, marks, children }: MonitorProps) {
  const available = valueAt(config, segments, now);
  const capacity = capacityOf(config);
  const admitted = marks.filter((m) => m.outcome !== "refused").length;
  const refused = marks.length - admitted;
  return (
    <section className="panel monitor" aria-labelledby="monitor-heading">
      <h2 id="monitor-heading">Monitor</h2>
      {children}
      <p className="readout" data-testid="monitor-readout">
        <strong>{formatTokens(available)}</strong> of {formatTokens(capacity)} tokens available at{" "}
        {formatSeconds(now - origin)}
      </p>
      <Chart
        config={config}
        segments={segments}
        from={from}
        to={to}
        now={now}
        origin={origin}
        marks={marks}
        description={`A ${config.kind} of ${formatTokens(config.rate)} per ${formatSeconds(config.period)}, capacity ${formatTokens(capacity)}: ${formatTokens(available)} tokens available now; ${admitted} requests admitted and ${refused} refused so far.`}
      />
    </section>
  );
}
