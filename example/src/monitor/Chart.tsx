// The Monitor's chart: available tokens over time as an SVG, with each request marked where it
// happened. No chart library: the curve comes as points (see model.ts and the offline simulation),
// the axes and marks are laid out by axis.ts.
import { useId } from "react";
import { groupMarks, placeLabels, timeTicks } from "./axis.js";
import { formatDuration, formatTokens } from "./format.js";
import { pathOf, pointAt, ticks, type Mark, type Point, type Scale } from "./model.js";
import { useWidth } from "./useWidth.js";

/** The width drawn at before the chart's box is measured (and in tests without layout). */
const DEFAULT_WIDTH = 720;
/** The narrowest the chart is drawn: its box on a small phone. */
const MIN_WIDTH = 280;
const MARGIN = { top: 20, right: 16, bottom: 40, left: 64 };
/**
 * The chart's text size: px in the viewBox, which is as wide as the chart's box (see useWidth.ts),
 * so px on screen too (styles.css sets the same). The width is estimated per character.
 */
const FONT = 12;
const CHAR_WIDTH = FONT * 0.62;
/** The least room (px) between time labels: about one label. */
const TICK_SPACING = 90;

export type ChartProps = {
  /** The whole limit's capacity now. */
  capacity: number;
  /** Draw the curve as steps ("hold, then jump"): a fixed window. */
  step: boolean;
  /** The curve up to `now`, and its projection after `now` with no new traffic. */
  past: readonly Point[];
  future: readonly Point[];
  /** The instants (ms) the chart spans. */
  from: number;
  to: number;
  now: number;
  /** The instant shown as 0 on the time axis. */
  origin: number;
  marks: readonly Mark[];
  /** Instants the limit's config was changed at, drawn as thin vertical lines. */
  changes?: readonly number[];
  /** One line saying what is shown, read by screen readers. */
  description: string;
};

