// The core of `npm run simulate`: a discrete-event model of one Convex deployment serving one hot
// limit key, with optimistic concurrency control. Pure and synchronous except where an
// implementation under test is asynchronous (upstream's decision code awaits its database).
//
// - A transaction reads at its snapshot (its start), commits after a service time, and conflicts
//   when a document or index range it read was written by a transaction that committed after its
//   snapshot and no later than its own commit. Then it is retried after a backoff, a few times,
//   and finally fails.
// - The store is versioned by commit time: a read at snapshot `s` sees exactly the commits at or
//   before `s`, so stale snapshots (asynchronous mode, the applier's batch query) are served too.
// - Read sets are index ranges over a key's shard numbers (rows and pending takes), plus single
//   documents; writes name the table, the shard and the document.
// - Metrics (`metrics: true`): a request's transaction also inserts an event, indexed by its
//   creation time; the fold (`metrics.fold`) reads events by creation time up to a cutoff, writes
//   per-minute summaries and deletes the events. Requests never read either table.
// What each request reads and writes comes from the code under test: our `requestFlow` and
// `applyFlow` through {@link flowReader}, or upstream's code through a fake database
// (simulate-upstream.ts).
import { applyFlow, ASYNC_MARGIN, requestFlow, type KeyRead, type KeyRow, type RowFields, type RowOp, type RowQuery } from "../src/shared/flow/flow.js";
import { shardParams } from "../src/shared/shards/layout.js";
import { stateOf } from "../src/shared/kinds/algebra.js";
import { staleVerdict } from "../src/shared/shards/overload.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import type { RateLimitArgs, RateLimitConfig } from "../src/shared/shapes/validators.js";
import type { StoredRow } from "../src/shared/shapes/stored.js";

/**
 * The tables of the model: shard rows, takes recorded but not yet applied, metric events (their
 * "shard" is their creation time, the index the fold reads them by) and per-minute summaries
 * (their "shard" is the minute).
 */
export type Table = "rows" | "takes" | "events" | "summaries";

/**
 * An entry of a read set: an index range of a key's shard numbers, `lo` to `hi` inclusive
 * (±Infinity for the whole key), or one document by id.
 */
export type ReadEntry = { table: Table; lo: number; hi: number } | { table: Table; id: number };

/** A write as the conflict check sees it: the document, its table and its shard (its index key). */
export type Write = { table: Table; shard: number; id: number };

/** A committed transaction: when, and what it wrote. */
export type Commit = { at: number; writes: Write[] };

/** The fields of a row document: upstream writes `value` and `ts` only; ours also `h` (or, in earlier versions, the layout). */
export type RowDocFields = Pick<StoredRow, "value" | "ts" | "shards" | "kind" | "prev" | "log" | "h">;

/** A row as read: its id, shard and fields. */
export type RowDoc = RowDocFields & { id: number; shard: number };

/** A take recorded but not yet applied (ours), or an upstream pending update (shard 0). */
export type TakeDoc = { id: number; shard: number; count: number; ts: number; insertedAt: number; deletedAt?: number };

/** A metric event: created at `createdAt` (its index key), in minute `bucket`. */
export type EventDoc = { id: number; createdAt: number; bucket: number; insertedAt: number; deletedAt?: number };

/** A write to execute at commit. */
export type StoreOp =
  | { op: "insertRow"; shard: number; fields: RowDocFields }
  | { op: "patchRow"; id: number; fields: RowDocFields; replace?: true }
  | { op: "deleteRow"; id: number }
  | { op: "insertTake"; shard: number; count: number; ts: number }
  | { op: "deleteTake"; id: number }
  | { op: "insertEvent"; createdAt: number; bucket: number }
  | { op: "deleteEvent"; id: number }
  | { op: "addToSummary"; bucket: number; count: number };

type RowHistory = { id: number; shard: number; versions: { at: number; fields: RowDocFields | null }[] };

/** covers reports whether read-set entry `r` is invalidated by write `w`. */
export function covers(r: ReadEntry, w: Write): boolean {
  if (r.table !== w.table) return false;
  return "id" in r ? r.id === w.id : r.lo <= w.shard && w.shard <= r.hi;
}

