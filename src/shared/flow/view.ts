// A key's shards as of the current layout: what one request knows of its rows, reading as little
// as possible and carrying rows of another layout over. The writes that apply a plan are in
// writes.ts, an asynchronous request's takes in takes.ts. Pure: the clock comes in as an argument.
import { stateOf, type State } from "../kinds/algebra.js";
import { configHash, expandUnder, isShardOf, expandRow, relayout, resolvePhase, sameClock, shardParams, termsConfig } from "../shards/layout.js";
import type { ShardRead } from "../shards/plan.js";
import type { KeyFlow, KeyRead, KeyRow } from "../shapes/rows.js";
import { fold, settle, takenUnder, type PhaseOf } from "./settle.js";
import { invalid } from "../validation/validate.js";
import { isAsync, type RateLimitConfig } from "../shapes/validators.js";
import type { StoredRow, Take } from "../shapes/stored.js";
import type { Override } from "../shapes/override-validators.js";
import { math } from "../core/math.js";

/**
 * expanded returns a row read from the store with its layout filled in (see `expandRow`): from the
 * current config when its fingerprint is the current terms', which costs nothing; otherwise from
 * the terms the store recorded for its fingerprint, one read (after a config change), remembered
 * in `known`.
 */
export function* expanded<Id>(
  row: KeyRow<Id>,
  at: { name: string; key?: string | undefined; config: RateLimitConfig; phase: number; hash: number },
  known: Map<number, string | undefined>,
): KeyFlow<Id, KeyRow<Id>> {
  const { h } = row;
  if (h === undefined) return row;
  if (h === at.hash) return expandUnder(row, at.config, at.phase);
  if (!known.has(h)) known.set(h, (yield { read: "terms", hash: h }).terms);
  const text = known.get(h);
  const old = text === undefined ? undefined : termsConfig(text);
  return old ? expandRow(row, old, resolvePhase(old, at.name, at.key)) : row;
}

/**
 * What one request knows of its key's rows. A missing row is a full shard (never used under this
 * layout). When a row turns out to have been written under another layout (shard count, kind, or
 * fixed-window phase or period; see `sameClock`), the whole key is read and its state
 * redistributed over the current layout (`relayout`); `migration` then holds every shard's state
 * and the rows it replaces.
 */
export type View<Id> = {
  config: RateLimitConfig;
  /** The fingerprint of the config's terms (`termsHash(configTerms(config))`), which rows under it carry. */
  hash: number;
  phase: number;
  now: number;
  n: number;
  /** Each shard read: its row, its state, and the latest instant (ms) of a take pending on it (-Infinity: none). */
  rows: Map<number, { row: KeyRow<Id> | null; read: ShardRead; taken: number }>;
  /**
   * The key carried over to the current layout: its rows, every shard's state, each shard's
   * `taken`, and `unmarked`: the shards whose row isn't under the current terms and that have no
   * take pending under them (see `markersOf`).
   */
  migration?: { rows: KeyRow<Id>[]; states: State[]; taken: number[]; unmarked: number[] };
  /** Whether the key has no rows at all (learned when a missing shard made us look). */
  fresh: boolean;
  /** The limit's name and key. */
  name: string;
  key?: string | undefined;
  /** Terms the store recorded for fingerprints read so far (undefined: none recorded). */
  known: Map<number, string | undefined>;
  /** Whether a row read doesn't carry the current terms' fingerprint, so writing it records them. */
  rewrites: boolean;
  /** Whether a read found takes still waiting for the applier (asynchronous mode): others are taking. */
  busy: boolean;
  /** The phase of any config's windows for this key (a take may record another config). */
  phaseOf: PhaseOf;
  /** The key's own override (see `inForce`), which every row written for the key carries. */
  own?: Override;
  /** Set when an override put `config` in force: takes recorded then name it (asynchronous mode). */
  overridden?: true;
  /** The latest lockout (UTC ms) a row read records (`u`); -Infinity when none. */
  lockedUntil: number;
};

