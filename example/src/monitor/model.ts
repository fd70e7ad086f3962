// The chart's model: a limit's available tokens over time, as a list of known states, each
// evolved with the shared `calculateRateLimit` until the next one. Pure: times come in as ms.
import { calculateRateLimit, windowLog, type RateLimitConfig } from "convex-rate-limiter";
import { capacityOf } from "../playground/config.js";

/**
 * What a row holds: `value` tokens at `ts` (ms). Negative values are reserved debt. An approximate
 * sliding window also holds `prev`, what the window before the one holding `ts` took (see
 * `calculateRateLimit`); without it, that window is taken to have taken nothing. An exact one holds
 * `log`, its last window's takes (see `windowLog`).
 */
export type RowState = { value: number; ts: number; prev?: number; log?: ArrayBuffer };

/**
 * isStepped says whether a limit's curve is drawn as steps ("hold, then jump"): a fixed window's
 * tokens arrive at its boundaries, an exact sliding window's when each take leaves the window; the
 * others' rise continuously.
 */
export function isStepped(config: RateLimitConfig): boolean {
  return config.kind === "fixed window" || (config.kind === "sliding window" && config.exact !== false);
}

/** From instant `from` on (until the next segment), the limit evolves from `state` (null: full). */
export type Segment = { from: number; state: RowState | null };

/** One point of the curve: `v` tokens at instant `t` (ms). */
export type Point = { t: number; v: number };

/** A request drawn on the chart at instant `t`. */
export type Mark = {
  id: number;
  t: number;
  outcome: "admitted" | "reserved" | "refused";
  /** What a tooltip says about it. */
  label: string;
  /**
   * Where to draw it: the tokens left after it (before it, when refused). Unset: read off the
   * curve at `t`, which puts every request made at the same instant at the same height.
   */
  v?: number | undefined;
};

/** The segment in force at `t`: the last one starting at or before it (a request at `t` counts). */
function segmentAt(segments: readonly Segment[], t: number): Segment | undefined {
  let found: Segment | undefined;
  for (const segment of segments) {
    if (segment.from <= t) found = segment;
    else break;
  }
  return found;
}

/** The tokens available at `t`, after any request made at exactly `t`. */
export function valueAt(config: RateLimitConfig, segments: readonly Segment[], t: number): number {
  const state = segmentAt(segments, t)?.state ?? null;
  return calculateRateLimit(state, config, t, 0).value;
}

/**
 * The first window boundary strictly after `t` (ms), for windows of `period` ms starting at
 * `start` (mod `period`), as the library places them: the float quotient is corrected so that a
 * boundary itself belongs to the window it opens.
 */
export function nextBoundary(t: number, start: number, period: number): number {
  const phase = ((start % period) + period) % period;
  let k = Math.floor((t - phase) / period);
  if (phase + (k + 1) * period <= t) k += 1;
  else if (phase + k * period > t) k -= 1;
  return phase + (k + 1) * period;
}

/** The most window boundaries drawn per segment; past `capacity / rate` of them the value is flat. */
const MAX_STEPS = 2000;

/**
 * The exact corners of one segment's curve over [a, b]: straight lines (token bucket, approximate
 * sliding window) or steps (fixed window, exact sliding window).
 */
function segmentPoints(config: RateLimitConfig, state: RowState | null, a: number, b: number): Point[] {
  const capacity = capacityOf(config);
  const at = (t: number): Point => ({ t, v: calculateRateLimit(state, config, t, 0).value });
  const start = calculateRateLimit(state, config, a, 0);
  const points: Point[] = [{ t: a, v: start.value }];
  switch (config.kind) {
    case "token bucket": {
      // The value is flat until the row's own ts (a clock behind the server's), then rises
      // linearly until it reaches capacity: those two instants are the only corners.
      const rising = Math.max(a, start.ts);
      if (rising > a && rising < b) points.push(at(rising));
      if (start.value < capacity) {
        const full = rising + ((capacity - start.value) * config.period) / config.rate;
        if (full > a && full < b) points.push({ t: full, v: capacity });
      }
      break;
    }
    case "fixed window": {
      // `start.ts` is the start of the window holding `a`; tokens arrive at each boundary after it.
      let boundary = start.ts + config.period;
      for (let steps = 0; boundary < b && steps < MAX_STEPS; steps++, boundary += config.period) {
        const point = at(boundary);
        points.push(point);
        if (point.v >= capacity) break;
      }
      break;
    }
    case "sliding window": {
      if (config.exact !== false) {
        // Steps: each take gives its tokens back when it leaves the window, `period` after it
        // was taken (after the row's own ts, when the clock is behind the server's).
        for (const entry of windowLog(start) ?? []) {
          const back = Math.max(entry.at + config.period, start.ts);
          if (back > a && back < b && back !== points.at(-1)!.t) points.push(at(back));
        }
        break;
      }
      // Level until the row's own ts (a clock behind the server's). Then straight lines: within a
      // window the tokens rise at what the window before took (`prev`) per period, as it slides
      // out, up to capacity; at a boundary the window just ended starts sliding out instead, so
      // the slope changes there, and the row is full by the boundary after. `calculateRateLimit`
      // puts the windows at `config.start` (else 0): pass the phase the server resolved.
      const rising = Math.max(a, start.ts);
      if (rising > a && rising < b) points.push(at(rising));
      const from = calculateRateLimit(state, config, rising, 0);
      let boundary = nextBoundary(rising, config.start ?? 0, config.period);
      const prev = from.prev ?? 0;
      if (prev > 0 && from.value < capacity) {
        // Full before the boundary: a corner where the rise meets capacity.
        const full = rising + ((capacity - from.value) * config.period) / prev;
        if (full > rising && full < boundary && full < b) points.push({ t: full, v: capacity });
      }
      for (let steps = 0; boundary < b && steps < 2; steps++, boundary += config.period) {
        const point = at(boundary);
        points.push(point);
        if (point.v >= capacity) break;
      }
      break;
    }
    default: {
      const never: never = config;
      throw new Error(`unknown kind in ${JSON.stringify(never)}`);
    }
  }
  if (b > a) points.push(at(b));
  return points;
}

