// The fold's plan: which metric events one transaction sums, into which per-minute summaries, and
// which aged summaries it deletes, in two steps: `foldFlow` sums a batch of events, `pruneFlow`
// then deletes what has aged out and says whether another transaction follows. Pure: the component
// (metrics.fold) answers the reads from its tables and executes the writes, passing the clock.
import { DAY } from "../kinds/algebra.js";
import {
  addEvent,
  bucketOf,
  countsOf,
  zeroCounts,
  type FoldResult,
  type MetricCounts,
  type MetricEvent,
  type MetricTopKey,
  type StoredCounts,
} from "./metrics.js";
import { invalid } from "../validation/validate.js";

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

/** The document ids of the metrics tables as the store names them (the component: `Id<…>`s). */
export type FoldIds = { event: unknown; bucket: unknown; key: unknown };

/** A stored event with its id. */
export type StoredEvent<I extends FoldIds> = MetricEvent & { id: I["event"] };
/** A stored per-minute summary (`metricBuckets`) with its id. */
export type StoredBucket<I extends FoldIds> = StoredCounts & { id: I["bucket"]; name: string; bucket: number };
/** A stored per-key summary of refusals (`metricKeys`) with its id. */
export type StoredKey<I extends FoldIds> = MetricTopKey & { id: I["key"]; name: string; bucket: number };

/**
 * A read the fold asks for: `events`, up to `take` events created before `createdBefore` (ms), in
 * creation order; `bucket`, the summary of one name and minute (none or one); `key`, the refusals
 * of one name, minute and key (none or one; `key` absent: the global key); `aged`, up to `take`
 * summaries of `table` whose minute starts before `before` (ms), in minute order.
 */
export type FoldQuery =
  | { read: "events"; createdBefore: number; take: number }
  | { read: "bucket"; name: string; bucket: number }
  | { read: "key"; name: string; bucket: number; key: string | undefined }
  | { read: "aged"; table: "metricBuckets" | "metricKeys"; before: number; take: number };

/** The answer to a {@link FoldQuery}: the documents found, each in its table's list (else none). */
export type FoldRead<I extends FoldIds> = { events: StoredEvent<I>[]; buckets: StoredBucket<I>[]; keys: StoredKey<I>[] };

/** A write the fold asks for, to one of the metrics tables. */
export type FoldWrite<I extends FoldIds> =
  | { op: "delete event"; id: I["event"] }
  | { op: "patch bucket"; id: I["bucket"]; counts: MetricCounts }
  | { op: "insert bucket"; fields: MetricCounts & { name: string; bucket: number } }
  | { op: "patch key"; id: I["key"]; counts: { refused: number; refusedTokens: number } }
  | { op: "insert key"; fields: MetricTopKey & { name: string; bucket: number } }
  | { op: "delete bucket"; id: I["bucket"] }
  | { op: "delete key"; id: I["key"] };

/** The arguments `fold` runs with, defaults resolved: what it passes on when it reschedules itself. */
export type FoldSettings = { batchSize: number; retainFor: number };

/**
 * What {@link foldFlow} decided: the writes that fold the batch, how many events it folded, the
 * settings, and, when the batch wasn't full, what {@link pruneFlow} may delete: summaries of minutes
 * starting before `before` (ms), at most `budget` of them (what is left of the batch).
 */
export type FoldPlan<I extends FoldIds> = {
  writes: FoldWrite<I>[];
  folded: number;
  settings: FoldSettings;
  prune?: { before: number; budget: number };
};

/** What {@link pruneFlow} decided: the summaries to delete, what the transaction did, and whether to go on. */
export type PrunePlan<I extends FoldIds> = { writes: FoldWrite<I>[]; result: FoldResult; next?: FoldSettings };

/**
 * foldSettings resolves and checks `fold`'s arguments: `batchSize` (default {@link FOLD_BATCH}) a
 * whole number from 1 to {@link MAX_FOLD_BATCH}, `retainFor` (ms, default {@link DEFAULT_RETAIN_MS})
 * finite and ≥ 0; otherwise an `InvalidRateLimit` error naming the field.
 */
export function foldSettings(args: { batchSize?: number | undefined; retainFor?: number | undefined }): FoldSettings {
  const batchSize = args.batchSize ?? FOLD_BATCH;
  if (!(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= MAX_FOLD_BATCH)) {
    throw invalid("batchSize", batchSize, `must be a whole number from 1 to ${MAX_FOLD_BATCH}`);
  }
  const retainFor = args.retainFor ?? DEFAULT_RETAIN_MS;
  if (!(Number.isFinite(retainFor) && retainFor >= 0)) {
    throw invalid("retainFor", retainFor, "must be a finite number of ms ≥ 0");
  }
  return { batchSize, retainFor };
}

