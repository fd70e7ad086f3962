// The database adapter of the metrics tables (`metricEvents`, `metricBuckets`, `metricKeys`), as
// store.ts is of the others: the one module that queries and writes them. It answers the fold's
// reads (src/shared/metrics/metrics-fold.ts) and executes its writes, records events and reads a span for
// `metrics.get`. Handlers import it; it imports no handler.
import type { FoldQuery, FoldRead, FoldWrite } from "../shared/metrics/metrics-fold.js";
import type { Doc, Id } from "./_generated/dataModel.js";
import type { DatabaseReader, DatabaseWriter } from "./_generated/server.js";
import type { WithoutSystemFields } from "convex/server";

/** insertMetricEvent records one event: an insert of a new document, no read, so no conflict. */
export async function insertMetricEvent(db: DatabaseWriter, event: WithoutSystemFields<Doc<"metricEvents">>): Promise<void> {
  await db.insert("metricEvents", event);
}

/** The ids of the metrics tables, for the fold's plan. */
export type MetricIds = { event: Id<"metricEvents">; bucket: Id<"metricBuckets">; key: Id<"metricKeys"> };

/** readFold answers the fold's reads (see `FoldQuery`) from the metrics tables. */
export async function readFold(db: DatabaseReader, q: FoldQuery): Promise<FoldRead<MetricIds>> {
  const none: FoldRead<MetricIds> = { events: [], buckets: [], keys: [] };
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

/** writeFold executes one of the fold's writes. */
export async function writeFold(db: DatabaseWriter, w: FoldWrite<MetricIds>): Promise<void> {
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

/** summariesIn returns limit `name`'s per-minute summaries with a bucket in [`from`, `to`) (ms), in order. */
export function summariesIn(db: DatabaseReader, name: string, from: number, to: number): Promise<Doc<"metricBuckets">[]> {
  return db
    .query("metricBuckets")
    .withIndex("name", (q) => q.eq("name", name).gte("bucket", from).lt("bucket", to))
    .collect();
}

/** eventsIn returns up to `limit` of limit `name`'s events not yet folded, decided in [`from`, `to`) (ms), in order. */
export function eventsIn(db: DatabaseReader, name: string, from: number, to: number, limit: number): Promise<Doc<"metricEvents">[]> {
  return db
    .query("metricEvents")
    .withIndex("name", (q) => q.eq("name", name).gte("ts", from).lt("ts", to))
    .take(limit);
}

/** keySummariesIn returns up to `limit` of limit `name`'s per-key refusal summaries with a bucket in [`from`, `to`) (ms). */
export function keySummariesIn(db: DatabaseReader, name: string, from: number, to: number, limit: number): Promise<Doc<"metricKeys">[]> {
  return db
    .query("metricKeys")
    .withIndex("name", (q) => q.eq("name", name).gte("bucket", from).lt("bucket", to))
    .take(limit);
}
