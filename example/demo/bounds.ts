// Pure checks of what a scenario recorded, beside the worst-interval bound of tools/bounds.ts: a
// replay of the same requests through the library's `decideRateLimit` (the decisions an exact,
// single-row limiter makes), whether scheduled work ran when promised, and the most a limit can
// let through over a whole run; and for a concurrency limit, the most leases held at once and
// whether each acquire decided as the lease model says.
import { decideRateLimit, type RateLimitConfig, type RateLimitState } from "convex-rate-limiter";
import { windowIndex, type Limit, type Taken } from "../../tools/bounds.js";

/** A request's outcome: ok or refused, and its `retryAfter` (ms) when it has one. */
export type Decision = { at: number; count: number; ok: boolean; retryAfter?: number };

/**
 * Replays requests, in order, through the library's own `decideRateLimit` on one row starting
 * full: the decisions an exact, unsharded limiter makes. With `reserve`, a request is let through
 * while the debt it leaves is no deeper than `maxReserved`, and its `retryAfter` is when that debt
 * is repaid (when the work may run); a refused reservation carries no `retryAfter` here (the
 * server's is for the same reservation later, which the demo doesn't retry). A refused request
 * leaves the row as it was. A fixed or sliding window's phase comes from `config.start`, so pass
 * a config with the phase the server used. A sliding window's row carries `prev` from one request
 * to the next, as the server's does.
 *
 * `config` may be a function of the request's instant: the config in force then (an override set
 * during the run). The row is carried over to it as it is: for a token bucket, its value from its
 * last update, refilled at the new rate and clamped to the new capacity (docs/reference.md,
 * "Changing a limit's config"), so a change grants no tokens.
 */
export function replay(
  requests: readonly Taken[],
  config: RateLimitConfig | ((at: number) => RateLimitConfig),
  opts: { reserve?: boolean } = {},
): Decision[] {
  const reserve = opts.reserve === true;
  const configAt = typeof config === "function" ? config : () => config;
  let state: RateLimitState | null = null;
  const out: Decision[] = [];
  for (const { at, count } of requests) {
    const d = decideRateLimit(state, configAt(at), { now: at, count, reserve });
    if (d.ok) {
      // The row as the server stores it: an approximate sliding window's `prev`, an exact one's `log`.
      state = { value: d.value, ts: d.ts, ...(d.prev === undefined ? {} : { prev: d.prev }), ...(d.log === undefined ? {} : { log: d.log }) };
      out.push(d.retryAfter === undefined ? { at, count, ok: true } : { at, count, ok: true, retryAfter: d.retryAfter });
    } else {
      out.push(reserve ? { at, count, ok: false } : { at, count, ok: false, retryAfter: d.retryAfter });
    }
  }
  return out;
}

/**
 * Compares what the server decided with what the replay decided, request by request, and
 * describes the first `limit` differences (in `ok`, or in `retryAfter` where both have one).
 */
export function disagreements(actual: readonly Decision[], expected: readonly Decision[], limit = 3): string[] {
  const out: string[] = [];
  if (actual.length !== expected.length) out.push(`${actual.length} decisions, replay made ${expected.length}`);
  const n = Math.min(actual.length, expected.length);
  for (let i = 0; i < n && out.length < limit; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    const what = (d: Decision) => `${d.ok ? "ok" : "refused"}${d.retryAfter === undefined ? "" : ` retryAfter ${d.retryAfter}`}`;
    const sameWait = a.retryAfter === undefined || e.retryAfter === undefined || a.retryAfter === e.retryAfter;
    if (a.ok !== e.ok || !sameWait) out.push(`request #${i + 1} (count ${a.count}): ${what(a)}, expected ${what(e)}`);
  }
  return out;
}

/** A scheduled job as the example app records it (llmJobs): all times in ms since the epoch. */
export type Job = { tokens: number; requestedAt: number; notBefore: number; ranAt?: number };

/** How the jobs' runs compare with their promised instants. */
export type Timing = {
  jobs: number;
  /** Jobs that never ran. */
  missing: number;
  /** Jobs that ran before `notBefore`: the tokens weren't there yet. */
  early: number;
  /** Jobs that ran later than `notBefore + jitterMs`. */
  late: number;
  /** The largest `ranAt − notBefore`, ms (-Infinity when no job ran). */
  worstDelay: number;
};

/** Measures the jobs' runs against their promised instants and the allowed jitter (ms). */
export function timing(jobs: readonly Job[], jitterMs: number): Timing {
  let missing = 0;
  let early = 0;
  let late = 0;
  let worstDelay = -Infinity;
  for (const job of jobs) {
    if (job.ranAt === undefined) {
      missing++;
      continue;
    }
    const delay = job.ranAt - job.notBefore;
    worstDelay = Math.max(worstDelay, delay);
    if (delay < 0) early++;
    else if (delay > jitterMs) late++;
  }
  return { jobs: jobs.length, missing, early, late, worstDelay };
}

/**
 * The most a limit can let through over [start, end] starting full: `capacity` plus `rate` for
 * each period elapsed (token bucket) or each window boundary crossed (fixed window).
 */
export function ceiling(limit: Limit, start: number, end: number): number {
  const refills =
    limit.kind === "token bucket"
      ? Math.max(0, end - start) / limit.period
      : Math.max(0, windowIndex(end, limit) - windowIndex(start, limit));
  return limit.capacity + limit.rate * refills;
}

/**
 * heldAtOnce is the most leases held at one instant, each held over [from, to): a sweep over the
 * ends, where an end at the same instant as a start frees its slot first (a lease counts while
 * `expiresAt > now`).
 */
export function heldAtOnce(leases: readonly { from: number; to: number }[]): number {
  const events = leases.flatMap((l) => (l.to > l.from ? [{ at: l.from, d: 1 }, { at: l.to, d: -1 }] : []));
  events.sort((a, b) => a.at - b.at || a.d - b.d);
  let held = 0;
  let most = 0;
  for (const e of events) {
    held += e.d;
    most = Math.max(most, held);
  }
  return most;
}

/**
 * An acquire of a concurrency limit at `at`: what the limit held just before (`held` leases, the
 * earliest expiring at `earliest`, UTC ms) and what it decided.
 */
export type LeaseDecision = { at: number; held: number; earliest?: number; ok: boolean; retryAfter?: number };

/**
 * leaseDisagreements lists, in words, the acquires that did not decide as the lease model says:
 * a slot while fewer than `capacity` are held; else refused, with `retryAfter` the ms until the
 * earliest lease expires (with exactly `capacity` held, that lease's expiry frees the slot).
 */
export function leaseDisagreements(decisions: readonly LeaseDecision[], capacity: number): string[] {
  return decisions.flatMap((d) => {
    const expected = d.held < capacity ? "admitted" : d.earliest === undefined ? "refused" : `refused for ${d.earliest - d.at} ms`;
    const actual = d.ok ? "admitted" : `refused for ${d.retryAfter} ms`;
    const agrees = d.held < capacity ? d.ok : !d.ok && d.earliest !== undefined && d.retryAfter === d.earliest - d.at;
    return agrees ? [] : [`at ${d.at} with ${d.held} held: ${actual}, expected ${expected}`];
  });
}