/**
 * foldFlow plans the first step of one transaction of the fold at `now` (ms): checks the arguments
 * ({@link foldSettings}, before any read), reads up to `batchSize` events created before
 * `now - FOLD_SETTLE_MS` (strictly), and sums them per (name, minute) and, for refusals, per
 * (name, minute, key) onto the stored summaries it looks up (each once): a patch where one exists,
 * else an insert. Every event read is deleted, so each is counted exactly once. When fewer than
 * `batchSize` events were read, every settled event is folded and `prune` says what
 * {@link pruneFlow} may delete: summaries older than `retainFor`, within the rest of the batch.
 */
export function* foldFlow<I extends FoldIds>(
  args: { batchSize?: number | undefined; retainFor?: number | undefined },
  now: number,
): Generator<FoldQuery, FoldPlan<I>, FoldRead<I>> {
  const settings = foldSettings(args);
  const { batchSize, retainFor } = settings;
  const { events } = yield { read: "events", createdBefore: now - FOLD_SETTLE_MS, take: batchSize };
  const buckets = new Map<string, { name: string; bucket: number; id?: I["bucket"]; counts: MetricCounts }>();
  const keys = new Map<string, { name: string; bucket: number; id?: I["key"]; counts: MetricTopKey }>();
  for (const event of events) {
    const { name, key } = event;
    const bucket = bucketOf(event.ts);
    const bucketId = JSON.stringify([name, bucket]);
    let summary = buckets.get(bucketId);
    if (summary === undefined) {
      const [doc] = (yield { read: "bucket", name, bucket }).buckets;
      summary = { name, bucket, ...(doc ? { id: doc.id } : {}), counts: doc ? countsOf(doc) : zeroCounts() };
      buckets.set(bucketId, summary);
    }
    summary.counts = addEvent(summary.counts, event);
    if (event.outcome !== "refused") continue;
    const keyId = JSON.stringify([name, bucket, key ?? null]);
    let offender = keys.get(keyId);
    if (offender === undefined) {
      const [doc] = (yield { read: "key", name, bucket, key }).keys;
      const counts = { ...(key === undefined ? {} : { key }), refused: doc?.refused ?? 0, refusedTokens: doc?.refusedTokens ?? 0 };
      offender = { name, bucket, ...(doc ? { id: doc.id } : {}), counts };
      keys.set(keyId, offender);
    }
    offender.counts = { ...offender.counts, refused: offender.counts.refused + 1, refusedTokens: offender.counts.refusedTokens + event.count };
  }
  const writes: FoldWrite<I>[] = events.map((e) => ({ op: "delete event", id: e.id }));
  for (const { name, bucket, id, counts } of buckets.values()) {
    writes.push(id === undefined ? { op: "insert bucket", fields: { name, bucket, ...counts } } : { op: "patch bucket", id, counts });
  }
  for (const { name, bucket, id, counts } of keys.values()) {
    const { refused, refusedTokens } = counts;
    writes.push(id === undefined ? { op: "insert key", fields: { name, bucket, ...counts } } : { op: "patch key", id, counts: { refused, refusedTokens } });
  }
  const plan = { writes, folded: events.length, settings };
  // A full batch may have left settled events behind: prune only once they are all folded.
  if (events.length === batchSize) return plan;
  return { ...plan, prune: { before: bucketOf(now - retainFor), budget: batchSize - events.length } };
}

/**
 * pruneFlow plans the second step of the transaction `fold` planned: with `fold.prune`, it reads
 * up to `budget` summaries per minute (`metricBuckets`) of minutes starting before `before`, then
 * per key (`metricKeys`) within what is left, and deletes them. Its reads must see `fold`'s writes
 * (the component executes them first), so a minute folded and already aged out goes too. Done
 * when the prune took less than its budget; otherwise, as after a full batch (no `prune`), `next`
 * is what the next transaction runs with.
 */
export function* pruneFlow<I extends FoldIds>(fold: FoldPlan<I>): Generator<FoldQuery, PrunePlan<I>, FoldRead<I>> {
  const { folded, settings, prune } = fold;
  if (prune === undefined) return { writes: [], result: { folded, pruned: 0, done: false }, next: settings };
  const { before, budget } = prune;
  const { buckets } = yield { read: "aged", table: "metricBuckets", before, take: budget };
  const { keys } = yield { read: "aged", table: "metricKeys", before, take: budget - buckets.length };
  const writes: FoldWrite<I>[] = [
    ...buckets.map((b): FoldWrite<I> => ({ op: "delete bucket", id: b.id })),
    ...keys.map((k): FoldWrite<I> => ({ op: "delete key", id: k.id })),
  ];
  const pruned = writes.length;
  if (pruned < budget) return { writes, result: { folded, pruned, done: true } };
  return { writes, result: { folded, pruned, done: false }, next: settings };
}
