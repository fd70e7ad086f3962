// Metrics of limits with `metrics: true`: what one request records (an event), how events sum into
// per-minute summaries, and the shapes the metrics functions take and return. Pure: the component
// (src/component/metrics.ts) reads and writes the tables, and passes the clock.
import { heatValidator } from "../shapes/heat-validators.js";
import { v, type Infer } from "convex/values";
import { literals } from "convex-helpers/validators";
import { MINUTE } from "../kinds/algebra.js";
import { math } from "../core/math.js";

/** METRICS_BUCKET_MS is the length of a metrics time bucket: one minute (ms), aligned to UTC minutes. */
export const METRICS_BUCKET_MS = MINUTE;

/** MAX_METRICS_SPAN_MS is the longest span one `metrics` call may cover: one day (1,440 buckets). */
export const MAX_METRICS_SPAN_MS = 1440 * METRICS_BUCKET_MS;

/** MAX_TOP_KEYS is the most top offenders one `metrics` call may ask for (100). */
export const MAX_TOP_KEYS = 100;

/**
 * What happened to one request at one limit: `"admitted"` (tokens taken, run now), `"reserved"`
 * (tokens taken ahead, run after `retryAfter`), `"refused"` (nothing taken), `"cancelled"` (a run
 * queued by `runWhenAllowed` cancelled before it started, by `cancelRun`; `count` is the tokens it
 * had taken). A dry-run limit records what it would have decided.
 */
export const metricOutcome = literals("admitted", "reserved", "refused", "cancelled");
export type MetricOutcome = Infer<typeof metricOutcome>;

/** The fields of one metric event, as `lib.rateLimit` and `lib.limitAll` insert it. */
export const metricEventFields = {
  name: v.string(),
  key: v.optional(v.string()),
  outcome: metricOutcome,
  /** Tokens the request asked for. */
  count: v.number(),
  /** When it was decided (ms). */
  ts: v.number(),
  /**
   * Set when an override decided: the key's own (`"key"`), its network's (`"network"`: a config, or
   * `{ allow: true }`, which admits) or its tier's (`"tier"`).
   */
  by: v.optional(literals("key", "network", "tier")),
  /** Set when the request was refused by a block (an override's `blockedUntil`) or a lockout. */
  blocked: v.optional(v.boolean()),
  /**
   * Set when the request was queued to wait until allowed (`runWhenAllowed`, `waitUntilAllowed`):
   * how long its work waits, from the decision to its `runAt` (ms, ≥ 0).
   */
  waited: v.optional(v.number()),
};
const metricEventObject = v.object(metricEventFields);

/** A decision's metric event before it is recorded: its fields without the limit's name and key and the instant. */
export const decisionEvent = v.object({
  outcome: metricEventFields.outcome,
  count: metricEventFields.count,
  by: metricEventFields.by,
  blocked: metricEventFields.blocked,
  waited: metricEventFields.waited,
});
/** A decision's metric event before it is recorded (see {@link decisionEvent}). */
export type DecisionEvent = Infer<typeof decisionEvent>;
export type MetricEvent = Infer<typeof metricEventObject>;

/** The counters of a summary: requests and tokens per outcome. */
export const metricCountFields = {
  /** Requests admitted now, and the tokens they took. */
  admitted: v.number(),
  admittedTokens: v.number(),
  /** Requests that reserved tokens ahead (run later), and the tokens they reserved. */
  reserved: v.number(),
  reservedTokens: v.number(),
  /** Requests refused, and the tokens they asked for. */
  refused: v.number(),
  refusedTokens: v.number(),
  ...{
    /** Requests decided under an override's config (a key's own, or its tier's). */
    overridden: v.number(),
    /** Requests refused by a block (an override's `blockedUntil`) or a lockout; counted in `refused` too. */
    blocked: v.number(),
  },
  ...waitCountFields(),
};

/**
 * The counters of waiting until allowed, absent while 0 (so a limit that never waits reports
 * what it reported before waiting existed): `queued`, requests queued by `runWhenAllowed` or
 * `waitUntilAllowed` (counted in `admitted` or `reserved` too: a run due at once is admitted);
 * `waitedMs`, the total ms their work waits, from the decision to its `runAt` (the mean wait is
 * `waitedMs / queued`); `cancelled`, runs cancelled before they started (`cancelRun`), and
 * `cancelledTokens`, the tokens they had taken.
 */