/**
 * Store holds one key's documents versioned by commit time, and the log of commits. Commits must
 * come in order of time; reads may be at any snapshot not older than the last {@link Store.prune}.
 */
export class Store {
  private rows = new Map<number, RowHistory>();
  private takes: TakeDoc[] = [];
  private takeById = new Map<number, TakeDoc>();
  private events: EventDoc[] = [];
  private eventById = new Map<number, EventDoc>();
  /** The per-minute summaries: each minute's document and the events folded into it. */
  readonly summaries = new Map<number, { id: number; count: number }>();
  private log: Commit[] = [];
  private nextId = 1;

  /** The commits so far (oldest first), back to the last prune. */
  get commits(): readonly Commit[] {
    return this.log;
  }

  private fieldsAt(h: RowHistory, snapshot: number): RowDocFields | null {
    for (let i = h.versions.length - 1; i >= 0; i--) {
      const v = h.versions[i]!;
      if (v.at <= snapshot) return v.fields;
    }
    return null;
  }

  /** The rows live at `snapshot` with shard in [lo, hi], in shard order. */
  rowsAt(snapshot: number, lo = -Infinity, hi = Infinity): RowDoc[] {
    const out: RowDoc[] = [];
    for (const h of this.rows.values()) {
      if (h.shard < lo || h.shard > hi) continue;
      const fields = this.fieldsAt(h, snapshot);
      if (fields) out.push({ ...fields, id: h.id, shard: h.shard });
    }
    return out.sort((a, b) => a.shard - b.shard || a.id - b.id);
  }

  /** The takes live at `snapshot` with shard in [lo, hi], in commit order. */
  takesAt(snapshot: number, lo = -Infinity, hi = Infinity): TakeDoc[] {
    return this.takes.filter(
      (t) => t.insertedAt <= snapshot && !(t.deletedAt !== undefined && t.deletedAt <= snapshot) && t.shard >= lo && t.shard <= hi,
    );
  }

  /** The metric events live at `snapshot` created before `before`, in creation order (ties by id). */
  eventsAt(snapshot: number, before = Infinity): EventDoc[] {
    return this.events
      .filter((e) => e.insertedAt <= snapshot && !(e.deletedAt !== undefined && e.deletedAt <= snapshot) && e.createdAt < before)
      .sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
  }

  /** The take `id` if it is live at `snapshot`. */
  takeAt(id: number, snapshot: number): TakeDoc | null {
    const t = this.takeById.get(id);
    if (!t || t.insertedAt > snapshot || (t.deletedAt !== undefined && t.deletedAt <= snapshot)) return null;
    return t;
  }

  /**
   * conflict returns the first commit after `snapshot` (and so, as commits come in order, no
   * later than now) that wrote something `reads` covers, or null: optimistic concurrency control
   * as a transaction that read at `snapshot` and commits now sees it.
   */
  conflict(reads: readonly ReadEntry[], snapshot: number): Commit | null {
    if (reads.length === 0) return null;
    let first: Commit | null = null;
    for (let i = this.log.length - 1; i >= 0; i--) {
      const c = this.log[i]!;
      if (c.at <= snapshot) break;
      if (c.writes.some((w) => reads.some((r) => covers(r, w)))) first = c;
    }
    return first;
  }

