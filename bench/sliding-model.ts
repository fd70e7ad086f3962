// The sliding window's accuracy, pure: request traces of several shapes, deciders (the library's
// own decision over one row, the same with its weighted previous count rounded another way, the
// component's flow on the in-memory store, and an exact sliding log), and a score of a decider's
// admissions against the exact log on its own admitted history. `npm run bench -- --only sliding`
// prints them (bench/sliding.ts). Times are whole ms; randomness comes in as an argument.
import { evaluate, paramsOf, phaseOf, stateOf, windowStart, type State } from "../src/shared/kinds/algebra.js";
import { decideRateLimit } from "../src/shared/kinds/predict.js";
import { minus } from "../src/shared/core/split.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { windowIndex, type Taken } from "../tools/bounds.js";
import { encodeLog, live, logTotal, withTaken, type Entry } from "../src/shared/kinds/window-log.js";
import { MemoryStore } from "../tools/memory-store.js";
import { poissonArrivals } from "./sim.js";

/** A decider takes a request of `count` tokens at `at` (ms, non-decreasing) and says whether it is admitted. */
export type Decider = (at: number, count: number) => boolean;

/**
 * maxTakenInWindow returns the most tokens taken in any window `[t, t + width)` (ms), every
 * window, not only aligned ones: tools/bounds.ts's `maxInWindow` weighted by count.
 * `events` must be sorted by `at`.
 */
export function maxTakenInWindow(events: readonly Taken[], width: number): number {
  let best = 0;
  let sum = 0;
  let lo = 0;
  for (const e of events) {
    sum += e.count;
    while (e.at - events[lo]!.at >= width) sum -= events[lo++]!.count;
    best = Math.max(best, sum);
  }
  return best;
}

/** maxInAligned returns the most tokens taken in one window of `period` ms aligned to `start` (ms). */
export function maxInAligned(events: readonly Taken[], period: number, start: number): number {
  const sums = new Map<number, number>();
  for (const e of events) {
    const k = windowIndex(e.at, { phase: start, period });
    sums.set(k, (sums.get(k) ?? 0) + e.count);
  }
  return Math.max(0, ...sums.values());
}

/**
 * A log of admissions that knows the tokens admitted in the last `width` ms: `inWindow(t)` is
 * the sum over `(t − width, t]`, for `t` non-decreasing across calls.
 */
class WindowLog {
  private events: Taken[] = [];
  private head = 0;
  private sum = 0;
  constructor(private readonly width: number) {}
  inWindow(t: number): number {
    while (this.head < this.events.length && this.events[this.head]!.at <= t - this.width) {
      this.sum -= this.events[this.head++]!.count;
    }
    return this.sum;
  }
  add(e: Taken): void {
    this.events.push(e);
    this.sum += e.count;
  }
}

/**
 * exactLog returns the exact sliding log as a decider: it admits a request when the tokens it
 * admitted in `(at − width, at]` plus `count` are at most `rate`. It keeps every admission of
 * the last `width` ms, which is the state the two-window approximation avoids.
 */
export function exactLog(rate: number, width: number): Decider {
  const log = new WindowLog(width);
  return (at, count) => {
    const ok = log.inWindow(at) + count <= rate;
    if (ok) log.add({ at, count });
    return ok;
  };
}

/**
 * rowDecider returns the library's own decision over one row (`decideRateLimit`, exactly what
 * the server decides for an unsharded limit), storing the row after each admission.
 */
export function rowDecider(config: RateLimitConfig): Decider {
  let state: State | null = null;
  return (at, count) => {
    const d = decideRateLimit(state, config, { now: at, count });
    // The row as stored: an approximate window's `prev`, an exact one's `log`.
    if (d.ok) state = stateOf(d);
    return d.ok;
  };
}

/**
 * boundedLogDecider returns the exact window's decision over one row's log, kept to at most
 * `maxEntries` entries and `maxBytes` bytes (window-log.ts's `withTaken`, which the library calls
 * with MAX_LOG_ENTRIES and MAX_LOG_BYTES): admitted when what the log holds in `(at − period, at]`
 * plus `count` fits in `rate`. The bytes of each log it stores are added to `sizes`.
 */
export function boundedLogDecider(rate: number, period: number, maxEntries: number, maxBytes: number, sizes: number[]): Decider {
  let log: readonly Entry[] = [];
  return (at, count) => {
    log = live(log, at, period);
    if (logTotal(log) + count > rate) return false;
    log = withTaken(log, at, count, maxEntries, maxBytes);
    sizes.push(encodeLog(log).byteLength);
    return true;
  };
}

/** storeDecider returns the component's own flow on the in-memory store: any shard count. */
export function storeDecider(config: RateLimitConfig, random: () => number): Decider {
  const store = new MemoryStore();
  return (at, count) => store.limit({ name: "bench", key: "k", count, config }, at, random).ok;
}

/**
 * How a variant counts the previous window: from its weighted count `weighted`
 * (`prev × (1 − f)`, f the elapsed fraction of the current window) and its whole count `prev`.
 */
export type Weigh = (weighted: number, prev: number) => number;

/**
 * weightedDecider returns a sliding window (`config`, whole counts only) deciding with the
 * previous window counted as `weigh` says: admitted when `rate − taken − weigh(prev × (1 − f),
 * prev) ≥ count`. It wraps the library's row (its `evaluate` and the row it stores are the
 * library's), recovering `taken`, a whole number, from the row's value; with `weigh` the identity
 * it decides exactly as {@link rowDecider}.
 */
