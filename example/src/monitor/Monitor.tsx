// The Monitor section: the chart of a limit's available tokens, and a one-line readout.
import type { RateLimitConfig } from "convex-rate-limiter";
import type { ReactNode } from "react";
import { capacityOf } from "../playground/config.js";
import { Chart, type ChartProps } from "./Chart.js";
import { formatDuration, formatTokens } from "./format.js";
import { isStepped } from "./model.js";

/** The chart's props but those the monitor derives from the config. */
export type MonitorProps = Omit<ChartProps, "description" | "capacity" | "step"> & {
  /** The limit's config now (the whole limit, sharded or not). */
  config: RateLimitConfig;
  /** The tokens available at `now`. */
  available: number;
  /** What the chart is about (e.g. "simulated" or "live"), shown under the heading. */
  children?: ReactNode;
};

/** Monitor shows the chart with a readout of the tokens available at `now`. */
export function Monitor({ config, available, children, ...chart }: MonitorProps) {
  const capacity = capacityOf(config);
  const admitted = chart.marks.filter((m) => m.outcome !== "refused").length;
  const refused = chart.marks.length - admitted;
  return (
    <section className="panel monitor" aria-labelledby="monitor-heading">
      <h2 id="monitor-heading">Monitor</h2>
      {children}
      <p className="readout" data-testid="monitor-readout">
        <strong>{formatTokens(available)}</strong> of {formatTokens(capacity)} tokens available at{" "}
        {formatDuration(chart.now - chart.origin)}
      </p>
      <Chart
        {...chart}
        capacity={capacity}
        step={isStepped(config)}
        description={`A ${config.kind} of ${formatTokens(config.rate)} per ${formatDuration(config.period)}, capacity ${formatTokens(capacity)}${(config.shards ?? 1) > 1 ? ` over ${config.shards} shards` : ""}: ${formatTokens(available)} tokens available now; ${admitted} requests admitted or reserved and ${refused} refused so far.`}
      />
    </section>
  );
}
