// The Monitor's chart: available tokens over time as an SVG, with each request marked where it
// happened. No chart library: the curve's corners come exactly from the model.
import { useId } from "react";
import type { RateLimitConfig } from "convex-rate-limiter";
import { capacityOf } from "../playground/config.js";
import { curve, pathOf, ticks, valueAt, type Mark, type Scale, type Segment } from "./model.js";

const WIDTH = 720;
const HEIGHT = 260;
const MARGIN = { top: 14, right: 16, bottom: 34, left: 48 };

export type ChartProps = {
  /** The limit's config, as one whole row. */
  config: RateLimitConfig;
  segments: readonly Segment[];
  /** The instants (ms) the chart spans; the curve after `now` is a projection with no new traffic. */
  from: number;
  to: number;
  now: number;
  /** The instant shown as 0 s on the time axis. */
  origin: number;
  marks: readonly Mark[];
  /** One line saying what is shown, read by screen readers. */
  description: string;
};

/** Formats ms as seconds with at most 3 decimals. */
export function formatSeconds(ms: number): string {
  return `${(Math.round(ms) / 1000).toLocaleString("en-US", { maximumFractionDigits: 3 })} s`;
}

/** Formats a token count with at most 2 decimals. */
export function formatTokens(v: number): string {
  return v.toLocaleString("en-US", { maximumFractionDigits: 2 });
}

/** Chart draws the curve (solid up to `now`, dashed after), the capacity line and the marks. */
export function Chart({ config, segments, from, to, now, origin, marks, description }: ChartProps) {
  const titleId = useId();
  const descId = useId();
  const capacity = capacityOf(config);
  const clampedNow = Math.min(Math.max(now, from), to);
  const past = curve(config, segments, from, clampedNow);
  const future = curve(config, segments, clampedNow, to, false);
  const shown = marks.filter((m) => m.t >= from && m.t <= to).map((m) => ({ ...m, v: m.v ?? valueAt(config, segments, m.t) }));

  const values = [...past, ...future].map((p) => p.v).concat(shown.map((m) => m.v));
  const lo = Math.min(0, ...values);
  const hi = Math.max(capacity, ...values, lo + 1);
  const pad = (hi - lo) * 0.06;
  const yLo = lo - (lo < 0 ? pad : 0);
  const yHi = hi + pad;
  const innerW = WIDTH - MARGIN.left - MARGIN.right;
  const innerH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const span = Math.max(1, to - from);
  const scale: Scale = {
    x: (t) => MARGIN.left + ((t - from) / span) * innerW,
    y: (v) => MARGIN.top + (1 - (v - yLo) / (yHi - yLo)) * innerH,
  };
  const step = config.kind === "fixed window";
  const timeTicks = ticks(from - origin, to - origin, 6);
  const tokenTicks = ticks(lo, hi, 5);

  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-labelledby={`${titleId} ${descId}`}
        data-testid="monitor-chart"
      >
        <title id={titleId}>Available tokens over time</title>
        <desc id={descId}>{description}</desc>
        <g className="chart-grid" aria-hidden="true">
          {tokenTicks.map((v) => (
            <g key={`y${v}`}>
              <line x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={scale.y(v)} y2={scale.y(v)} />
              <text x={MARGIN.left - 6} y={scale.y(v)} dy="0.32em" textAnchor="end">
                {formatTokens(v)}
              </text>
            </g>
          ))}
          {timeTicks.map((t) => (
            <g key={`x${t}`}>
              <line x1={scale.x(t + origin)} x2={scale.x(t + origin)} y1={MARGIN.top} y2={HEIGHT - MARGIN.bottom} />
              <text x={scale.x(t + origin)} y={HEIGHT - MARGIN.bottom + 16} textAnchor="middle">
                {formatSeconds(t)}
              </text>
            </g>
          ))}
        </g>
        <line
          className="chart-capacity"
          x1={MARGIN.left}
          x2={WIDTH - MARGIN.right}
          y1={scale.y(capacity)}
          y2={scale.y(capacity)}
        />
        {lo < 0 && (
          <line className="chart-zero" x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={scale.y(0)} y2={scale.y(0)} />
        )}
        <line className="chart-now" x1={scale.x(clampedNow)} x2={scale.x(clampedNow)} y1={MARGIN.top} y2={HEIGHT - MARGIN.bottom} />
        <path className="chart-curve" d={pathOf(past, scale, step)} data-testid="monitor-curve" />
        <path className="chart-projection" d={pathOf(future, scale, step)} data-testid="monitor-projection" />
        <g className="chart-marks">
          {shown.map((m) => {
            const x = scale.x(m.t);
            const y = scale.y(m.v);
            return (
              <g key={m.id} className={`mark mark-${m.outcome}`} data-outcome={m.outcome}>
                <title>{m.label}</title>
                {m.outcome === "admitted" && <circle cx={x} cy={y} r={4.5} />}
                {m.outcome === "reserved" && <path d={`M${x} ${y - 6}L${x + 6} ${y}L${x} ${y + 6}L${x - 6} ${y}Z`} />}
                {m.outcome === "refused" && <path d={`M${x - 5} ${y - 5}L${x + 5} ${y + 5}M${x + 5} ${y - 5}L${x - 5} ${y + 5}`} />}
              </g>
            );
          })}
        </g>
        <text className="chart-capacity-label" x={WIDTH - MARGIN.right} y={scale.y(capacity) - 5} textAnchor="end">
          capacity {formatTokens(capacity)}
        </text>
      </svg>
      <figcaption className="chart-legend">
        <span className="legend legend-curve">available tokens</span>
        <span className="legend legend-projection">projection, with no more requests</span>
        <span className="legend legend-admitted">admitted</span>
        <span className="legend legend-reserved">reserved</span>
        <span className="legend legend-refused">refused</span>
      </figcaption>
    </figure>
  );
}