function waitCountFields() {
  return { queued: v.optional(v.number()), waitedMs: v.optional(v.number()), cancelled: v.optional(v.number()), cancelledTokens: v.optional(v.number()) };
}
/** The names of the counters of waiting (see {@link waitCountFields}). */
const WAIT_COUNTS = ["queued", "waitedMs", "cancelled", "cancelledTokens"] as const;

/**
 * The counters as summaries store them: `overridden` and `blocked` may be missing from summaries
 * folded before overrides existed, and count as 0.
 */
export const metricStoredCountFields = { ...metricCountFields, overridden: v.optional(v.number()), blocked: v.optional(v.number()) };
const metricCountsObject = v.object(metricCountFields);
const metricStoredCountsObject = v.object(metricStoredCountFields);
/** The counters of a stored summary (see {@link metricStoredCountFields}). */
export type StoredCounts = Infer<typeof metricStoredCountsObject>;
export type MetricCounts = Infer<typeof metricCountsObject>;

/** One minute of one limit's metrics: `bucket` is the minute's start (ms, UTC-aligned). */
export const metricBucket = v.object({ bucket: v.number(), ...metricCountFields });
export type MetricBucket = Infer<typeof metricBucket>;

/** One key's refusals over the span asked for: a top offender. */
export const metricTopKey = v.object({
  /** The key; absent for the limit's global (unkeyed) bucket. */
  key: v.optional(v.string()),
  /** Requests of this key refused, and the tokens they asked for. */
  refused: v.number(),
  refusedTokens: v.number(),
});
export type MetricTopKey = Infer<typeof metricTopKey>;

/** The arguments of `metrics.get` (see `RateLimiter.metrics`). */
export const metricsArgs = {
  /** The limit's name. */
  name: v.string(),
  /** The span's start (ms); rounded down to a whole minute. */
  from: v.number(),
  /** The span's end (ms, exclusive); rounded up to a whole minute. At most a day after `from`. */
  to: v.number(),
  /** How many top offenders (keys refused most) to return; default 0, at most 100. */
  topKeys: v.optional(v.number()),
};

/** What `metrics.get` returns (see `RateLimiter.metrics`). */
export const metricsResult = v.object({
  /** The span covered, in whole minutes: `from` rounded down, `to` rounded up (ms). */
  from: v.number(),
  to: v.number(),
  /** The minutes of the span that saw requests, oldest first; a minute not listed saw none. */
  buckets: v.array(metricBucket),
  /** The span's totals. */
  total: metricCountsObject,
  /** The keys refused most over the span, most first (ties: more tokens, then key order). */
  top: v.array(metricTopKey),
  /** Events not yet folded into summaries, counted in from their own records. */
  unfolded: v.number(),
  /**
   * False when there were more unfolded events in the span than one query reads (4,000), so the
   * counts miss some: run the fold (`RateLimiter.foldMetrics`) more often; or, with `topKeys`,
   * more per-key summaries than it reads (4,000), so `top` may miss some: ask for a shorter span.
   */
  complete: v.boolean(),
  /**
   * With `mutationMs` (`RateLimiter.metrics`, a transactional limit): how hot its busiest minute
   * ran against the sizing rule, from the metrics (see `heatOfMetrics`); absent otherwise.
   */
  heat: v.optional(heatValidator),
});
export type MetricsResult = Infer<typeof metricsResult>;

/** The arguments of `metrics.fold` (see `RateLimiter.foldMetrics`). */
export const foldArgs = {
  /** Events folded per transaction; default 500, at most 2,000. */
  batchSize: v.optional(v.number()),
  /** How long folded minutes are kept (ms) before the fold deletes them; default 7 days. */
  retainFor: v.optional(v.number()),
};

/** What one transaction of `metrics.fold` did. */
export const foldResult = v.object({
  /** Events folded into summaries (and deleted). */
  folded: v.number(),
  /** Summaries older than `retainFor` deleted. */
  pruned: v.number(),
  /** Whether everything is folded and pruned; otherwise the next batch is scheduled. */
  done: v.boolean(),
});
export type FoldResult = Infer<typeof foldResult>;

/** bucketOf returns the start (ms) of the minute holding instant `ts`. */
export function bucketOf(ts: number): number {
  return math.floor(ts / METRICS_BUCKET_MS) * METRICS_BUCKET_MS;
}

/**
 * outcomeOf names what a decision did: refused unless `ok`; reserved when the tokens were taken
 * ahead (`retryAfter` set); admitted otherwise.
 */
