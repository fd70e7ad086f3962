// Metrics of limits with `metrics: true`. The hot path only inserts events (`recordMetric`, called
// by lib.rateLimit and lib.limitAll): one new document per request, no read, so no conflict with
// anything. `fold` later sums the events into per-minute summaries and deletes them, in the same
// transaction, so every event counts exactly once: either still as an event or already in a
// summary, never both. `get` reads both, so its counts are current whether or not the fold ran.
import {
  addCounts,
  addEvent,
  type MetricEvent,
  bucketOf,
  countsOf,
  foldArgs,
  foldResult,
  MAX_METRICS_SPAN_MS,
  MAX_TOP_KEYS,
  METRICS_BUCKET_MS,
  metricsArgs,
  metricsResult,
  topOffenders,
  zeroCounts,
  type FoldResult,
  type MetricBucket,
  type MetricCounts,
  type MetricOutcome,
  type MetricsResult,
  type MetricTopKey,
} from "../shared/metrics/metrics.js";
import {
  DEFAULT_RETAIN_MS,
  FOLD_BATCH,
  FOLD_SETTLE_MS,
  foldFlow,
  MAX_FOLD_BATCH,
  pruneFlow,
  type FoldQuery,
} from "../shared/metrics/metrics-fold.js";
import { runPlanAsync } from "../shared/shapes/rows.js";
import { invalid, validateNameAndKey } from "../shared/validation/validate.js";
import { api } from "./_generated/api.js";
import { mutation, query, type DatabaseWriter } from "./_generated/server.js";
import { eventsIn, insertMetricEvent, keySummariesIn, readFold, summariesIn, writeFold, type MetricIds } from "./storeMetrics.js";

export { DEFAULT_RETAIN_MS, FOLD_BATCH, FOLD_SETTLE_MS, MAX_FOLD_BATCH };
/** MAX_UNFOLDED_READ is the most events not yet folded that one `get` reads (4,000). */
export const MAX_UNFOLDED_READ = 4000;
/** MAX_KEY_ROWS_READ is the most per-key summaries one `get` reads for its top offenders (4,000). */
export const MAX_KEY_ROWS_READ = 4000;

/**
 * recordMetric inserts one event: a request to limit `name` (and `key`) that was `outcome`,
 * asking for `count` tokens, decided at `ts` (ms). An insert of a new document: no read, and no
 * conflict with any other transaction.
 */
export async function recordMetric(
  db: DatabaseWriter,
  { name, key }: { name: string; key?: string | undefined },
  event: Pick<MetricEvent, "outcome" | "count" | "by" | "blocked" | "waited">,
  ts: number,
): Promise<void> {
  await insertMetricEvent(db, { name, ...(key === undefined ? {} : { key }), ...event, ts });
}

/**
 * Sums the events recorded by limits with `metrics: true` into per-minute summaries per name
 * (`metricBuckets`) and, for refusals, per key (`metricKeys`), deleting each event in the same
 * transaction it is counted in: an event is counted exactly once however often, and however
 * concurrently, the fold runs (overlapping runs conflict and are retried). Events younger than
 * {@link FOLD_SETTLE_MS} are left for the next run. It then deletes summaries older than
 * `retainFor` (ms, default 7 days).
 *
 * Reads at most `batchSize` events per transaction (default {@link FOLD_BATCH}, at most
 * {@link MAX_FOLD_BATCH}) and schedules itself until everything is folded and pruned. Cost per
 * transaction: the events read and deleted, plus one index lookup and one write per (name,
 * minute) and per (name, minute, key) with refusals in the batch. What it reads, writes and
 * whether it goes on are planned by `foldFlow` and `pruneFlow` (src/shared/metrics/metrics-fold.ts).
 */
