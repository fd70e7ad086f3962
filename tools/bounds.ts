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

// ---------------------------------------------------------------------------------------------
// G, the most a config grants over a span: the config-change rule's bound (test/config-change-
// property.test.ts, test/override-property.test.ts).

/** The fields of a config {@link grant} reads. */
export type GrantConfig = { kind: "token bucket" | "fixed window" | "sliding window"; period: number; exact?: boolean | undefined };

/** The number of window starts `phase + k * period` (whole k) in [from, to], or (from, to]. */
export function windowStarts(phase: number, period: number, from: number, to: number, inclusive: boolean): number {
  if (!(to >= from)) return 0;
  const after = (t: number) => (inclusive ? t >= from : t > from);
  let first = Math.ceil((from - phase) / period) - 1;
  while (!after(phase + first * period)) first++;
  while (after(phase + (first - 1) * period)) first--;
  let last = Math.floor((to - phase) / period) + 1;
  while (phase + last * period > to) last--;
  while (phase + (last + 1) * period <= to) last++;
  return Math.max(0, last - first + 1);
}

/**
 * G: the most `rate` of tokens a config grants from `from` to `to` (ms): a token bucket
 * `rate * (to - from) / period`; a fixed window `rate` per window start of its phase in
 * [from, to] (`inclusive`: a window starting exactly at `from` opens) or in (from, to]. Closed
 * form, independent of the library's algebra.
 */
export function grant(config: GrantConfig, phase: number, rate: number, from: number, to: number, inclusive: boolean): number {
  if (config.kind === "token bucket") return to > from ? (rate * (to - from)) / config.period : 0;
  // An exact sliding window admits at most `rate` in any window of `period` ms, and
  // floor((to - from) / period) + 1 such windows cover [from, to].
  if (config.kind === "sliding window" && config.exact !== false) return to >= from ? rate * (Math.floor((to - from) / config.period) + 1) : 0;
  // A sliding window admits at most `rate` in an aligned window: what the window already open
  // still gives back is in the row's value and `prev`, and each window starting after adds `rate`.
  return rate * windowStarts(phase, config.period, from, to, inclusive);
}

/** The fields of a stored row {@link owing} reads: its kind, value and stamp, and the terms it was written under. */
export type OwingRow = { kind?: string | undefined; value: number; ts: number; rate?: number | undefined; period?: number | undefined; capacity?: number | undefined };

/**
 * A row that owes (work reserved ahead), carried into a config of its own kind: its promise ends
 * where its own terms repay the debt, and holds what they leave there; the new config grants from
 * then (README, "Changing the config: the rule"). A token bucket's own rate repays it at
 * `ts + (-value) × period / rate`, holding nothing. A fixed window's, at the start of the first of
 * its own windows whose rates repay it: with the same period and that instant a window start of
 * the new phase, that window holds what is left there, at most the new capacity and the new rate
 * (so the part is that less the new rate, which the window opening there adds back); otherwise nothing is held
 * until the end of that window. Into the other kind (a token bucket's into a fixed window, or
 * back), nothing is held until its own terms repay it (a fixed window's: the end of the window
 * that repays it). `rate` and `capacity` are the new config's for the row's shard (the whole
 * config's on one shard). Undefined for any other row (either rate 0, a sliding window).
 */
export function owing(row: OwingRow, config: LimitConfig, phase: number, rate: number, capacity: number): { value: number; ends: number } | undefined {
  if (!(row.value < 0) || !(row.rate! > 0 && rate > 0)) return undefined;
  if (row.kind !== config.kind) {
    // Into the other kind (a token bucket's debt into a fixed window, or back): nothing held
    // until its own terms repay it (a fixed window's: the end of the window that repays it).
    if (![row.kind, config.kind].every((k) => k === "token bucket" || k === "fixed window")) return undefined;
    const ends = row.kind === "token bucket" ? row.ts + (-row.value * row.period!) / row.rate! : row.ts + (windowsToRepay(row) + 1) * row.period!;
    return { value: 0, ends };
  }
  // Nothing held from `ts + (-value) × period / rate` on is, in the new rate's tokens, the debt
  // (-value) × period / rate × rate' / period' held from `ts`: the same bound, computed from `ts`
  // (a fractional instant near T0 has float spacing of 2.4e-4 ms, enough to miss by 3.5e-5 tokens).
  if (row.kind === "token bucket") return { value: (row.value * rate * row.period!) / (row.rate! * config.period), ends: row.ts };
  if (row.kind !== "fixed window") return undefined;
  const n = windowsToRepay(row);
  const repaid = row.ts + n * row.period!;
  if (config.period === row.period && phase + Math.floor((repaid - phase) / config.period) * config.period === repaid) {
    // That window holds what the old terms leave there, at most the new capacity and the new rate
    // (one state refilled a rate per window can't hold more there, and nothing before it).
    return { value: Math.min(row.value + n * row.rate!, row.capacity!, capacity, rate) - rate, ends: repaid };
  }
  return { value: 0, ends: repaid + row.period! };
}

/**
 * The least whole number of a fixed window row's own windows after its `ts` whose rates repay its
 * debt: from the quotient, and a step either way for its rounding (counting one at a time would
 * never end for a debt ages deep).
 */
function windowsToRepay(row: OwingRow): number {
  let n = Math.max(1, Math.ceil(-row.value / row.rate!));
  while (n > 1 && row.value + (n - 1) * row.rate! >= 0) n--;
  while (!(row.value + n * row.rate! >= 0)) n++;
  return n;
}
