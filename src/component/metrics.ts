// Metrics of limits with `metrics: true`. The hot path only inserts events (`recordMetric`, called
// by lib.rateLimit and lib.limitAll): one new document per request, no read, so no conflict with
// anything. `fold` later sums the events into per-minute summaries and deletes them, in the same
// transaction, so every event counts exactly once: either still as an event or already in a
// summary, never both. `get` reads both, so its counts are current whether or not the fold ran.
import { DAY } from "../shared/algebra.js";
import {
  addCounts,
  addEvent,
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
} from "../shared/metrics.js";
import { invalid, validateNameAndKey } from "../shared/validate.js";
import { api } from "./_generated/api.js";
import type { Doc } from "./_generated/dataModel.js";
import { mutation, query, type DatabaseWriter } from "./_generated/server.js";

/** FOLD_BATCH is how many events `fold` sums per transaction by default (500). */
export const FOLD_BATCH = 500;
/** MAX_FOLD_BATCH is the most events `fold` may be asked to sum per transaction (2,000). */
export const MAX_FOLD_BATCH = 2000;
/** DEFAULT_RETAIN_MS is how long `fold` keeps folded minutes by default: 7 days (ms). */
export const DEFAULT_RETAIN_MS = 7 * DAY;
/**
 * FOLD_SETTLE_MS: `fold` leaves events younger than this (ms) for its next run. Its read of the
 * events then ends at a fixed instant instead of the end of the table, so requests inserting new
 * events meanwhile don't conflict with it (only a request still running from before that instant
 * can, and then the fold is retried, never the request).
 */
export const FOLD_SETTLE_MS = 1000;
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
  outcome: MetricOutcome,
  count: number,
  ts: number,
): Promise<void> {
  await db.insert("metricEvents", { name, ...(key === undefined ? {} : { key }), outcome, count, ts });
}

/** A minute's summary being folded into: its stored row, if any, and its counts so far. */
type BucketSum = { name: string; bucket: number; doc: Doc<"metricBuckets"> | null; counts: MetricCounts };
/** A key's refusals in a minute being folded into: its stored row, if any, and its counts so far. */
type KeySum = { name: string; bucket: number; doc: Doc<"metricKeys"> | null; counts: MetricTopKey };

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
 * minute) and per (name, minute, key) with refusals in the batch.
 */
export const fold = mutation({
  args: foldArgs,
  returns: foldResult,
  handler: async (ctx, args): Promise<FoldResult> => {
    const batchSize = args.batchSize ?? FOLD_BATCH;
    if (!(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= MAX_FOLD_BATCH)) {
      throw invalid("batchSize", batchSize, `must be a whole number from 1 to ${MAX_FOLD_BATCH}`);
    }
    const retainFor = args.retainFor ?? DEFAULT_RETAIN_MS;
    if (!(Number.isFinite(retainFor) && retainFor >= 0)) {
      throw invalid("retainFor", retainFor, "must be a finite number of ms ≥ 0");
    }
    const now = Date.now();
    const events = await ctx.db
      .query("metricEvents")
      .withIndex("by_creation_time", (q) => q.lt("_creationTime", now - FOLD_SETTLE_MS))
      .take(batchSize);
    const buckets = new Map<string, BucketSum>();
    const keys = new Map<string, KeySum>();
    for (const event of events) {
      const bucket = bucketOf(event.ts);
      const id = JSON.stringify([event.name, bucket]);
      let summary = buckets.get(id);
      if (summary === undefined) {
        const doc = await ctx.db
          .query("metricBuckets")
          .withIndex("name", (q) => q.eq("name", event.name).eq("bucket", bucket))
          .unique();
        summary = { name: event.name, bucket, doc, counts: doc ? countsOf(doc) : zeroCounts() };
        buckets.set(id, summary);
      }
      summary.counts = addEvent(summary.counts, event.outcome, event.count);
      if (event.outcome === "refused") {
        const keyId = JSON.stringify([event.name, bucket, event.key ?? null]);
        let offender = keys.get(keyId);
        if (offender === undefined) {
          const doc = await ctx.db
            .query("metricKeys")
            .withIndex("name", (q) => q.eq("name", event.name).eq("bucket", bucket).eq("key", event.key))
            .unique();
          const key = event.key === undefined ? {} : { key: event.key };
          offender = {
            name: event.name,
            bucket,
            doc,
            counts: { ...key, refused: doc?.refused ?? 0, refusedTokens: doc?.refusedTokens ?? 0 },
          };
          keys.set(keyId, offender);
        }
        offender.counts = {
          ...offender.counts,
          refused: offender.counts.refused + 1,
          refusedTokens: offender.counts.refusedTokens + event.count,
        };
      }
      await ctx.db.delete(event._id);
    }
    for (const { name, bucket, doc, counts } of buckets.values()) {
      if (doc) await ctx.db.patch(doc._id, counts);
      else await ctx.db.insert("metricBuckets", { name, bucket, ...counts });
    }
    for (const { name, bucket, doc, counts } of keys.values()) {
      if (doc) await ctx.db.patch(doc._id, { refused: counts.refused, refusedTokens: counts.refusedTokens });
      else await ctx.db.insert("metricKeys", { name, bucket, ...counts });
    }
    let pruned = 0;
    if (events.length < batchSize) {
      // Every event old enough is folded: delete what has aged out, in what is left of the batch.
      const before = now - retainFor;
      const budget = batchSize - events.length;
      const old = await ctx.db
        .query("metricBuckets")
        .withIndex("bucket", (q) => q.lt("bucket", bucketOf(before)))
        .take(budget);
      const oldKeys = await ctx.db
        .query("metricKeys")
        .withIndex("bucket", (q) => q.lt("bucket", bucketOf(before)))
        .take(budget - old.length);
      for (const doc of [...old, ...oldKeys]) await ctx.db.delete(doc._id);
      pruned = old.length + oldKeys.length;
      if (pruned < budget) return { folded: events.length, pruned, done: true };
    }
    await ctx.scheduler.runAfter(0, api.metrics.fold, { batchSize, retainFor });
    return { folded: events.length, pruned, done: false };
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
    const folded = await ctx.db
      .query("metricBuckets")
      .withIndex("name", (q) => q.eq("name", name).gte("bucket", from).lt("bucket", to))
      .collect();
    for (const doc of folded) counts.set(doc.bucket, addCounts(counts.get(doc.bucket) ?? zeroCounts(), countsOf(doc)));
    const events = await ctx.db
      .query("metricEvents")
      .withIndex("name", (q) => q.eq("name", name).gte("ts", from).lt("ts", to))
      .take(MAX_UNFOLDED_READ + 1);
    const complete = events.length <= MAX_UNFOLDED_READ;
    const unfolded = events.slice(0, MAX_UNFOLDED_READ);
    for (const event of unfolded) {
      const bucket = bucketOf(event.ts);
      counts.set(bucket, addEvent(counts.get(bucket) ?? zeroCounts(), event.outcome, event.count));
    }
    const buckets: MetricBucket[] = [...counts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([bucket, c]) => ({ bucket, ...c }));
    const total = buckets.reduce<MetricCounts>((sum, b) => addCounts(sum, countsOf(b)), zeroCounts());
    let top: MetricTopKey[] = [];
    let keysComplete = true;
    if (topKeys > 0) {
      const rows = await ctx.db
        .query("metricKeys")
        .withIndex("name", (q) => q.eq("name", name).gte("bucket", from).lt("bucket", to))
        .take(MAX_KEY_ROWS_READ + 1);
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