  /** commit executes `ops` at `at` (not before the last commit) and logs their writes. */
  commit(at: number, ops: readonly StoreOp[]): Commit {
    const last = this.log[this.log.length - 1];
    if (last && at < last.at) throw new Error(`commit at ${at} before the last one at ${last.at}`);
    const writes: Write[] = [];
    for (const op of ops) {
      switch (op.op) {
        case "insertRow": {
          const id = this.nextId++;
          this.rows.set(id, { id, shard: op.shard, versions: [{ at, fields: { ...op.fields } }] });
          writes.push({ table: "rows", shard: op.shard, id });
          break;
        }
        case "patchRow":
        case "deleteRow": {
          const h = this.rows.get(op.id);
          const cur = h && this.fieldsAt(h, at);
          if (!h || !cur) throw new Error(`row ${op.id} is not there to ${op.op === "patchRow" ? "patch" : "delete"}`);
          // As the store: patched, or replaced (only the fields written remain).
          h.versions.push({ at, fields: op.op === "patchRow" ? { ...(op.replace ? {} : cur), ...op.fields } : null });
          writes.push({ table: "rows", shard: h.shard, id: h.id });
          break;
        }
        case "insertTake": {
          const take: TakeDoc = { id: this.nextId++, shard: op.shard, count: op.count, ts: op.ts, insertedAt: at };
          this.takes.push(take);
          this.takeById.set(take.id, take);
          writes.push({ table: "takes", shard: take.shard, id: take.id });
          break;
        }
        case "deleteTake": {
          const take = this.takeAt(op.id, at);
          if (!take) throw new Error(`take ${op.id} is not there to delete`);
          take.deletedAt = at;
          writes.push({ table: "takes", shard: take.shard, id: take.id });
          break;
        }
        case "insertEvent": {
          const event: EventDoc = { id: this.nextId++, createdAt: op.createdAt, bucket: op.bucket, insertedAt: at };
          this.events.push(event);
          this.eventById.set(event.id, event);
          writes.push({ table: "events", shard: event.createdAt, id: event.id });
          break;
        }
        case "deleteEvent": {
          const event = this.eventById.get(op.id);
          if (!event || event.deletedAt !== undefined) throw new Error(`event ${op.id} is not there to delete`);
          event.deletedAt = at;
          writes.push({ table: "events", shard: event.createdAt, id: event.id });
          break;
        }
        case "addToSummary": {
          let summary = this.summaries.get(op.bucket);
          if (!summary) {
            summary = { id: this.nextId++, count: 0 };
            this.summaries.set(op.bucket, summary);
          }
          summary.count += op.count;
          writes.push({ table: "summaries", shard: op.bucket, id: summary.id });
          break;
        }
        default: {
          const never: never = op;
          throw new Error(`unknown op ${JSON.stringify(never)}`);
        }
      }
    }
    const commit = { at, writes };
    if (writes.length > 0) this.log.push(commit);
    return commit;
  }

  /**
   * prune forgets what no read at a snapshot ≥ `horizon`, and no conflict check of a transaction
   * whose snapshot is ≥ `horizon`, can need.
   */
  prune(horizon: number): void {
    let drop = 0;
    while (drop < this.log.length && this.log[drop]!.at <= horizon) drop++;
    this.log.splice(0, drop);
    this.takes = this.takes.filter((t) => {
      const gone = t.deletedAt !== undefined && t.deletedAt <= horizon;
      if (gone) this.takeById.delete(t.id);
      return !gone;
    });
    this.events = this.events.filter((e) => {
      const gone = e.deletedAt !== undefined && e.deletedAt <= horizon;
      if (gone) this.eventById.delete(e.id);
      return !gone;
    });
    for (const h of this.rows.values()) {
      let keep = h.versions.length - 1;
      while (keep > 0 && h.versions[keep]!.at > horizon) keep--;
      if (keep > 0) h.versions.splice(0, keep);
    }
  }
}

/** Counts of the index reads an attempt issued: all of them, and those that joined its read set. */
export type ReadCount = { queries: number; dependent: number };

/**
 * flowReader answers our flows' reads (`RowQuery`) from `store` at `snapshot`, as
 * `store.readKey` does from the database, adding what it reads to `readSet` (pass null for a stale
 * snapshot, whose reads join no read set). Each index query issued counts once in `count`: a
 * shard's row, and its pending takes when asked, are two.
 */
