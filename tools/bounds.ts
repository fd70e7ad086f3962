// Bound checks of an admission history against a whole limit, written independently of the library so they can judge it.

/** The fields of a rate-limit config a bound needs (a `RateLimitConfig` has them all). */
export type LimitConfig = {
  kind: "token bucket" | "fixed window" | "sliding window";
  rate: number;
  period: number;
  capacity?: number;
};

/** The numbers a bound needs: a whole limit's rate, period and capacity, and a window phase (ms). */
export type Limit = {
  kind: "token bucket" | "fixed window";
  rate: number;
  period: number;
  capacity: number;
  /** Where fixed windows start, mod `period`; unused by token buckets. */
  phase: number;
};

/**
 * limitOf returns the whole limit of a config (every shard together): `capacity` defaults to
 * `rate`, as in the library. `phase` (ms) matters for windows only. A sliding window is judged by
 * the bound it guarantees whatever the traffic: no aligned window of its phase holds more than
 * `rate` (the fixed window bound with `capacity` = `rate`); its stronger aim, at most `rate` in
 * every window of length `period`, is measured by the benchmark against an exact log, not assumed.
 */
export function limitOf(config: LimitConfig, phase = 0): Limit {
  return {
    kind: config.kind === "token bucket" ? "token bucket" : "fixed window",
    rate: config.rate,
    period: config.period,
    capacity: config.capacity ?? config.rate,
    phase,
  };
}

/** Tokens taken at an instant: `count` at `at` (ms). */
export type Taken = { at: number; count: number };

/** windowIndex returns the index of the fixed window of `limit` holding `t` (whole ms expected). */
export function windowIndex(t: number, limit: Pick<Limit, "phase" | "period">): number {
  return Math.floor((t - limit.phase) / limit.period);
}

/**
 * worstExcess returns the largest excess, over every interval [t_i, t_j] between two events, of
 * the tokens taken in it over what the limit allows in it: for a token bucket
 * `capacity + rate × (t_j − t_i + slackMs) / period`, for a fixed window
 * `capacity + rate × (window boundaries crossed)`. ≤ 0 means no interval of any length was over
 * the bound; -Infinity when there are no events. Events may come in any order.
 *
 * `slackMs` widens every interval (token buckets only): scheduled work that jitter may delay by up
 * to `slackMs` is allowed to bunch by that much.
 *
 * O(n log n): with `C_k` the tokens taken up to event k and `X(t)` the elapsed periods (or window
 * index), the excess of [t_i, t_j] is `(C_j − rate·X_j) − (C_{i−1} − rate·X_i) − capacity`, so one
 * pass keeping the least `C_{i−1} − rate·X_i` finds the worst interval ending at each event.
 */
export function worstExcess(events: readonly Taken[], limit: Limit, slackMs = 0): number {
  const sorted = [...events].sort((a, b) => a.at - b.at);
  const t0 = sorted[0]?.at ?? 0; // measured from the first event, so floats keep their precision
  const x = (t: number) =>
    limit.kind === "token bucket" ? (t - t0) / limit.period : windowIndex(t, limit) - windowIndex(t0, limit);
  const slack = limit.kind === "token bucket" ? (limit.rate * slackMs) / limit.period : 0;
  let before = 0; // C_{i−1}
  let least = Infinity;
  let worst = -Infinity;
  for (const e of sorted) {
    const xi = x(e.at);
    least = Math.min(least, before - limit.rate * xi);
    before += e.count;
    worst = Math.max(worst, before - limit.rate * xi - least - limit.capacity - slack);
  }
  return worst;
}

/** maxInWindow returns the largest number of instants in any window `[t, t + width)`. `times` must be sorted. */
export function maxInWindow(times: readonly number[], width: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while (times[hi]! - times[lo]! >= width) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}
