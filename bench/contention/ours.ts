// Our limiter under test in the contention model: the real decision code (`requestFlow`,
// `applyFlow`, `staleVerdict`), its reads answered from the model's store by {@link flowReader} as
// `store.readKey` answers them from the database, and its writes turned into the store's
// ({@link storeOps}) as `store.writeKey` executes them. One attempt of a request in each mode, and
// one iteration of the applier; the metrics we add are in metrics.ts.
import { applyFlow, requestFlow, type KeyRead, type KeyRow, type RowFields, type RowOp, type RowQuery } from "../../src/shared/flow/flow.js";
import { stateOf } from "../../src/shared/kinds/algebra.js";
import { staleVerdict } from "../../src/shared/shards/overload.js";
import { runPlan } from "../../src/shared/shapes/rows.js";
import type { RateLimitArgs, RateLimitConfig } from "../../src/shared/shapes/validators.js";
import type { ApplyBatch } from "./applier.js";
import type { Attempt, ReadCount } from "./engine.js";
import type { ReadEntry, RowDoc, RowDocFields, Store, StoreOp, TakeDoc } from "./store.js";
import { isUnmodelledOp, isUnmodelledRead, unmodelledAnswer } from "./unmodelled.js";

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
    if (isUnmodelledRead(q)) return unmodelledAnswer();
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
    if (isUnmodelledOp(op)) return [];
    switch (op.op) {
      case "insert":
        return [{ op: "insertRow", shard: op.shard, fields: fieldsOf(op.fields) }];
      case "patch":
        return [{ op: "patchRow", id: op.id, fields: fieldsOf(op.fields), ...(op.replace ? { replace: true as const } : {}) }];
      case "delete":
        return [{ op: "deleteRow", id: op.id }];
      case "record":
        return [{ op: "insertTake", shard: op.take.shard, count: op.take.count, ts: op.take.ts }];
      default: {
        const never: never = op;
        throw new Error(`unknown op ${JSON.stringify(never)}`);
      }
    }
  });
}

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

/**
 * oursApplyBatch is what one iteration of our applier (`applier.applyBatch`) writes for its batch
 * at `now`: each take is read by id (skipped when gone), the key's rows are read (`applyFlow`),
 * the rows written and the takes deleted. The loop around it is applier.ts's.
 */
export function oursApplyBatch(store: Store, args: { name: string; config: RateLimitConfig }): ApplyBatch {
  return (batch, now, reads, count) => {
    const live: TakeDoc[] = [];
    for (const t of batch) {
      reads.push({ table: "takes", id: t.id });
      count.queries++;
      count.dependent++;
      if (store.takeAt(t.id, now)) live.push(t);
    }
    if (live.length === 0) return [];
    const rowOps = runPlan(applyFlow<number>(args, live.map(takeOf), now), flowReader(store, now, reads, count));
    return [...storeOps(rowOps), ...live.map((t): StoreOp => ({ op: "deleteTake", id: t.id }))];
  };
}
