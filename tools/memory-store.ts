// An in-memory stand-in for the component's tables, driven by the component's own flows
// (src/shared/flow/flow.ts) and clean-up decision (src/shared/admin/idle.ts): rows kept in index order, reads
// answered by `answerRead`, writes applied exactly as `store.writeKey` applies them, overrides set,
// removed and reset as src/component/overrides.ts and `lib.resetRateLimit` do. Tests and the
// benchmark use it where convex-test would be too slow (its index reads scan the whole table).
import { applyFlow, creditFlow, getValueFlow, requestFlow, type KeyRow, type RowOp, type StoredRow, type Take } from "../src/shared/flow/flow.js";
import { answerRead, keyIdOf, type KeyInMemory } from "../src/shared/shapes/rows.js";
import { ConvexError } from "convex/values";
import { isIdleKey } from "../src/shared/admin/idle.js";
import { resolvePhase } from "../src/shared/shards/layout.js";
import { mergeOverride, scopeOf } from "../src/shared/overrides/overrides.js";
import type { Override, OverrideEntry, OverrideTarget } from "../src/shared/shapes/override-validators.js";
import { canonicalNetwork, networkIntervals } from "../src/shared/overrides/address.js";
import { keyOverrideOps, resetOps, validateOverride, validateTarget } from "../src/shared/admin/override-writes.js";
import type { CreditArgs } from "../src/shared/shapes/validators.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import type { GetValueArgs, GetValueResult, RateLimitArgs, RateLimitConfig, RateLimitResult } from "../src/shared/shapes/validators.js";

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
  /** The overrides per limit name, by scope and target (the `rateLimitOverrides` table). */
  private overrides = new Map<string, Map<string, Override>>();
  /** The tier overrides per limit name, by tier, as a request's `tier` read finds them. */
  private tiers = new Map<string, Map<string, Override>>();
  /** Each name's network entries, by canonical CIDR. */
  private networks = new Map<string, Map<string, OverrideEntry>>();
  private nextId = 0;

  /**
   * The rows of a key in index order (shard, then insertion), its waiting takes, its name's
   * recorded terms and its name's tier overrides.
   */
  read(at: Address): KeyInMemory<number> {
    const rows = [...(this.rows.get(keyIdOf(at)) ?? [])].sort((a, b) => a.shard - b.shard || a.id - b.id);
    // With the config each was decided under, as the component's store reads them (`takeOf`).
    const pending = (this.takes.get(keyIdOf(at)) ?? []).map(({ shard, count, ts, config }) => ({ shard, count, ts, config }));
    const entries = this.networks.get(at.name) ?? new Map<string, OverrideEntry>();
    const networks = networkIntervals([...entries.keys()]).map((x) => ({ ...x, override: entries.get(x.network)! }));
    return { rows, pending, known: this.terms.get(at.name) ?? new Map(), tiers: this.tiers.get(at.name) ?? new Map(), networks };
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

  /** Gives tokens back at `now` and returns how many, as `lib.credit` does. */
  credit(args: CreditArgs, now: number): number {
    const { credited, ops } = runPlan(creditFlow<number>(args, now), (q) => answerRead(this.read(args), q));
    this.write(args, ops, args.config);
    return credited;
  }

  /**
   * Puts `override` in force for limit `at.name`'s `target` at `now`, as `overrides.set` does:
   * checked under the limit's named config `named` (an `InvalidRateLimit` error writes nothing);
   * a tier's kept for requests naming the tier; a key's also written on every row of the key
   * (`keyOverrideOps`).
   */
  setOverride(at: { name: string }, target: OverrideTarget, entry: OverrideEntry, named: RateLimitConfig, now: number): void {
    validateOverride(at.name, target, entry, named);
    if ("network" in target) {
      const networks = this.networks.get(at.name) ?? new Map<string, OverrideEntry>();
      networks.set(canonicalNetwork(target.network, "target.network"), entry);
      this.networks.set(at.name, networks);
      return;
    }
    // Only a network's entry may be `{ allow }` (validateOverride).
    const override = entry as Override;
    const byTarget = this.overrides.get(at.name) ?? new Map<string, Override>();
    byTarget.set(JSON.stringify(scopeOf(target)), override);
    this.overrides.set(at.name, byTarget);
    if ("tier" in target) {
      const tiers = this.tiers.get(at.name) ?? new Map<string, Override>();
      tiers.set(target.tier, override);
      this.tiers.set(at.name, tiers);
      return;
    }
    const address = { name: at.name, ...(target.key === undefined ? {} : { key: target.key }) };
    this.write(address, keyOverrideOps(this.read(address).rows, { ...address, config: named }, override, now), named);
  }

  /**
   * Takes limit `at.name`'s override for `target` away at `now`, as `overrides.remove` does (a
   * key's rows lose it too); returns whether it had one.
   */
  removeOverride(at: { name: string }, target: OverrideTarget, named: RateLimitConfig, now: number): boolean {
    validateTarget(at.name, target);
    if ("network" in target) return this.networks.get(at.name)?.delete(canonicalNetwork(target.network, "target.network")) ?? false;
    const had = this.overrides.get(at.name)?.delete(JSON.stringify(scopeOf(target))) ?? false;
    if ("tier" in target) {
      this.tiers.get(at.name)?.delete(target.tier);
      return had;
    }
    const address = { name: at.name, ...(target.key === undefined ? {} : { key: target.key }) };
    const rows = this.read(address).rows.filter((r) => r.o !== undefined);
    this.write(address, keyOverrideOps(rows, { ...address, config: named }, undefined, now), named);
    return had;
  }

  /** Limit `at.name`'s override for `target`, as `overrides.get` finds it (without note or time). */
  getOverride(at: { name: string }, target: OverrideTarget): OverrideEntry | undefined {
    if ("network" in target) return this.networks.get(at.name)?.get(canonicalNetwork(target.network, "target.network"));
    return this.overrides.get(at.name)?.get(JSON.stringify(scopeOf(target)));
  }

  /**
   * Resets a key at `now`, as `lib.resetRateLimit` does: its waiting takes and rows deleted, and
   * a key with its own override given full rows carrying it under `config` (`resetOps`).
   */
  reset(at: Address, config: RateLimitConfig | undefined, now: number): void {
    const ops = resetOps(this.read(at).rows, { ...at, config }, now);
    this.takes.delete(keyIdOf(at));
    // The ops record no take, so the config `write` stores with takes is never used.
    if (ops.length > 0) this.write(at, ops, config!);
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
   * `admin.cleanup` does: every key that `isIdleKey` finds idle, under the named config or one of
   * the name's tier overrides' or network entries' (as `cleanupFlow` judges it), loses all its rows.
   */
  cleanup(limits: readonly { name: string; config: RateLimitConfig }[], now: number): CleanupTally {
    const tally: CleanupTally = { rowsRead: 0, keysRead: 0, keysDeleted: 0, rowsDeleted: 0 };
    for (const { name, config } of limits) {
      for (const [id, at] of this.addresses) {
        if (at.name !== name || (this.rows.get(id) ?? []).length === 0) continue;
        const read = this.read(at);
        tally.rowsRead += read.rows.length;
        tally.keysRead += 1;
        const entries = [...(this.tiers.get(name)?.values() ?? []), ...(this.networks.get(name)?.values() ?? [])];
        const tiers = entries.flatMap((o) => ("config" in o ? [mergeOverride(config, o.config)] : []));
        if (![config, ...tiers].some((c) => isIdleKey(read, c, resolvePhase(c, name, at.key), now))) continue;
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