/**
 * Fails closed on a corrupt stored row (a value or time that isn't a finite number, which no
 * write of ours produces): an `InvalidRateLimit` error naming `state`, never a decision from it.
 */
export function checkStored(row: StoredRow): void {
  if (!(Number.isFinite(row.value) && Number.isFinite(row.ts))) {
    throw invalid(
      "state",
      Number.isFinite(row.value) ? row.ts : row.value,
      `shard ${row.shard}'s stored row (value ${row.value} at ${row.ts}) is corrupt; reset the key to clear it`,
    );
  }
}

/**
 * newView starts what a request knows of its key: nothing read yet, under `at.config` (the config
 * in force, see `inForce`) and, when the key has one, its own override `own`.
 */
export function newView<Id>(
  at: { name: string; key?: string | undefined; config: RateLimitConfig },
  now: number,
  own?: Override,
  overridden = false,
): View<Id> {
  const { name, key, config } = at;
  const phaseOf: PhaseOf = (c) => resolvePhase(c, name, key);
  const phase = phaseOf(config);
  const view: View<Id> = { config, hash: configHash(config), phase, now, n: config.shards ?? 1, rows: new Map(), fresh: false, name, key, known: new Map(), rewrites: false, busy: false, phaseOf, lockedUntil: -Infinity };
  if (own !== undefined) view.own = own;
  if (overridden) view.overridden = true;
  return view;
}

/** The latest instant (ms) of `takes`; -Infinity when none. */
function latestOf(takes: readonly Take[]): number {
  let latest = -Infinity;
  for (const t of takes) if (t.ts > latest) latest = t.ts;
  return latest;
}

/** Notes a lockout a row read records, so the request sees it and every write keeps it. */
function noteLock<Id>(view: View<Id>, row: StoredRow | null): void {
  if (row?.u !== undefined && row.u > view.lockedUntil) view.lockedUntil = row.u;
}

/** Shard `shard`'s row and state as the key's migration to the current layout holds them (see `View.migration`). */
export function migrated<Id>(view: View<Id>, shard: number): { row: KeyRow<Id> | null; read: ShardRead } {
  const { rows, states } = view.migration!;
  return {
    row: rows.find((r) => r.shard === shard) ?? null,
    read: { shard, state: states[shard]!, p: shardParams(view.config, view.phase, shard) },
  };
}

/**
 * Shard `shard`'s stored row and state as of the current layout, reading as little as possible:
 * one index lookup; a look at the key's first row only when the shard's row is missing (is the key
 * new, or laid out differently?); the whole key only when a row of another layout turns up. An
 * asynchronous limit also reads the takes pending on the shard (on the whole key when unsharded
 * or when the row is missing), and a take recorded under other terms settles the key too
 * (`settle`: each take counted under the terms it was taken under). A row under the current
 * terms' fingerprint is used as it is; any other is expanded first (`expanded`), so every rule
 * below sees its terms in full.
 */
