// An independent check of `npm run simulate`'s contention model (engine.ts, store.ts, ours.ts),
// written apart from it: its own event loop, store and conflict rule, and its own random streams.
// Only the code under test is shared: our decisions (`requestFlow`, `applyFlow`, `staleVerdict`),
// and what neither model serves (unmodelled.ts). Where the two
// models agree on a cell, neither's bookkeeping (versions, read sets, retries, the applier) is what
// made the figure. Simpler on purpose:
// - time advances in fixed ticks of 1 ms; each tick brings a Poisson number of arrivals of mean
//   qps / 1000, decided at the tick (whole ms); at each
//   tick commits come first, so a transaction starting then reads them;
// - a transaction conflicts when any key it read was written by a commit after its snapshot: keys
//   are "row i", "rows" (the whole key), "takes i" and "takes" (every insert or delete of a take
//   of shard i writes both "takes i" and "takes"); a read of one shard reads "row i" (and
//   "takes i"), a read of the whole key "rows" (and "takes"), and a write to row i writes both
//   "row i" and "rows";
// - a transaction that writes nothing is never checked (Convex's rule);
// - the applier starts every `applyEveryMs` (one at a time), reads the takes committed by its
//   stale snapshot and not yet applied, then the rows, and after a conflict starts again after a
//   backoff until it commits.
import { applyFlow, requestFlow, type KeyRead, type KeyRow, type RowOp, type RowQuery, type Take } from "../../src/shared/flow/flow.js";
import { staleVerdict } from "../../src/shared/shards/overload.js";
import { runPlan } from "../../src/shared/shapes/rows.js";
import type { RateLimitConfig } from "../../src/shared/shapes/validators.js";
import { seededRandom, streamSeed } from "../../tools/random.js";
import type { CellSettings } from "./cell.js";
import { isUnmodelledOp, isUnmodelledRead, unmodelledAnswer } from "./unmodelled.js";

/**
 * What one cell of the check measured (the same meanings as simulate's cells); `admissions` are
 * the decision instants (ms) of the requests admitted.
 */
export type CheckStats = { requests: number; admitted: number; refused: number; failed: number; attempts: number; admissions: number[] };

/** The model's parameters: simulate's (but for its reading of refusals: here never checked), in whole ms. */
export type CheckParams = Omit<CellSettings, "readOnlyConflicts"> & { qps: number };

type Version<T> = { at: number; value: T | null };
type TakeRec = Take & { id: number; at: number; gone?: number };

/** A key's documents, each with every version it had: rows by shard, and takes. */
class Versions {
  rows = new Map<number, Version<KeyRow<number>>[]>();
  takes: TakeRec[] = [];
  /** When each conflict key was last written. */
  written = new Map<string, number>();
  private nextId = 1;

  rowAt(shard: number, t: number): KeyRow<number> | null {
    const vs = this.rows.get(shard) ?? [];
    for (let i = vs.length - 1; i >= 0; i--) if (vs[i]!.at <= t) return vs[i]!.value;
    return null;
  }
  takesAt(t: number, shard?: number): TakeRec[] {
    return this.takes.filter((k) => k.at <= t && !(k.gone !== undefined && k.gone <= t) && (shard === undefined || k.shard === shard));
  }
  touch(at: number, ...keys: string[]): void {
    for (const k of keys) this.written.set(k, at);
  }
  /** Forgets takes deleted and versions superseded before `horizon`, which no snapshot reads any more. */
  prune(horizon: number): void {
    this.takes = this.takes.filter((k) => !(k.gone !== undefined && k.gone < horizon));
    for (const vs of this.rows.values()) {
      while (vs.length > 1 && vs[1]!.at < horizon) vs.shift();
    }
  }
  /** Applies a flow's writes at `at`, as `lib.write` does; takes record `config`. */
  apply(at: number, ops: readonly RowOp<number>[], config: RateLimitConfig): void {
    for (const op of ops) {
      if (isUnmodelledOp(op)) continue;
      switch (op.op) {
        case "insert":
        case "patch": {
          const vs = this.rows.get(op.shard) ?? [];
          vs.push({ at, value: { id: op.shard, shard: op.shard, ...op.fields } });
          this.rows.set(op.shard, vs);
          this.touch(at, `row ${op.shard}`, "rows");
          break;
        }
        case "delete": {
          const vs = this.rows.get(op.shard) ?? [];
          vs.push({ at, value: null });
          this.rows.set(op.shard, vs);
          this.touch(at, `row ${op.shard}`, "rows");
          break;
        }
        case "record":
          this.takes.push({ ...op.take, config, id: this.nextId++, at });
          this.touch(at, `takes ${op.take.shard}`, "takes");
          break;
        default: {
          const never: never = op;
          throw new Error(`unknown write ${JSON.stringify(never)}`);
        }
      }
    }
  }
}

/** Answers a flow's reads at snapshot `t`, noting the conflict keys read in `keys` (null: a stale read). */
function reader(store: Versions, t: number, keys: Set<string> | null) {
  const note = (...k: string[]) => keys && k.forEach((x) => keys.add(x));
  const rowsAt = () =>
    [...store.rows.keys()]
      .sort((a, b) => a - b)
      .flatMap((s) => {
        const r = store.rowAt(s, t);
        return r ? [r] : [];
      });
  return (q: RowQuery): KeyRead<number> => {
    if (isUnmodelledRead(q)) return unmodelledAnswer();
    switch (q.read) {
      case "shard": {
        note(`row ${q.shard}`, ...(q.pending ? [`takes ${q.shard}`] : []));
        const r = store.rowAt(q.shard, t);
        return { rows: r ? [r] : [], pending: q.pending ? store.takesAt(t, q.shard) : [] };
      }
      case "any":
        note("rows");
        return { rows: rowsAt().slice(0, 1), pending: [] };
      case "all":
        note("rows", ...(q.pending ? ["takes"] : []));
        return { rows: rowsAt(), pending: q.pending ? store.takesAt(t) : [] };
      default: {
        const never: never = q;
        throw new Error(`unknown read ${JSON.stringify(never)}`);
      }
    }
  };
}

