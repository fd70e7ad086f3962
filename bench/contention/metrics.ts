// `metrics: true` in the contention model, ours only: a request's transaction also inserts a metric
// event, indexed by its creation time, and the fold (`metrics.fold`) reads events by creation time
// up to a cutoff, adds them to per-minute summaries and deletes them. Requests never read either
// table, so an event adds no read; but a refusal with metrics writes, and so is checked.
import { settledAttempt, type Attempt } from "./engine.js";
import type { ReadEntry, Store, StoreOp } from "./store.js";

/** The length of a metrics minute (ms), as `METRICS_BUCKET_MS`. */
const MINUTE_MS = 60_000;

/**
 * withMetricEvent is `attempt` as it runs for a limit with `metrics: true`: when it decides
 * (admitted or refused), its transaction also inserts an event created at its start. An insert only:
 * it adds nothing to the read set.
 */
export function withMetricEvent(attempt: Attempt): Attempt {
  if (attempt.outcome === "none") return attempt;
  const bucket = Math.floor(attempt.now / MINUTE_MS) * MINUTE_MS;
  return { ...attempt, ops: [...attempt.ops, { op: "insertEvent", createdAt: attempt.now, bucket }] };
}

/**
 * oursFold is one transaction of `metrics.fold` at `now`: it reads up to `batchSize` events created
 * before `now - settleMs`, in creation order (its read set: that index range, ending at the last
 * event read when the batch is full), looks up and writes each minute's summary, and deletes the
 * events. `folded` counts the events once it commits.
 */
export function oursFold(store: Store, now: number, batchSize: number, settleMs: number, folded: { events: number }): Attempt {
  const cutoff = now - settleMs;
  const batch = store.eventsAt(now, cutoff).slice(0, batchSize);
  const full = batch.length === batchSize;
  const reads: ReadEntry[] = [{ table: "events", lo: -Infinity, hi: full ? batch[batch.length - 1]!.createdAt : cutoff }];
  const count = { queries: 1, dependent: 1 };
  const perBucket = new Map<number, number>();
  for (const e of batch) perBucket.set(e.bucket, (perBucket.get(e.bucket) ?? 0) + 1);
  const ops: StoreOp[] = [];
  for (const [bucket, n] of perBucket) {
    reads.push({ table: "summaries", lo: bucket, hi: bucket });
    count.queries++;
    count.dependent++;
    ops.push({ op: "addToSummary", bucket, count: n });
  }
  for (const e of batch) ops.push({ op: "deleteEvent", id: e.id });
  return settledAttempt(now, reads, ops, count, () => {
    folded.events += batch.length;
  });
}
