// An in-memory stand-in for the component's tables, driven by the component's own flows
// (src/shared/flow.ts) and clean-up decision (src/shared/idle.ts): rows kept in index order, reads
// answered by `answerRead`, writes applied exactly as `store.writeKey` applies them. Tests and the
// benchmark use it where convex-test would be too slow (its index reads scan the whole table).
import { applyFlow, getValueFlow, requestFlow, type KeyRow, type RowOp, type StoredRow, type Take } from "../src/shared/flow.js";
import { answerRead, keyIdOf, type KeyInMemory } from "../src/shared/rows.js";
import { ConvexError } from "convex/values";
import { isIdleKey } from "../src/shared/idle.js";
import { resolvePhase } from "../src/shared/layout.js";
import { runPlan } from "../src/shared/rows.js";
import type { GetValueArgs, GetValueResult, RateLimitArgs, RateLimitConfig, RateLimitResult } from "../src/shared/validators.js";

/** What a clean-up over the store did, as `admin.cleanup` counts it. */
export type CleanupTally = { rowsRead: number; keysRead: number; keysDeleted: number; rowsDeleted: number };

type Address = { name: string; key?: string };
/** A take waiting for the applier, with the config it was decided under. */
type Waiting = Take & { config: RateLimitConfig };

/** A row with its `o` set to `o`, or without one. */
function withOverride<R extends StoredRow>(row: R, o: StoredRow["o"]): R {
  const { o: _old, ...rest } = row;
  return (o === undefined ? rest : { ...rest, o }) as R;
}

/** MemoryStore holds every key's rows and waiting takes, as the `rateLimits` and `pendingTakes` tables do. */
export class MemoryStore {
  private rows = new Map<string, KeyRow<number>[]>();
  private takes = new Map<string, Waiting[]>();
  private addresses = new Map<string, Address>();
  /** The terms recorded per limit name, by fingerprint (the `rateLimitTerms` table). */
  private terms = new Map<string, Map<number, string>>();
  private nextId = 0;

  /** The rows of a key in index order (shard, then insertion), its waiting takes, and its name's recorded terms. */
  read(at: Address): KeyInMemory<number> {
    const rows = [...(this.rows.get(keyIdOf(at)) ?? [])].sort((a, b) => a.shard - b.shard || a.id - b.id);
    const pending = (this.takes.get(keyIdOf(at)) ?? []).map(({ shard, count, ts }) => ({ shard, count, ts }));
    return { rows, pending, known: this.terms.get(at.name) ?? new Map() };
  }

  /**
   * Plants rows as some other writer left them (an earlier version of this package, which recorded
   * the terms in full, or @convex-dev/rate-limiter, which recorded none), for tests of reading them.
   */
  plant(at: Address, rows: readonly StoredRow[]): void {
    const id = keyIdOf(at);
    this.addresses.set(id, { name: at.name, ...(at.key === undefined ? {} : { key: at.key }) });
    this.rows.set(id, [...(this.rows.get(id) ?? []), ...rows.map((r) => ({ ...r, id: this.nextId++ }))]);
  }

  /** Applies a flow's writes to a key, as `store.writeKey` does; a recorded take waits for {@link apply}. */
  write(at: Address, ops: readonly RowOp<number>[], config: RateLimitConfig): void {
    const id = keyIdOf(at);
    this.addresses.set(id, { name: at.name, ...(at.key === undefined ? {} : { key: at.key }) });
    let rows = this.rows.get(id) ?? [];
    for (const op of ops) {
      switch (op.op) {
        case "insert":
          rows.push({ ...op.fields, shard: op.shard, id: this.nextId++ });
          break;
        case "patch":
          // As the store does: patched, or replaced (only the fields written remain).
          rows = rows.map((r) => (r.id === op.id ? { ...(op.replace ? {} : r), ...op.fields, shard: op.shard, id: r.id } : r));
          break;
        case "delete":
          rows = rows.filter((r) => r.id !== op.id);
          break;
        case "record":
          this.takes.set(id, [...(this.takes.get(id) ?? []), { ...op.take, config: op.take.config ?? config }]);
          break;
        case "override":
          rows = rows.map((r) => (r.id === op.id ? withOverride(r, op.o) : r));
          break;
        case "terms": {
          const known = this.terms.get(at.name) ?? new Map<number, string>();
          if (!known.has(op.hash)) known.set(op.hash, op.terms);
          this.terms.set(at.name, known);
          break;
        }
        default: {
          const never: never = op;
          throw new Error(`unknown write ${JSON.stringify(never)}`);
        }
      }
    }
    this.rows.set(id, rows);
  }

  /** Decides a request at `now` and applies it, as `lib.rateLimit` does (on the current state). */
  limit(args: RateLimitArgs, now: number, random: () => number): RateLimitResult {
    const out = runPlan(requestFlow<number>(args, now, random), (q) => answerRead(this.read(args), q));
    // A throw rolls the transaction back: nothing is written (metric events aren't kept here).
    if (out.raise) throw new ConvexError(out.raise.error);
    this.write(args, out.ops, args.config);
    return out.result;
  }

  /** Decides a request at `now` without applying it, as `lib.checkRateLimit` does. */
  check(args: RateLimitArgs, now: number, random: () => number): RateLimitResult {
    const out = runPlan(requestFlow<number>(args, now, random), (q) => answerRead(this.read(args), q));
    if (out.raise) throw new ConvexError(out.raise.error);
    return out.result;
  }

  /** Reports a limit's state at `now`, as `lib.getValue` does. */
  getValue(args: GetValueArgs, now: number, random: () => number): GetValueResult {
    return runPlan(getValueFlow<number>(args, now, random), (q) => answerRead(this.read(args), q));
  }

  /** Runs the applier at `now` over every key with takes waiting, under its latest take's config. */
  apply(now: number): void {
    for (const [id, takes] of this.takes) {
      if (takes.length === 0) continue;
      const at = this.addresses.get(id)!;
      const config = takes.reduce((a, b) => (b.ts >= a.ts ? b : a)).config;
      const args = { ...at, config };
      const ops = runPlan(applyFlow<number>(args, takes, now), (q) => answerRead(this.read(at), q));
      this.takes.delete(id);
      this.write(at, ops, config);
    }
  }

  /**
   * Runs the clean-up at `now` over the keys of `limits` (each name with its config), as
   * `admin.cleanup` does: every key that `isIdleKey` finds idle loses all its rows.
   */
  cleanup(limits: readonly { name: string; config: RateLimitConfig }[], now: number): CleanupTally {
    const tally: CleanupTally = { rowsRead: 0, keysRead: 0, keysDeleted: 0, rowsDeleted: 0 };
    for (const { name, config } of limits) {
      for (const [id, at] of this.addresses) {
        if (at.name !== name || (this.rows.get(id) ?? []).length === 0) continue;
        const read = this.read(at);
        tally.rowsRead += read.rows.length;
        tally.keysRead += 1;
        if (!isIdleKey(read, config, resolvePhase(config, name, at.key), now)) continue;
        tally.keysDeleted += 1;
        tally.rowsDeleted += read.rows.length;
        this.rows.set(id, []);
      }
    }
    return tally;
  }

  /** How many rows the store holds. */
  rowCount(): number {
    let n = 0;
    for (const rows of this.rows.values()) n += rows.length;
    return n;
  }
}
