// The contention model's database (`npm run simulate`): one key's documents versioned by commit
// time, so a read at snapshot `s` sees exactly the commits at or before `s` (stale snapshots are
// served too), and the log of commits that optimistic concurrency control checks a read set
// against. Read sets are index ranges over a key's shard numbers, plus single documents; writes
// name the table, the shard (the index key) and the document. The engine (engine.ts) runs the
// transactions; what each reads and writes comes from the limiter under test (ours.ts, upstream.ts).
import type { StoredRow } from "../../src/shared/shapes/stored.js";

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