export function flowReader(
  store: Store,
  snapshot: number,
  readSet: ReadEntry[] | null,
  count: ReadCount,
): (q: RowQuery) => KeyRead<number> {
  const note = (e: ReadEntry) => {
    count.queries++;
    if (readSet) {
      readSet.push(e);
      count.dependent++;
    }
  };
  return (q) => {
    switch (q.read) {
      case "shard": {
        note({ table: "rows", lo: q.shard, hi: q.shard });
        const rows = store.rowsAt(snapshot, q.shard, q.shard).slice(0, 1);
        let pending: TakeDoc[] = [];
        if (q.pending) {
          note({ table: "takes", lo: q.shard, hi: q.shard });
          pending = store.takesAt(snapshot, q.shard, q.shard);
        }
        return { rows: rows.map(keyRow), pending: pending.map(takeOf) };
      }
      case "any": {
        // `.first()` reads the index from the range's start up to the first row found.
        const first = store.rowsAt(snapshot)[0];
        note({ table: "rows", lo: -Infinity, hi: first ? first.shard : Infinity });
        return { rows: first ? [keyRow(first)] : [], pending: [] };
      }
      case "all": {
        note({ table: "rows", lo: -Infinity, hi: Infinity });
        const rows = store.rowsAt(snapshot);
        let pending: TakeDoc[] = [];
        if (q.pending) {
          note({ table: "takes", lo: -Infinity, hi: Infinity });
          pending = store.takesAt(snapshot);
        }
        return { rows: rows.map(keyRow), pending: pending.map(takeOf) };
      }
      case "terms":
        // The model runs one config, whose rows carry its own fingerprint: never asked.
        return { rows: [], pending: [] };
      case "tier":
        // The model's requests name no tier: never asked.
        return { rows: [], pending: [] };
      case "network":
        // The model's limits have no network entries: never asked.
        return { rows: [], pending: [] };
      default: {
        const never: never = q;
        throw new Error(`unknown read ${JSON.stringify(never)}`);
      }
    }
  };
}

function keyRow(r: RowDoc): KeyRow<number> {
  const layout = r.h === undefined ? { shards: r.shards, kind: r.kind } : { h: r.h };
  return { id: r.id, shard: r.shard, ...stateOf(r), ...layout };
}

function takeOf(t: TakeDoc) {
  return { shard: t.shard, count: t.count, ts: t.ts };
}

function fieldsOf(f: RowFields): RowDocFields {
  return { ...stateOf(f), h: f.h };
}

/** storeOps turns a flow's writes into the model's, as `store.writeKey` executes them. */
export function storeOps(ops: readonly RowOp<number>[]): StoreOp[] {
  return ops.flatMap((op): StoreOp[] => {
    switch (op.op) {
      case "insert":
        return [{ op: "insertRow", shard: op.shard, fields: fieldsOf(op.fields) }];
      case "patch":
        return [{ op: "patchRow", id: op.id, fields: fieldsOf(op.fields), ...(op.replace ? { replace: true as const } : {}) }];
      case "delete":
        return [{ op: "deleteRow", id: op.id }];
      case "record":
        return [{ op: "insertTake", shard: op.take.shard, count: op.take.count, ts: op.take.ts }];
      case "terms":
        // Once per config, on a key's first write, into a table no request's decision reads:
        // left out of the model.
        return [];
      case "override":
        // Written only by the app's admin calls, never by a request: left out of the model.
        return [];
      default: {
        const never: never = op;
        throw new Error(`unknown op ${JSON.stringify(never)}`);
      }
    }
  });
}

/** How a request's attempt was decided: on the current state, or on a stale snapshot. */
export type DecidedOn = "current" | "stale";

/**
 * One attempt of a transaction: its snapshot and decision instant (`now`, its start), what it read
 * (its read set), what it will write at commit, and what it decided. `takes` are the tokens it
 * takes per shard (for the asynchronous bound); `onCommit` runs when it commits, with the commit's instant.
 */
export type Attempt = {
  snapshot: number;
  now: number;
  reads: ReadEntry[];
  ops: StoreOp[];
  count: ReadCount;
  outcome: "admitted" | "refused" | "none";
  decidedOn: DecidedOn;
  onCommit?: (at: number) => void;
};

/** The request the model makes: one token, never reserved, never thrown. */
export function requestArgs(name: string, config: RateLimitConfig): RateLimitArgs {
  return { name, config, count: 1 };
}