/**
 * The curve of available tokens over [from, to]: each segment's exact corners, with a vertical
 * drop where a request took tokens. Draw it as steps ("hold, then jump") where `isStepped`, else
 * with straight lines.
 */
export function curve(
  config: RateLimitConfig,
  segments: readonly Segment[],
  from: number,
  to: number,
  dropAtStart = true,
): Point[] {
  if (!(to >= from)) return [];
  const points: Point[] = [];
  // With `dropAtStart`, the curve starts from the state in force just before `from`, so requests
  // made at exactly `from` show as a drop; without it, from the state after them.
  const first = dropAtStart ? segments.filter((s) => s.from < from).at(-1) : segmentAt(segments, from);
  const rest = segments.filter((s) => (dropAtStart ? s.from >= from : s.from > from) && s.from <= to);
  const pieces: Segment[] = [first ?? { from, state: null }, ...rest];
  pieces.forEach((segment, i) => {
    const a = Math.max(from, segment.from);
    const next = pieces[i + 1];
    const b = next === undefined ? to : next.from;
    points.push(...segmentPoints(config, segment.state, a, b));
  });
  return points;
}

/** Maps times and token counts to SVG coordinates. */
export type Scale = { x: (t: number) => number; y: (v: number) => number };

/** An SVG path through `points`: straight segments, or steps when `step` (fixed windows). */
export function pathOf(points: readonly Point[], scale: Scale, step: boolean): string {
  const fmt = (n: number): string => (Math.round(n * 10) / 10).toString();
  return points
    .map((p, i) => {
      const x = fmt(scale.x(p.t));
      const y = fmt(scale.y(p.v));
      if (i === 0) return `M${x} ${y}`;
      return step ? `H${x}V${y}` : `L${x} ${y}`;
    })
    .join("");
}

/** Evenly spaced "nice" tick values (1, 2 or 5 × a power of ten) covering [lo, hi]. */
export function ticks(lo: number, hi: number, about: number): number[] {
  if (!(hi > lo) || !Number.isFinite(hi - lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, about);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Math.round(v / step) * step + 0); // + 0 turns -0 into 0
  }
  return out;
}

/**
 * pointAt reads the value a curve (points in order of time) has at `t`, after any drop at exactly
 * `t`: linear between points, or held until the next point when `step` (fixed windows). Before the
 * first point it is the first value; after the last, the last.
 */
export function pointAt(points: readonly Point[], t: number, step: boolean): number | undefined {
  let before: Point | undefined;
  for (const p of points) {
    if (p.t <= t) {
      before = p;
      continue;
    }
    if (before === undefined) return p.v;
    return step ? before.v : before.v + ((p.v - before.v) * (t - before.t)) / (p.t - before.t);
  }
  return before?.v;
}

/** The least span (ms) a chart shows after `now`, so a projection is always visible. */
const MIN_LOOKAHEAD = 2000;

/** The wait (ms) from `now` until the limit is full again with no more requests; 0 if it is. */
export function refillTime(config: RateLimitConfig, segments: readonly Segment[], now: number): number {
  const state = segmentAt(segments, now)?.state ?? null;
  // The wait until the value reaches capacity, from the algebra itself: exact for every kind.
  return calculateRateLimit(state, config, now, capacityOf(config)).retryAfter ?? 0;
}

/**
 * The instant up to which a chart projects: long enough to see the limit refill completely,
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
