// Fixed windows in time: which window of a limit holds an instant, and where window k starts,
// for windows of a fixed period (a phase and a period, ms) or of a calendar (see calendar.ts).
// algebra.ts re-exports them.
import { periodIndex, periodStart } from "../core/calendar.js";
import { math } from "../core/math.js";
import type { Params } from "./state.js";

/** phaseOf normalizes an instant `start` (ms) into a phase in [0, `period`) (ms). */
export function phaseOf(start: number, period: number): number {
  const phase = start % period;
  // `+ 0` turns the -0 a negative multiple of the period leaves into 0.
  return phase < 0 ? phase + period : phase + 0;
}

/**
 * windowIndex returns the index of the fixed window containing `t` (ms): the largest whole k with
 * `phase + k * period <= t`, computed with the same float expression as {@link windowStart}, so a
 * stored window start always maps back to its own window (a plain `floor` of the quotient can
 * land one window early at a boundary, which would grant a refill mid-window).
 */
export function windowIndex(t: number, p: Pick<Params, "phase" | "period" | "cal">): number {
  if (p.cal !== undefined) return periodIndex(t, p.cal);
  let k = math.floor((t - p.phase) / p.period);
  if (p.phase + (k + 1) * p.period <= t) k += 1;
  else if (p.phase + k * p.period > t) k -= 1;
  return k;
}

/** windowStart returns the start (ms) of the fixed window containing `t` (ms). */
export function windowStart(t: number, p: Pick<Params, "phase" | "period" | "cal">): number {
  return startOf(windowIndex(t, p), p);
}

/**
 * startOf returns the start (ms) of fixed window `k` (see {@link windowIndex}): `phase + k *
 * period`, or, for a calendar limit, the start of its `k`th period (see `periodStart`).
 */
export function startOf(k: number, p: Pick<Params, "phase" | "period" | "cal">): number {
  return p.cal !== undefined ? periodStart(k, p.cal) : p.phase + k * p.period;
}