/**
 * oursTransactional is one attempt of our `rateLimit` with `applyUpdates: "transactionally"`:
 * decide on the transaction's own snapshot (every read joins the read set) and write the flow's ops.
 */
export function oursTransactional(store: Store, args: RateLimitArgs, now: number, random: () => number): Attempt {
  const reads: ReadEntry[] = [];
  const count = { queries: 0, dependent: 0 };
  const out = runPlan(requestFlow<number>(args, now, random), flowReader(store, now, reads, count));
  return { snapshot: now, now, reads, ops: storeOps(out.ops), count, outcome: out.result.ok ? "admitted" : "refused", decidedOn: "current" };
}

/**
 * oursAsynchronous is one attempt of our `rateLimit` with `applyUpdates: "asynchronously"`, as
 * `lib.rateLimit` runs it: decide first on a snapshot `lag` ms old (reads join no read set); when
 * `staleVerdict` lets it stand (and `lag` ≤ `maxStalenessMs`), record its takes (inserts only), or
 * return the refusal it sheds (nothing written); otherwise decide again on the transaction's own
 * snapshot (reads, pending ranges included, join the read set) and record those takes.
 */
export function oursAsynchronous(
  store: Store,
  args: RateLimitArgs,
  now: number,
  lag: number,
  maxStalenessMs: number,
  random: () => number,
): Attempt {
  const count = { queries: 0, dependent: 0 };
  const stale = runPlan(requestFlow<number>(args, now, random), flowReader(store, now - lag, null, count));
  const takes = stale.ops.flatMap((op) => (op.op === "record" ? [op.take] : []));
  const stands = lag <= maxStalenessMs ? staleVerdict({ ...stale, takes }, lag) : null;
  if (stands) {
    const ops = stands.takes.map((take): StoreOp => ({ op: "insertTake", shard: take.shard, count: take.count, ts: take.ts }));
    return { snapshot: now, now, reads: [], ops, count, outcome: stands.result.ok ? "admitted" : "refused", decidedOn: "stale" };
  }
  const reads: ReadEntry[] = [];
  const out = runPlan(requestFlow<number>(args, now, random), flowReader(store, now, reads, count));
  return { snapshot: now, now, reads, ops: storeOps(out.ops), count, outcome: out.result.ok ? "admitted" : "refused", decidedOn: "current" };
}

/** Where an applier's loop stands between its iterations: its cursor and its last batch snapshot. */
export type ApplierState = { cursor: number; lastSnapshot: number; lastCommit: number };

/** newApplierState returns an applier that hasn't run yet. */
export function newApplierState(): ApplierState {
  return { cursor: -Infinity, lastSnapshot: -Infinity, lastCommit: -Infinity };
}

/**
 * batchSnapshot is the snapshot an applier's work query reads (batch-worker runs it with
 * `useStaleSnapshot`): `lag` ms before `now`, but never before the loop's previous snapshot or
 * its previous commit (a loop iteration starts after the previous one committed).
 */
export function batchSnapshot(state: ApplierState, now: number, lag: number): number {
  return Math.max(now - lag, state.lastSnapshot, state.lastCommit);
}

/**
 * nextBatch is an applier's batch: up to `batchSize` takes visible at `snapshot` from the cursor
 * on, in commit order (ties by id), as both appliers' snapshot queries read them.
 */
export function nextBatch(store: Store, state: ApplierState, snapshot: number, batchSize: number): TakeDoc[] {
  return store
    .takesAt(snapshot)
    .filter((t) => t.insertedAt >= state.cursor)
    .sort((a, b) => a.insertedAt - b.insertedAt || a.id - b.id)
    .slice(0, batchSize);
}

/**
 * applierAttempt is an applier iteration's transaction at `now`: its reads and writes, and, once it
 * commits, the applier's state advanced past `batch` (the cursor) as of `snapshot`.
 */