/** How many arrivals a tick of mean `mean` brings, for a uniform draw `u` (Poisson, by inversion). */
function arrivals(u: number, mean: number): number {
  let k = 0;
  let p = Math.exp(-mean);
  let cdf = p;
  while (u > cdf && k < 1000) {
    k++;
    p *= mean / k;
    cdf += p;
  }
  return k;
}

type Tx = { start: number; keys: Set<string>; ops: RowOp<number>[]; admitted: boolean | null; tries: number; applier?: number[] };

/**
 * checkCell runs one limit `config` (one global key, one token per request) at `qps` for
 * `seconds`, then until every request has finished, and counts what happened.
 */
export function checkCell(config: RateLimitConfig, p: CheckParams): CheckStats {
  const rand = (label: string) => seededRandom(streamSeed(p.seed, `check/${label}/${p.qps}/${config.rate}/${config.shards ?? 1}`));
  const [arrive, backoff, stale, draw] = [rand("arrive"), rand("backoff"), rand("stale"), rand("draw")];
  const args = { name: "global", config, count: 1 };
  const async = config.applyUpdates === "asynchronously";
  const store = new Versions();
  const stats: CheckStats = { requests: 0, admitted: 0, refused: 0, failed: 0, attempts: 0, admissions: [] };
  const commits = new Map<number, Tx[]>();
  const starts = new Map<number, Tx[]>();
  const at = (m: Map<number, Tx[]>, t: number, tx: Tx) => m.set(t, [...(m.get(t) ?? []), tx]);
  let applierBusy = false;
  let nextApply = p.applyEveryMs;
  let applied = 0; // takes with id ≤ this are applied (ids grow with commit order)
  const end = p.seconds * 1000;

  /** A request's attempt at `t`: its decision, reads and writes, as lib.rateLimit makes them. */
  const attempt = (t: number, tries: number): Tx => {
    stats.attempts++;
    if (async) {
      const lag = Math.floor(stale() * p.stalenessMs);
      const out = runPlan(requestFlow<number>(args, t, draw), reader(store, t - lag, null));
      const takes = out.ops.flatMap((op) => (op.op === "record" ? [op.take] : []));
      const stands = staleVerdict({ ...out, takes }, lag);
      if (stands) {
        return { start: t, keys: new Set(), ops: stands.takes.map((take) => ({ op: "record", take })), admitted: stands.result.ok, tries };
      }
    }
    const keys = new Set<string>();
    const out = runPlan(requestFlow<number>(args, t, draw), reader(store, t, keys));
    return { start: t, keys, ops: out.ops, admitted: out.result.ok, tries };
  };

  /** The applier's transaction at `t`: its batch from a stale snapshot, then the rows. */
  const applier = (t: number): Tx => {
    const lag = Math.floor(stale() * p.stalenessMs);
    const batch = store.takesAt(t - lag).filter((k) => k.id > applied);
    const keys = new Set<string>(batch.map((k) => `take ${k.id}`));
    const live = batch.filter((k) => store.takesAt(t).some((x) => x.id === k.id));
    const ops = live.length > 0 ? runPlan(applyFlow<number>({ name: "global", config }, live, t), reader(store, t, keys)) : [];
    return { start: t, keys, ops, admitted: null, tries: 0, applier: live.map((k) => k.id) };
  };

  const horizon = p.stalenessMs + p.serviceMs + 1;
  for (let t = 0; t < end || starts.size > 0 || commits.size > 0 || applierBusy || store.takesAt(t).length > 0; t++) {
    if (t % 1000 === 0) store.prune(t - horizon);
    // Commits first: a transaction starting at t reads everything committed by t.
    for (const tx of commits.get(t) ?? []) {
      const conflicted = tx.ops.length > 0 && [...tx.keys].some((k) => (store.written.get(k) ?? -Infinity) > tx.start);
      if (tx.applier) {
        if (conflicted) {
          // A scheduled mutation is retried until it commits.
          applierBusy = false;
          nextApply = t + 1 + Math.floor(backoff() * p.backoffMs);
          continue;
        }
        store.apply(t, tx.ops, config);
        for (const id of tx.applier) {
          const k = store.takes.find((x) => x.id === id)!;
          k.gone = t;
          store.touch(t, `take ${id}`, `takes ${k.shard}`, "takes");
        }
        if (tx.applier.length > 0) applied = Math.max(applied, ...tx.applier);
        applierBusy = false;
        continue;
      }
      if (conflicted) {
        if (tx.tries <= p.maxRetries) at(starts, t + 1 + Math.floor(backoff() * p.backoffMs), { ...tx, tries: tx.tries + 1 });
        else stats.failed++;
        continue;
      }
      store.apply(t, tx.ops, config);
      if (tx.admitted) {
        stats.admitted++;
        stats.admissions.push(tx.start);
      } else stats.refused++;
    }
    commits.delete(t);
    for (let k = t < end ? arrivals(arrive(), p.qps / 1000) : 0; k > 0; k--) {
      stats.requests++;
      at(commits, t + p.serviceMs, attempt(t, 1));
    }
    for (const tx of starts.get(t) ?? []) at(commits, t + p.serviceMs, attempt(t, tx.tries));
    starts.delete(t);
    if (async && !applierBusy && t >= nextApply) {
      applierBusy = true;
      nextApply = t + p.applyEveryMs;
      at(commits, t + p.serviceMs, applier(t));
    }
  }
  return stats;
}
