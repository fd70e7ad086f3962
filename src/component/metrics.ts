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
} from "../shared/metrics.js";
import {
  DEFAULT_RETAIN_MS,
  FOLD_BATCH,
  FOLD_SETTLE_MS,
  foldFlow,
  MAX_FOLD_BATCH,
  pruneFlow,
  type FoldQuery,
  type FoldRead,
  type FoldWrite,
} from "../shared/metrics-fold.js";
import { runPlanAsync } from "../shared/rows.js";
import { invalid, validateNameAndKey } from "../shared/validate.js";
import { api } from "./_generated/api.js";
import type { Doc, Id } from "./_generated/dataModel.js";
import { mutation, query, type DatabaseReader, type DatabaseWriter } from "./_generated/server.js";

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
  event: Pick<MetricEvent, "outcome" | "count" | "by" | "blocked">,
  ts: number,
): Promise<void> {
  await db.insert("metricEvents", { name, ...(key === undefined ? {} : { key }), ...event, ts });
}

/** The ids of the metrics tables, for the fold's plan. */
type Ids = { event: Id<"metricEvents">; bucket: Id<"metricBuckets">; key: Id<"metricKeys"> };

/** Answers the fold's reads (see `FoldQuery`) from the metrics tables. */
async function foldRead(db: DatabaseReader, q: FoldQuery): Promise<FoldRead<Ids>> {
  const none: FoldRead<Ids> = { events: [], buckets: [], keys: [] };
  const bucketRowOf = ({ _id, _creationTime: _c, ...fields }: Doc<"metricBuckets">) => ({ ...fields, id: _id });
  const keyRowOf = ({ _id, _creationTime: _c, ...fields }: Doc<"metricKeys">) => ({ ...fields, id: _id });
  switch (q.read) {
    case "events": {
      const docs = await db
        .query("metricEvents")
        .withIndex("by_creation_time", (i) => i.lt("_creationTime", q.createdBefore))
        .take(q.take);
      return { ...none, events: docs.map(({ _id, _creationTime: _c, ...fields }) => ({ ...fields, id: _id })) };
    }
    case "bucket": {
      const { name, bucket } = q;
      const doc = await db
        .query("metricBuckets")
        .withIndex("name", (i) => i.eq("name", name).eq("bucket", bucket))
        .unique();
      return { ...none, buckets: doc ? [bucketRowOf(doc)] : [] };
    }
    case "key": {
      const { name, bucket, key } = q;
      const doc = await db
        .query("metricKeys")
        .withIndex("name", (i) => i.eq("name", name).eq("bucket", bucket).eq("key", key))
        .unique();
      return { ...none, keys: doc ? [keyRowOf(doc)] : [] };
    }
    case "aged": {
      const { before, take } = q;
      if (q.table === "metricBuckets") {
        const docs = await db.query("metricBuckets").withIndex("bucket", (i) => i.lt("bucket", before)).take(take);
        return { ...none, buckets: docs.map(bucketRowOf) };
      }
      const docs = await db.query("metricKeys").withIndex("bucket", (i) => i.lt("bucket", before)).take(take);
      return { ...none, keys: docs.map(keyRowOf) };
    }
    default: {
      const never: never = q;
      throw new Error(`unknown read ${JSON.stringify(never)}`);
    }
  }
}

/** Executes one of the fold's writes. */
async function foldWrite(db: DatabaseWriter, w: FoldWrite<Ids>): Promise<void> {
  switch (w.op) {
    case "delete event":
    case "delete bucket":
    case "delete key":
      return db.delete(w.id);
    case "patch bucket":
      return db.patch(w.id, w.counts);
    case "patch key":
      return db.patch(w.id, w.counts);
    case "insert bucket":
      await db.insert("metricBuckets", w.fields);
      return;
    case "insert key":
      await db.insert("metricKeys", w.fields);
      return;
    default: {
      const never: never = w;
      throw new Error(`unknown write ${JSON.stringify(never)}`);
    }
  }
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
 * whether it goes on are planned by `foldFlow` and `pruneFlow` (src/shared/metrics-fold.ts).
 */
export const fold = mutation({
  args: foldArgs,
  returns: foldResult,
  handler: async (ctx, args): Promise<FoldResult> => {
    const read = (q: FoldQuery) => foldRead(ctx.db, q);
    const fold = await runPlanAsync(foldFlow<Ids>(args, Date.now()), read);
    for (const w of fold.writes) await foldWrite(ctx.db, w);
    // The prune's reads come after the fold's writes: it must see the summaries just written.
    const prune = await runPlanAsync(pruneFlow<Ids>(fold), read);
    for (const w of prune.writes) await foldWrite(ctx.db, w);
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
      counts.set(bucket, addEvent(counts.get(bucket) ?? zeroCounts(), event));
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