export function applierAttempt(
  state: ApplierState,
  batch: readonly TakeDoc[],
  snapshot: number,
  now: number,
  reads: ReadEntry[],
  ops: StoreOp[],
  count: ReadCount,
): Attempt {
  const last = batch[batch.length - 1];
  return {
    snapshot: now,
    now,
    reads,
    ops,
    count,
    outcome: "none",
    decidedOn: "current",
    onCommit: (at) => {
      state.lastSnapshot = snapshot;
      state.lastCommit = at;
      if (last) state.cursor = last.insertedAt;
    },
  };
}

/**
 * oursApplier is one iteration of our applier (`applier.getBatch` then `applier.applyBatch`):
 * the batch, up to `batchSize` takes from the cursor in commit order, is read on the stale
 * `snapshot` (no read set); then, at `now`, each take is read by id (skipped when gone), the key's
 * rows are read (`applyFlow`), the rows written and the takes deleted.
 */
export function oursApplier(
  store: Store,
  args: { name: string; config: RateLimitConfig },
  state: ApplierState,
  now: number,
  snapshot: number,
  batchSize: number,
): Attempt {
  const count = { queries: 1, dependent: 0 };
  const batch = nextBatch(store, state, snapshot, batchSize);
  const reads: ReadEntry[] = [];
  const live: TakeDoc[] = [];
  for (const t of batch) {
    reads.push({ table: "takes", id: t.id });
    count.queries++;
    count.dependent++;
    if (store.takeAt(t.id, now)) live.push(t);
  }
  let ops: StoreOp[] = [];
  if (live.length > 0) {
    const rowOps = runPlan(applyFlow<number>(args, live.map(takeOf), now), flowReader(store, now, reads, count));
    ops = [...storeOps(rowOps), ...live.map((t): StoreOp => ({ op: "deleteTake", id: t.id }))];
  }
  return applierAttempt(state, batch, snapshot, now, reads, ops, count);
}

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
  return {
    snapshot: now,
    now,
    reads,
    ops,
    count,
    outcome: "none",
    decidedOn: "current",
    onCommit: () => {
      folded.events += batch.length;
    },
  };
}

/** The parameters of one run of the model. */
export type ModelParams = {
  /** Poisson arrivals per second. */
  qps: number;
  /** Model time of arrivals (ms); the run lasts until every request has finished. */
  durationMs: number;
  /** A transaction's time from snapshot to commit (ms). */
  serviceMs: number;
  /** Retries after a conflict before the request fails. */
  maxRetries: number;
  /** A retry starts after a backoff drawn uniformly from [0, backoffMs) (ms). */
  backoffMs: number;
  /** Stale snapshots lag a transaction's own by a draw uniform in [0, stalenessMs) (ms). */
  stalenessMs: number;
  /** The applier (asynchronous mode) starts an iteration every `applyEveryMs` (ms), or null for none. */
  applyEveryMs: number | null;
  /**
   * Whether a transaction that writes nothing (a refusal) is checked for conflicts at commit like
   * any other. By default (false) it never conflicts, as Convex commits it: its committer skips
   * read-only transactions (`crates/database/src/committer.rs`, `start_commit`), and a mutation
   * that throws is not committed at all. `true` is the pessimistic reading, kept for comparison.
   */
  readOnlyConflicts?: boolean;
  /** The metrics fold starts a transaction every `foldEveryMs` (ms), or never when null or unset. */
  foldEveryMs?: number | null;
};

/** What an implementation under test does: one attempt of a request, of its applier, and of the metrics fold. */
export type Driver = {
  request(now: number, lag: number): Attempt | Promise<Attempt>;
  applier?(now: number, lag: number): Attempt | Promise<Attempt>;
  fold?(now: number): Attempt;
};

/** The random streams of a run, each its own so that runs replay whatever changes elsewhere. */
export type Streams = { arrivals: () => number; backoff: () => number; staleness: () => number };

/** A take committed, for the asynchronous bound: tokens taken from `shard`, committed at `at`. */
export type CommittedTake = { at: number; shard: number; count: number };