export const fold = mutation({
  args: foldArgs,
  returns: foldResult,
  handler: async (ctx, args): Promise<FoldResult> => {
    const read = (q: FoldQuery) => readFold(ctx.db, q);
    const fold = await runPlanAsync(foldFlow<MetricIds>(args, Date.now()), read);
    for (const w of fold.writes) await writeFold(ctx.db, w);
    // The prune's reads come after the fold's writes: it must see the summaries just written.
    const prune = await runPlanAsync(pruneFlow<MetricIds>(fold), read);
    for (const w of prune.writes) await writeFold(ctx.db, w);
    if (prune.next) await ctx.scheduler.runAfter(0, api.metrics.fold, prune.next);
    return prune.result;
  },
});

/**
 * Returns a limit's metrics over [`from`, `to`) in whole minutes: each minute that saw requests,
 * the totals, the `topKeys` keys refused most, counting both the folded summaries and the events
 * not yet folded, so the counts are current whether or not the fold has run. See
 * `RateLimiter.metrics`.
 *
 * Cost: one summary read per minute with traffic (at most 1,440: a day), the events of the span
 * not yet folded (at most {@link MAX_UNFOLDED_READ}; beyond that `complete` is false), and with
 * `topKeys` the per-key summaries of the span (at most {@link MAX_KEY_ROWS_READ}).
 */
export const get = query({
  args: metricsArgs,
  returns: metricsResult,
  handler: async (ctx, args): Promise<MetricsResult> => {
    validateNameAndKey(args.name, undefined);
    if (!Number.isFinite(args.from)) throw invalid("from", args.from, "must be a finite number of ms");
    if (!Number.isFinite(args.to)) throw invalid("to", args.to, "must be a finite number of ms");
    if (!(args.to >= args.from)) throw invalid("to", args.to, `must be ≥ from (${args.from})`);
    const topKeys = args.topKeys ?? 0;
    if (!(Number.isInteger(topKeys) && topKeys >= 0 && topKeys <= MAX_TOP_KEYS)) {
      throw invalid("topKeys", topKeys, `must be a whole number from 0 to ${MAX_TOP_KEYS}`);
    }
    const from = bucketOf(args.from);
    const to = bucketOf(args.to) === args.to ? args.to : bucketOf(args.to) + METRICS_BUCKET_MS;
    if (to - from > MAX_METRICS_SPAN_MS) {
      throw invalid("to", args.to, `is more than a day (${MAX_METRICS_SPAN_MS} ms) of whole minutes after from (${args.from})`);
    }
    const { name } = args;
    const counts = new Map<number, MetricCounts>();
    const folded = await summariesIn(ctx.db, name, from, to);
    for (const doc of folded) counts.set(doc.bucket, addCounts(counts.get(doc.bucket) ?? zeroCounts(), countsOf(doc)));
    const events = await eventsIn(ctx.db, name, from, to, MAX_UNFOLDED_READ + 1);
    const complete = events.length <= MAX_UNFOLDED_READ;
    const unfolded = events.slice(0, MAX_UNFOLDED_READ);
    for (const event of unfolded) {
      const bucket = bucketOf(event.ts);
      counts.set(bucket, addEvent(counts.get(bucket) ?? zeroCounts(), event));
    }
    const buckets: MetricBucket[] = [...counts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([bucket, c]) => ({ bucket, ...c }));
    const total = buckets.reduce<MetricCounts>((sum, b) => addCounts(sum, countsOf(b)), zeroCounts());
    let top: MetricTopKey[] = [];
    let keysComplete = true;
    if (topKeys > 0) {
      const rows = await keySummariesIn(ctx.db, name, from, to, MAX_KEY_ROWS_READ + 1);
      keysComplete = rows.length <= MAX_KEY_ROWS_READ;
      const refusals: MetricTopKey[] = rows.slice(0, MAX_KEY_ROWS_READ).map((r) => ({
        ...(r.key === undefined ? {} : { key: r.key }),
        refused: r.refused,
        refusedTokens: r.refusedTokens,
      }));
      for (const event of unfolded) {
        if (event.outcome !== "refused") continue;
        refusals.push({ ...(event.key === undefined ? {} : { key: event.key }), refused: 1, refusedTokens: event.count });
      }
      top = topOffenders(refusals, topKeys);
    }
    return { from, to, buckets, total, top, unfolded: unfolded.length, complete: complete && keysComplete };
  },
});