/** Chart draws the curve (solid up to `now`, dashed after), the capacity line and the marks. */
export function Chart({ capacity, step, past, future, from, to, now, origin, marks, changes = [], description }: ChartProps) {
  const titleId = useId();
  const descId = useId();
  const [figure, measured] = useWidth<HTMLElement>(DEFAULT_WIDTH);
  const WIDTH = Math.max(MIN_WIDTH, measured);
  // Flatter on a wide screen, taller than half its width on a phone.
  const HEIGHT = Math.round(Math.min(300, Math.max(240, WIDTH * 0.42)));
  const clampedNow = Math.min(Math.max(now, from), to);
  const inRange = (t: number) => t >= from && t <= to;
  const placed = marks.filter((m) => inRange(m.t)).map((m) => ({ ...m, v: m.v ?? pointAt(past, m.t, step) ?? capacity }));

  const values = [...past, ...future].filter((p) => inRange(p.t)).map((p) => p.v);
  const lo = Math.min(0, ...values, ...placed.map((m) => m.v));
  const hi = Math.max(capacity, ...values, lo + 1);
  const left = MARGIN.left;
  const right = WIDTH - MARGIN.right;
  const bottom = HEIGHT - MARGIN.bottom;
  // Room above the capacity line for its label, a line of text, which the curve never reaches.
  const plotHeight = bottom - MARGIN.top;
  const yLo = lo - (lo < 0 ? (hi - lo) * 0.06 : 0);
  const yHi = hi + ((hi - yLo) * (FONT + 6)) / Math.max(1, plotHeight - FONT - 6);
  const span = Math.max(1, to - from);
  // Marks at the first and last instant sit a little inside the plot, clear of the token labels.
  const inset = 10;
  const scale: Scale = {
    x: (t) => left + inset + ((t - from) / span) * (right - left - 2 * inset),
    y: (v) => MARGIN.top + (1 - (v - yLo) / (yHi - yLo)) * (bottom - MARGIN.top),
  };
  // Marks less than a pixel apart are drawn as one, counted: a burst decided a ms or two apart.
  const shown = groupMarks(placed, scale);
  const time = timeTicks(from, to, origin, Math.max(2, Math.min(6, Math.floor((right - left) / TICK_SPACING))));
  const timeLabels = placeLabels(
    time.ticks.map((tick) => ({ x: scale.x(tick.t), text: tick.label })),
    left,
    right,
    CHAR_WIDTH,
  );
  const tokenTicks = ticks(lo, hi, 5);
  // Clip the curve to the plot: points outside [from, to] still shape the lines that enter it.
  const clipId = useId().replace(/:/g, "");

  return (
    <figure className="chart" ref={figure}>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-labelledby={`${titleId} ${descId}`}
        data-testid="monitor-chart"
        data-time-unit={time.unit.suffix}
      >
        <title id={titleId}>Available tokens over time</title>
        <desc id={descId}>{description}</desc>
        <defs>
          <clipPath id={clipId}>
            <rect x={left} y={0} width={right - left} height={HEIGHT} />
          </clipPath>
        </defs>
        <g className="chart-grid" aria-hidden="true">
          {tokenTicks.map((v) => (
            <g key={`y${v}`}>
              <line x1={left} x2={right} y1={scale.y(v)} y2={scale.y(v)} />
              <text x={left - 6} y={scale.y(v)} dy="0.32em" textAnchor="end">
                {formatTokens(v)}
              </text>
            </g>
          ))}
          {time.ticks.map((tick) => (
            <line key={`x${tick.t}`} x1={scale.x(tick.t)} x2={scale.x(tick.t)} y1={MARGIN.top} y2={bottom} />
          ))}
          {timeLabels.map((label) => (
            <text key={`l${label.x}`} className="chart-time-label" x={label.x} y={bottom + 16} textAnchor={label.anchor}>
              {label.text}
            </text>
          ))}
          <text className="chart-axis-title" transform={`translate(15 ${(MARGIN.top + bottom) / 2}) rotate(-90)`} textAnchor="middle">
            tokens available
          </text>
          <text className="chart-axis-title" x={right} y={HEIGHT - 3} textAnchor="end">
            time ({time.unit.suffix})
          </text>
        </g>
        <line className="chart-capacity" x1={left} x2={right} y1={scale.y(capacity)} y2={scale.y(capacity)} />
        {lo < 0 && <line className="chart-zero" x1={left} x2={right} y1={scale.y(0)} y2={scale.y(0)} />}
        {changes.filter(inRange).map((t) => (
          <line key={`c${t}`} className="chart-change" x1={scale.x(t)} x2={scale.x(t)} y1={MARGIN.top} y2={bottom}>
            <title>{`config changed at ${formatDuration(t - origin)}`}</title>
          </line>
        ))}
        <line className="chart-now" x1={scale.x(clampedNow)} x2={scale.x(clampedNow)} y1={MARGIN.top} y2={bottom} />
        <g clipPath={`url(#${clipId})`}>
          <path className="chart-curve" d={pathOf(past, scale, step)} data-testid="monitor-curve" />
          <path className="chart-projection" d={pathOf(future, scale, step)} data-testid="monitor-projection" />
        </g>
        <g className="chart-marks">
          {shown.map((m) => {
            const x = scale.x(m.t);
            const y = scale.y(m.v);
            return (
              <g key={m.id} className={`mark mark-${m.outcome}`} data-outcome={m.outcome} data-count={m.count}>
                <title>{m.labels.join("\n")}</title>
                {m.outcome === "admitted" && <circle cx={x} cy={y} r={4.5} />}
                {m.outcome === "reserved" && <path d={`M${x} ${y - 6}L${x + 6} ${y}L${x} ${y + 6}L${x - 6} ${y}Z`} />}
                {m.outcome === "refused" && <path d={`M${x - 5} ${y - 5}L${x + 5} ${y + 5}M${x + 5} ${y - 5}L${x - 5} ${y + 5}`} />}
                {m.count > 1 && (
                  <text className="mark-count" x={x + 8} y={y - 7}>
                    ×{m.count}
                  </text>
                )}
              </g>
            );
          })}
        </g>
        <text className="chart-capacity-label" x={right} y={scale.y(capacity) - 5} textAnchor="end">
          capacity {formatTokens(capacity)}
        </text>
      </svg>
      <figcaption className="chart-legend">
        <span className="legend legend-curve">available tokens</span>
        <span className="legend legend-projection">projection, with no more requests</span>
        <span className="legend legend-admitted">admitted</span>
        <span className="legend legend-reserved">reserved</span>
        <span className="legend legend-refused">refused</span>
        {changes.length > 0 && <span className="legend legend-change">config changed</span>}
      </figcaption>
    </figure>
  );
}
