// The admin view's chart: requests admitted, reserved and refused per minute, as stacked bars in an
// SVG (no chart library), from a limit's metrics (see admin.ts for the model).
import { useId } from "react";
import { describeSeries, minuteLabel, type MinuteCounts } from "./admin.js";
import { ticks } from "./model.js";
import { useWidth } from "./useWidth.js";

/** The width drawn at before the chart's box is measured; it then draws at its box's width. */
const DEFAULT_WIDTH = 720;
const MIN_WIDTH = 280;
const HEIGHT = 220;
const MARGIN = { top: 12, right: 12, bottom: 32, left: 54 };
/** A minute's label ("14:05"), as wide as it is drawn at 12 px, and a gap. */
const LABEL_WIDTH = 44;

/** The outcomes stacked in each bar, bottom first, with their CSS class. */
const LAYERS = [
  { field: "admitted", label: "admitted" },
  { field: "reserved", label: "reserved" },
  { field: "refused", label: "refused" },
] as const;

/** MetricsChart draws one stacked bar per minute of `series`, oldest on the left. */
export function MetricsChart({ series }: { series: readonly MinuteCounts[] }) {
  const titleId = useId();
  const descId = useId();
  const [figure, measured] = useWidth<HTMLElement>(DEFAULT_WIDTH);
  const WIDTH = Math.max(MIN_WIDTH, measured);
  const most = Math.max(1, ...series.map((m) => m.admitted + m.reserved + m.refused));
  const yTicks = ticks(0, most, 4).filter((v) => Number.isInteger(v));
  const yMax = Math.max(most, yTicks.at(-1) ?? most);
  const left = MARGIN.left;
  const right = WIDTH - MARGIN.right;
  const bottom = HEIGHT - MARGIN.bottom;
  const slot = (right - left) / Math.max(1, series.length);
  const barWidth = Math.max(2, slot * 0.7);
  const y = (v: number) => bottom - (v / yMax) * (bottom - MARGIN.top);
  // Label every minute when they fit, else every few.
  const every = Math.max(1, Math.ceil(LABEL_WIDTH / slot));
  return (
    <figure className="chart metrics-chart" ref={figure}>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${titleId} ${descId}`} data-testid="metrics-chart">
        <title id={titleId}>Requests per minute</title>
        <desc id={descId}>{describeSeries(series)}</desc>
        <g className="chart-grid" aria-hidden="true">
          {yTicks.map((v) => (
            <g key={`y${v}`}>
              <line x1={left} x2={right} y1={y(v)} y2={y(v)} />
              <text x={left - 6} y={y(v)} dy="0.32em" textAnchor="end">
                {v}
              </text>
            </g>
          ))}
          {series.map((m, i) =>
            i % every === 0 ? (
              <text key={`x${m.bucket}`} className="chart-time-label" x={left + (i + 0.5) * slot} y={bottom + 16} textAnchor="middle">
                {minuteLabel(m.bucket)}
              </text>
            ) : null,
          )}
          <text className="chart-axis-title" transform={`translate(13 ${(MARGIN.top + bottom) / 2}) rotate(-90)`} textAnchor="middle">
            requests
          </text>
        </g>
        <g>
          {series.map((m, i) => {
            let base = 0;
            const x = left + i * slot + (slot - barWidth) / 2;
            return (
              <g key={m.bucket} data-bucket={m.bucket} data-admitted={m.admitted} data-reserved={m.reserved} data-refused={m.refused}>
                <title>{`${minuteLabel(m.bucket)} UTC: ${m.admitted} admitted, ${m.reserved} reserved, ${m.refused} refused`}</title>
                {LAYERS.map(({ field }) => {
                  const n = m[field];
                  if (n === 0) return null;
                  const top = y(base + n);
                  const height = y(base) - top;
                  base += n;
                  return <rect key={field} className={`bar bar-${field}`} x={x} y={top} width={barWidth} height={height} />;
                })}
              </g>
            );
          })}
        </g>
        <line className="chart-capacity" x1={left} x2={right} y1={bottom} y2={bottom} />
      </svg>
      <figcaption className="chart-legend">
        {LAYERS.map(({ field, label }) => (
          <span key={field} className={`legend legend-bar-${field}`}>
            {label}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