export function* shardOf<Id>(view: View<Id>, shard: number): KeyFlow<Id, { row: KeyRow<Id> | null; read: ShardRead }> {
  if (view.migration) return migrated(view, shard);
  const cached = view.rows.get(shard);
  if (cached) return cached;
  const pending = isAsync(view.config);
  let row: KeyRow<Id> | null;
  let other: KeyRow<Id> | null = null;
  let takes: Take[] = [];
  let key: KeyRead<Id> | null = null;
  if (view.n === 1 && !pending) {
    // One read finds the row, or a row left by an earlier, sharded layout.
    const first = (yield { read: "any" }).rows[0] ?? null;
    row = first?.shard === shard ? first : null;
    other = row ? null : first;
  } else if (view.n === 1) {
    // Asynchronous and unsharded: one read finds the row and every take pending on the key,
    // whatever layout left them.
    key = yield { read: "all", pending: true };
    row = key.rows.find((r) => r.shard === shard) ?? null;
    other = row ? null : (key.rows[0] ?? null);
    takes = key.pending.filter((t) => t.shard === shard);
    if (key.pending.length > 0) view.busy = true;
  } else {
    const found = yield pending ? { read: "shard", shard, pending } : { read: "shard", shard };
    row = found.rows[0] ?? null;
    takes = found.pending;
    if (takes.length > 0) view.busy = true;
    // Only a missing row needs a look at its siblings. Once a key has rows it has all of them
    // (a key's first write creates every shard), so this is off the hot path. An asynchronous
    // key's takes may all still be pending, recorded under another layout: it looks at them too.
    if (!row && pending) {
      key = yield { read: "all", pending: true };
      other = key.rows[0] ?? null;
      if (key.pending.length > 0) view.busy = true;
    } else if (!row) other = (yield { read: "any" }).rows[0] ?? null;
  }
  if (!row && !other) view.fresh = true;
  noteLock(view, row);
  noteLock(view, other);
  // The shard's own row carrying the current terms' fingerprint is laid out as the current config
  // says: it needs no expanding and no comparing (the hot path). Any other row (other terms that
  // mean the same, or a row in full, an earlier version's or upstream's) is expanded, and rewritten
  // with the fingerprint: the terms are recorded then. A sibling row, read because the shard's own
  // is missing (off the hot path), is always expanded and compared.
  const current = row !== null && row.h === view.hash;
  if (row && !current) {
    view.rewrites = true;
    row = yield* expanded(row, view, view.known);
  }
  if (other) other = yield* expanded(other, view, view.known);
  const seen = row ?? other;
  if (seen) checkStored(seen);
  const p = shardParams(view.config, view.phase, shard);
  // A take recorded under other terms counts under them (settle), never under the current ones.
  const otherTerms = (key?.pending ?? takes).some((t) => !takenUnder(t, view.config, view.phaseOf));
  if ((seen && !current && (seen.shards !== view.n || !sameClock(seen, p))) || otherTerms) {
    const all = key ?? (yield pending ? { read: "all", pending } : { read: "all" });
    const rows: KeyRow<Id>[] = [];
    for (const r of all.rows) rows.push(yield* expanded(r, view, view.known));
    rows.forEach(checkStored);
    for (const r of rows) noteLock(view, r);
    if (all.pending.length > 0) view.busy = true;
    const states = pending
      ? settle(rows, all.pending, view.config, view.phaseOf, view.now)
      : relayout(rows, view.config, view.phase, view.now);
    // A take of this request comes after every take under other terms (settle folds the key run
    // by run of terms, in order of time) and after those on its own shard.
    let others = -Infinity;
    const taken: number[] = Array.from({ length: view.n }, () => -Infinity);
    for (const t of all.pending) {
      if (!takenUnder(t, view.config, view.phaseOf)) others = math.max(others, t.ts);
      else if (isShardOf(t.shard, view.n)) taken[t.shard] = math.max(taken[t.shard]!, t.ts);
    }
    for (let k = 0; k < view.n; k++) taken[k] = math.max(taken[k]!, others);
    // A take of this request is under the current terms: a reader under a row's own terms reads
    // only its shard's takes, so it sees one only through a take under other terms pending on the
    // shard it reads (see `markersOf`).
    const marked = new Set(all.pending.filter((t) => takenUnder(t, view.config, view.phaseOf)).map((t) => t.shard));
    const unmarked = [...new Set(rows.filter((r) => r.h !== view.hash && !marked.has(r.shard)).map((r) => r.shard))];
    view.migration = { rows, states, taken, unmarked };
    return migrated(view, shard);
  }
  // Takes pending (asynchronous mode) fold in; a transactional row is its own state.
  const state = takes.length === 0 ? row && stateOf(row) : fold(row && stateOf(row), takes, p);
  const found = { row, read: { shard, state, p }, taken: latestOf(takes) };
  view.rows.set(shard, found);
  return found;
}

/** The state of a shard the view has read, as of the current layout. */
export function readOf<Id>(view: View<Id>, shard: number): ShardRead {
  return view.migration ? migrated(view, shard).read : view.rows.get(shard)!.read;
}