export function weightedDecider(config: RateLimitConfig & { kind: "sliding window" }, weigh: Weigh): Decider {
  const p = paramsOf(config, phaseOf(config.start ?? 0, config.period));
  let state: State | null = null;
  return (at, count) => {
    if (!Number.isInteger(count)) throw new Error(`weightedDecider: count ${count} is not whole`);
    const cur = evaluate(state, p, at);
    const prev = cur.prev ?? 0;
    // Whole numbers throughout: prev × (ms left in the window) / period is exact when it is whole.
    const weighted = (prev * (windowStart(cur.ts, p) + p.period - cur.ts)) / p.period;
    const taken = Math.round(p.rate - cur.value - weighted);
    const ok = p.rate - taken - weigh(weighted, prev) >= count;
    if (ok) state = { ...cur, value: minus(cur.value, count) };
    return ok;
  };
}

/** A decider's admissions judged against an exact sliding log of `rate` per `width` ms. */
export type Score = {
  /** Requests seen, and requests admitted. */
  requests: number;
  admitted: number;
  /** Admitted, though its own admissions in `(at − width, at]` then exceed `rate`. */
  wronglyAdmitted: number;
  /** Refused, though its own admissions in `(at − width, at]` leave room for the request. */
  wronglyRefused: number;
  /** The most tokens it admitted in any window of `width` ms. */
  worst: number;
  /** What it admitted, in order. */
  taken: Taken[];
};

/**
 * score runs `requests` (sorted by `at`) through `decide` and judges each decision as an exact
 * sliding log of `rate` per `width` ms would at that instant, on the decider's own admitted
 * history: an admission that brings `(at − width, at]` above `rate` is wrongly admitted; a refusal
 * of a request that would have fitted is wrongly refused. The exact log itself scores 0 and 0.
 */
export function score(requests: readonly Taken[], decide: Decider, rate: number, width: number): Score {
  const log = new WindowLog(width);
  const out: Score = { requests: 0, admitted: 0, wronglyAdmitted: 0, wronglyRefused: 0, worst: 0, taken: [] };
  for (const r of requests) {
    const before = log.inWindow(r.at);
    out.requests += 1;
    if (decide(r.at, r.count)) {
      log.add(r);
      out.taken.push(r);
      out.admitted += 1;
      if (before + r.count > rate) out.wronglyAdmitted += 1;
      out.worst = Math.max(out.worst, before + r.count);
    } else if (before + r.count <= rate) {
      out.wronglyRefused += 1;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Traffic shapes: requests of count 1, sorted, whole ms.

const ones = (times: readonly number[]): Taken[] => times.map((at) => ({ at, count: 1 }));
const sorted = (events: Taken[]): Taken[] => events.sort((a, b) => a.at - b.at);

/** `n` instants spread evenly over `[from, from + span)` (whole ms). */
function evenly(from: number, span: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => from + Math.floor((i * span) / n));
}

/** Poisson arrivals at `load × rate` per `period` ms over `periods` periods from `start`. */
export function steady(start: number, rate: number, period: number, periods: number, load: number, random: () => number): Taken[] {
  return ones(poissonArrivals(start, periods * period, (load * rate) / period, random));
}

/**
 * Random bursts over `periods` periods from `start`: bursts arrive at one per period on average
 * (Poisson), each of 1 to 1.5 × `rate` requests spread evenly over up to a tenth of a period, on
 * a Poisson background of 0.2 × `rate` per period.
 */
export function bursty(start: number, rate: number, period: number, periods: number, random: () => number): Taken[] {
  const events = ones(poissonArrivals(start, periods * period, (0.2 * rate) / period, random));
  for (const at of poissonArrivals(start, periods * period, 1 / period, random)) {
    const size = 1 + Math.floor(random() * 1.5 * rate);
    events.push(...ones(evenly(at, Math.floor((random() * period) / 10), size)));
  }
  return sorted(events);
}

/**
 * Bursts at the seam: at every `every`-th boundary of the windows aligned to `start` (from the
 * second), 2 × `rate` requests spread evenly over the last hundredth of a period before it and
 * 2 × `rate` over the first hundredth after it; `seams` of them, on a Poisson background of
 * `background × rate` per period over the whole trace.
 */
export function seamBursts(
  start: number,
  rate: number,
  period: number,
  seams: number,
  every: number,
  background: number,
  random: () => number,
): Taken[] {
  const span = Math.max(1, Math.floor(period / 100));
  const periods = 2 + seams * every;
  const events = ones(poissonArrivals(start, periods * period, (background * rate) / period, random));
  for (let s = 0; s < seams; s++) {
    const seam = start + (2 + s * every) * period;
    events.push(...ones(evenly(seam - span, span, 2 * rate)), ...ones(evenly(seam, span, 2 * rate)));
  }
  return sorted(events);
}

/**
 * The approximation's worst case: `rate` requests in the last ms of a window (aligned to
 * `start`), then 2 × `rate` spread evenly across the next, so each token the estimate frees as
 * the previous window "slides out" is taken at once, though every request of the burst is still
 * inside the sliding window. `reps` times, every `every`-th window from the second.
 */
export function adversarial(start: number, rate: number, period: number, reps: number, every: number): Taken[] {
  const events: Taken[] = [];
  for (let r = 0; r < reps; r++) {
    const seam = start + (2 + r * every) * period;
    events.push(...ones(Array.from({ length: rate }, () => seam - 1)), ...ones(evenly(seam, period, 2 * rate)));
  }
  return events;
}