export function outcomeOf(decision: { ok: boolean; retryAfter?: number | undefined }): MetricOutcome {
  if (!decision.ok) return "refused";
  return decision.retryAfter === undefined ? "admitted" : "reserved";
}

/** zeroCounts returns counters with nothing counted. */
export function zeroCounts(): MetricCounts {
  return { admitted: 0, admittedTokens: 0, reserved: 0, reservedTokens: 0, refused: 0, refusedTokens: 0, overridden: 0, blocked: 0 };
}

/**
 * addEvent returns `counts` with one more request of `outcome` asking for `count` tokens, decided
 * under an override (`by`) or refused by a block or lockout (`blocked`) when the event says so.
 */
export function addEvent(counts: MetricCounts, event: Pick<MetricEvent, "outcome" | "count" | "by" | "blocked" | "waited">): MetricCounts {
  const { outcome, count } = event;
  const flagged =
    event.by === undefined && event.blocked !== true
      ? counts
      : { ...counts, overridden: counts.overridden + (event.by === undefined ? 0 : 1), blocked: counts.blocked + (event.blocked === true ? 1 : 0) };
  const queued = event.waited === undefined ? flagged : { ...flagged, queued: (flagged.queued ?? 0) + 1, waitedMs: (flagged.waitedMs ?? 0) + event.waited };
  return byOutcome(queued, outcome, count);
}

function byOutcome(counts: MetricCounts, outcome: MetricOutcome, count: number): MetricCounts {
  switch (outcome) {
    case "admitted":
      return { ...counts, admitted: counts.admitted + 1, admittedTokens: counts.admittedTokens + count };
    case "reserved":
      return { ...counts, reserved: counts.reserved + 1, reservedTokens: counts.reservedTokens + count };
    case "refused":
      return { ...counts, refused: counts.refused + 1, refusedTokens: counts.refusedTokens + count };
    case "cancelled":
      return { ...counts, cancelled: (counts.cancelled ?? 0) + 1, cancelledTokens: (counts.cancelledTokens ?? 0) + count };
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(never)}`);
    }
  }
}

/** addCounts returns the sum of two sets of counters (a counter of waiting absent from both stays absent). */
export function addCounts(a: MetricCounts, b: MetricCounts): MetricCounts {
  const sum: MetricCounts = {
    admitted: a.admitted + b.admitted,
    admittedTokens: a.admittedTokens + b.admittedTokens,
    reserved: a.reserved + b.reserved,
    reservedTokens: a.reservedTokens + b.reservedTokens,
    refused: a.refused + b.refused,
    refusedTokens: a.refusedTokens + b.refusedTokens,
    overridden: a.overridden + b.overridden,
    blocked: a.blocked + b.blocked,
  };
  for (const field of WAIT_COUNTS) {
    if (a[field] !== undefined || b[field] !== undefined) sum[field] = (a[field] ?? 0) + (b[field] ?? 0);
  }
  return sum;
}

/** The counters of a stored summary, without its other fields (a counter it lacks is 0). */
export function countsOf(doc: StoredCounts): MetricCounts {
  return addCounts(zeroCounts(), { ...doc, overridden: doc.overridden ?? 0, blocked: doc.blocked ?? 0 });
}

/**
 * topOffenders ranks keys by their refusals: most refused first, then most tokens refused, then
 * key order (the global key, `undefined`, first); keys never refused are left out. Returns the
 * first `n`.
 */
export function topOffenders(refusals: Iterable<MetricTopKey>, n: number): MetricTopKey[] {
  const byKey = new Map<string | undefined, MetricTopKey>();
  for (const r of refusals) {
    const seen = byKey.get(r.key);
    byKey.set(r.key, {
      ...(r.key === undefined ? {} : { key: r.key }),
      refused: (seen?.refused ?? 0) + r.refused,
      refusedTokens: (seen?.refusedTokens ?? 0) + r.refusedTokens,
    });
  }
  const order = (k: string | undefined) => (k === undefined ? "" : `\u0001${k}`);
  return [...byKey.values()]
    .filter((r) => r.refused > 0)
    .sort(
      (a, b) =>
        b.refused - a.refused ||
        b.refusedTokens - a.refusedTokens ||
        (order(a.key) < order(b.key) ? -1 : order(a.key) > order(b.key) ? 1 : 0),
    )
    .slice(0, n);
}