/** What a run measured. */
export type RunStats = {
  requests: number;
  admitted: number;
  refused: number;
  failed: number;
  /** Attempts of requests that conflicted (each retried, or the last, failed). */
  conflicts: number;
  attempts: number;
  /** Index reads issued by requests' attempts, and those that joined a read set. */
  queries: number;
  dependent: number;
  /** Attempts decided on a stale snapshot (asynchronous mode). */
  staleDecisions: number;
  applierRuns: number;
  applierConflicts: number;
  /** Transactions of the metrics fold committed, and those that conflicted (and were retried). */
  foldRuns: number;
  foldConflicts: number;
  /** Admitted requests at their decision instants, one token each. */
  admissions: { at: number; count: number }[];
  /** Takes recorded and committed (asynchronous mode). */
  takes: CommittedTake[];
};

type Scheduled =
  | { at: number; kind: "arrive" | "start"; req: Req }
  | { at: number; kind: "commit"; req: Req; attempt: Attempt }
  | { at: number; kind: "applier"; retry: number }
  | { at: number; kind: "applierCommit"; attempt: Attempt; retry: number }
  | { at: number; kind: "fold" }
  | { at: number; kind: "foldCommit"; attempt: Attempt };

type Event = Scheduled & { seq: number };

type Req = { tries: number };

/** A binary min-heap of events by time, then by order of scheduling. */
class Queue {
  private heap: Event[] = [];
  private seq = 0;
  get size(): number {
    return this.heap.length;
  }
  push(e: Scheduled): void {
    const ev: Event = { ...e, seq: this.seq++ };
    const h = this.heap;
    h.push(ev);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  pop(): Event | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Event, b: Event): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * runModel runs one implementation under Poisson arrivals at `params.qps` for
 * `params.durationMs`, then until every request and applier iteration has finished; the applier
 * keeps running until no takes are left. Each attempt starts (its snapshot and decision instant),
 * commits `serviceMs` later unless a commit since its snapshot wrote something it read, and
 * after a conflict is retried after a backoff, up to `maxRetries` times, then fails.
 */
export async function runModel(store: Store, driver: Driver, params: ModelParams, streams: Streams): Promise<RunStats> {
  const stats: RunStats = {
    requests: 0,
    admitted: 0,
    refused: 0,
    failed: 0,
    conflicts: 0,
    attempts: 0,
    queries: 0,
    dependent: 0,
    staleDecisions: 0,
    applierRuns: 0,
    applierConflicts: 0,
    foldRuns: 0,
    foldConflicts: 0,
    admissions: [],
    takes: [],
  };
  const q = new Queue();
  const perMs = params.qps / 1000;
  let arrivals = 0;
  for (let t = -Math.log(1 - streams.arrivals()) / perMs; t < params.durationMs; t += -Math.log(1 - streams.arrivals()) / perMs) {
    q.push({ at: t, kind: "arrive", req: { tries: 0 } });
    arrivals++;
  }
  if (driver.applier && params.applyEveryMs !== null) q.push({ at: params.applyEveryMs, kind: "applier", retry: 0 });
  const foldEvery = params.foldEveryMs ?? null;
  if (driver.fold && foldEvery !== null) q.push({ at: foldEvery, kind: "fold" });
  let inFlight = 0;
  /** Whether some request hasn't arrived or hasn't finished yet. */
  const requestsLeft = () => stats.requests < arrivals || inFlight > 0;
  let nextPrune = 1000;
  const horizon = params.stalenessMs + params.serviceMs + params.backoffMs + 1;
  for (let e = q.pop(); e; e = q.pop()) {
    if (e.at >= nextPrune) {
      store.prune(e.at - horizon);
      nextPrune = e.at + 1000;
    }
    switch (e.kind) {
      case "arrive":
      case "start": {
        if (e.kind === "arrive") {
          stats.requests++;
          inFlight++;
        }
        e.req.tries++;
        const attempt = await driver.request(e.at, streams.staleness() * params.stalenessMs);
        stats.attempts++;
        stats.queries += attempt.count.queries;
        stats.dependent += attempt.count.dependent;
        if (attempt.decidedOn === "stale") stats.staleDecisions++;
        q.push({ at: e.at + params.serviceMs, kind: "commit", req: e.req, attempt });
        break;
      }
      case "commit": {
        const { attempt, req } = e;
        const checked = attempt.ops.length > 0 || (params.readOnlyConflicts ?? false);
        if (checked && store.conflict(attempt.reads, attempt.snapshot)) {
          stats.conflicts++;
          if (req.tries <= params.maxRetries) {
            q.push({ at: e.at + streams.backoff() * params.backoffMs, kind: "start", req });
          } else {
            stats.failed++;
            inFlight--;
          }
          break;
        }
        store.commit(e.at, attempt.ops);
        attempt.onCommit?.(e.at);
        inFlight--;
        if (attempt.outcome === "admitted") {
          stats.admitted++;
          stats.admissions.push({ at: attempt.now, count: 1 });
        } else if (attempt.outcome === "refused") stats.refused++;
        for (const op of attempt.ops) {
          if (op.op === "insertTake") stats.takes.push({ at: e.at, shard: op.shard, count: op.count });
        }
        break;
      }
      case "applier": {
        const attempt = await driver.applier!(e.at, streams.staleness() * params.stalenessMs);
        q.push({ at: e.at + params.serviceMs, kind: "applierCommit", attempt, retry: e.retry });
        break;
      }
      case "applierCommit": {
        const { attempt } = e;
        if (store.conflict(attempt.reads, attempt.snapshot)) {
          stats.applierConflicts++;
          // A scheduled mutation is retried until it commits.
          q.push({ at: e.at + streams.backoff() * params.backoffMs, kind: "applier", retry: e.retry + 1 });
          break;
        }
        store.commit(e.at, attempt.ops);
        attempt.onCommit?.(e.at);
        stats.applierRuns++;
        const every = params.applyEveryMs!;
        const more = requestsLeft() || store.takesAt(e.at).length > 0;
        if (more) q.push({ at: Math.max(e.at, attempt.now + every), kind: "applier", retry: 0 });
        break;
      }
      case "fold": {
        q.push({ at: e.at + params.serviceMs, kind: "foldCommit", attempt: driver.fold!(e.at) });
        break;
      }
      case "foldCommit": {
        const { attempt } = e;
        if (store.conflict(attempt.reads, attempt.snapshot)) {
          stats.foldConflicts++;
          q.push({ at: e.at + streams.backoff() * params.backoffMs, kind: "fold" });
          break;
        }
        store.commit(e.at, attempt.ops);
        attempt.onCommit?.(e.at);
        stats.foldRuns++;
        if (requestsLeft() || store.eventsAt(e.at).length > 0) q.push({ at: Math.max(e.at, attempt.now + foldEvery!), kind: "fold" });
        break;
      }
      default: {
        const never: never = e;
        throw new Error(`unknown event ${JSON.stringify(never)}`);
      }
    }
  }
  return stats;
}

/** Asynchronous mode's bound on over-admission in a run: see docs/hot-limits.md, "Choosing shards and modes". */
export type Bound = { deltaMs: number; perShard: { shard: number; taken: number; margin: number }[]; value: number };

/**
 * asyncBound returns Σ_i max(0, I_i − m_i): `I_i` the most tokens taken from shard i by takes
 * committed within any window of `deltaMs`, `m_i` = ASYNC_MARGIN × shard i's capacity.
 */
export function asyncBound(takes: readonly CommittedTake[], config: RateLimitConfig, deltaMs: number): Bound {
  const n = config.shards ?? 1;
  const perShard = Array.from({ length: n }, (_, shard) => {
    const mine = takes.filter((t) => t.shard === shard && t.count > 0).sort((a, b) => a.at - b.at);
    let best = 0;
    let sum = 0;
    let lo = 0;
    for (const t of mine) {
      sum += t.count;
      while (t.at - mine[lo]!.at > deltaMs) sum -= mine[lo++]!.count;
      best = Math.max(best, sum);
    }
    return { shard, taken: best, margin: ASYNC_MARGIN * shardParams(config, 0, shard).capacity };
  });
  return { deltaMs, perShard, value: perShard.reduce((s, p) => s + Math.max(0, p.taken - p.margin), 0) };
}
