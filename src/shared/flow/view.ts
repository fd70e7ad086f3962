// A key's shards as of the current layout: what one request knows of its rows (reading as little
// as possible, carrying rows of another layout over), and the exact writes that apply a plan.
// Pure: the clock comes in as an argument.
import { delayUntil, evaluate, stateOf, type Params, type State } from "../kinds/algebra.js";
import { configHash, configTerms, expandUnder, isShardOf, expandRow, relayout, resolvePhase, sameClock, shardParams, termsConfig, termsHash } from "../shards/layout.js";
import type { Plan, ShardRead } from "../shards/plan.js";
import type { KeyFlow, KeyRead, KeyRow, RowOp } from "../shapes/rows.js";
import { fold, settle, takenUnder, type PhaseOf } from "./settle.js";
import { invalid } from "../validation/validate.js";
import { isAsync, kindOf, type RateLimitConfig } from "../shapes/validators.js";
import type { RowFields, StoredRow, Take } from "../shapes/stored.js";
import type { Override } from "../shapes/override-validators.js";
import { math } from "../core/math.js";
import { minus, takeCount } from "../core/split.js";

/**
 * The fields of a row holding `state`, written under `config`: the state (an approximate sliding
 * window's `prev` too, an exact one's `log` when it has takes in its window) and `h`, the
 * fingerprint of the config's terms (`termsHash(configTerms(config))`).
 */
export function fieldsOf(state: State, config: RateLimitConfig, h: number): RowFields {
  const fields: RowFields = { value: state.value, ts: state.ts, h };
  if (config.kind !== "sliding window") return fields;
  if (kindOf(config) === "sliding window") fields.prev = state.prev ?? 0;
  // Set even when undefined: a row patched under the same terms whose log emptied (a credit
  // gave back every take) must lose its old log, which a patch would otherwise keep.
  else fields.log = state.log;
  return fields;
}

/**
 * The write that records the terms a limit's rows are written under for its name (once per name
 * and terms; the store skips it when they are recorded already).
 */
export function termsOp<Id>(config: RateLimitConfig): RowOp<Id> {
  const terms = configTerms(config);
  return { op: "terms", hash: termsHash(terms), terms };
}

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
  /** The key carried over to the current layout: its rows, every shard's state, and each shard's `taken`. */
  migration?: { rows: KeyRow<Id>[]; states: State[]; taken: number[] };
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

/**
 * carry adds to `fields`, written over `row` (null: inserted), what every row of the key carries
 * (see `rowCarriedFields`): the key's own override, and a lockout still in force at `now`; a
 * lockout that has ended is cleared from the row.
 */
export function carry(fields: RowFields, row: StoredRow | null, own: Override | undefined, lockedUntil: number, now: number): RowFields {
  if (own !== undefined) fields.o = own;
  if (lockedUntil > now) fields.u = lockedUntil;
  else if (row?.u !== undefined) fields.u = undefined;
  return fields;
}

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
    view.migration = { rows, states, taken };
    return migrated(view, shard);
  }
  const state = fold(row && stateOf(row), takes, p);
  const found = { row, read: { shard, state, p }, taken: latestOf(takes) };
  view.rows.set(shard, found);
  return found;
}

/**
 * The writes that apply `plan`, recording the layout they were written under. After a layout
 * change (unless the request is a peek, which never writes) every shard of the new layout is
 * written and rows the new layout doesn't have are deleted; a refused request writes the
 * migration too, since a row whose clock changed is carried over "as it stands, now" and would
 * otherwise restart that clock on every read and never refill. A key's first write creates all its
 * shards (full ones for those not taken from), so later requests never find a missing row.
 */
export function opsOf<Id>(view: View<Id>, plan: Plan, count: number): RowOp<Id>[] {
  if (isAsync(view.config)) return takesOf(view, plan);
  const ops: RowOp<Id>[] = [];
  const writes = new Map(plan.writes.map((w) => [w.shard, w.state]));
  if (view.migration && count > 0) {
    view.migration.states.forEach((state, shard) => {
      if (!writes.has(shard)) writes.set(shard, state);
    });
    for (const row of view.migration.rows) {
      if (!isShardOf(row.shard, view.n)) ops.push({ op: "delete", id: row.id, shard: row.shard });
    }
  }
  if (writes.size > 0 && view.fresh) {
    for (let shard = 0; shard < view.n; shard++) {
      if (!writes.has(shard)) writes.set(shard, evaluate(null, shardParams(view.config, view.phase, shard), view.now));
    }
  }
  for (const [shard, state] of writes) {
    const row = view.migration ? migrated(view, shard).row : (view.rows.get(shard)?.row ?? null);
    const fields = carry(fieldsOf(state, view.config, view.hash), row, view.own, view.lockedUntil, view.now);
    ops.push(row ? patchOf(row, shard, fields, view.hash) : { op: "insert", shard, fields });
  }
  // Rows written under terms the name may not have recorded yet (a new key, a new layout, a row
  // that carried another fingerprint) record them, so a later change can carry the rows over exactly.
  const recordTerms = writes.size > 0 && (view.fresh || view.migration !== undefined || view.rewrites || ops.some((o) => o.op === "insert"));
  return recordTerms ? [termsOp<Id>(view.config), ...ops] : ops;
}

/**
 * The write of `fields` over a stored row: a patch, which replaces the row when it was written
 * under other terms than `hash` or in full (it then loses the fields the fingerprint stands for).
 */
export function patchOf<Id>(row: KeyRow<Id>, shard: number, fields: RowFields, hash: number): RowOp<Id> {
  return row.h === hash ? { op: "patch", id: row.id, shard, fields } : { op: "patch", id: row.id, shard, fields, replace: true };
}

/** The state of a shard the view has read, as of the current layout. */
export function readOf<Id>(view: View<Id>, shard: number): ShardRead {
  return view.migration ? migrated(view, shard).read : view.rows.get(shard)!.read;
}

/**
 * Asynchronous mode: the takes to record for `plan`, one per shard it writes, each the tokens
 * the shard held at `now` less what it holds after the plan (negative when a balanced take over
 * two shards gave one of them tokens). Rows are written only by the applier. A shard the plan
 * writes gets a take even when its value is unchanged (a count too small to change it, a balance
 * that left it as it was): a transactional write would have stamped its row at this instant, and
 * a later read must evaluate it from there, as it would the row, to the same float.
 *
 * A take is recorded at `now`, or at a later instant the request saw when `now` is behind it
 * (another server's clock, or a promise stamped ahead): the shard's own clock, where a
 * transactional write would have stamped the row, or the latest take it was decided after
 * (`taken`: on its shard, and after a change of terms any under the other terms). So a shard's
 * takes in order of time are in the order they were decided, which is the order the fold applies
 * them in, and so are a key's across a change of terms. Recorded at `now`, the fold would apply a
 * take before the takes it was decided after, refill in between (a fixed window: a whole window),
 * and, across a change of terms, split it over the wrong layout.
 */
export function takesOf<Id>(view: View<Id>, plan: Plan): RowOp<Id>[] {
  return plan.writes.map((w) => {
    const read = readOf(view, w.shard);
    const count = takeCount(evaluate(read.state, read.p, view.now).value, w.state.value);
    const taken = view.migration ? view.migration.taken[w.shard]! : view.rows.get(w.shard)!.taken;
    const ts = math.max(view.now, taken, read.state?.ts ?? -Infinity);
    // A take under an override's config names it; one under the named config is stored with the request's.
    const take: Take = view.overridden ? { shard: w.shard, count, ts, config: view.config } : { shard: w.shard, count, ts };
    return { op: "record" as const, take };
  });
}


/**
 * The whole limit's tokens from the shards read: their sum when every shard was read (`exact`),
 * otherwise scaled by capacity to the whole limit (a sample of zero capacity can't be scaled).
 */
export function scaledTotal(sum: number, readCapacity: number, capacity: number, exact: boolean): number {
  return exact || readCapacity === 0 ? sum : (sum * capacity) / readCapacity;
}

/** Whole ms until `state` is full (0 when it is now), with no other traffic. */
export function fullAfter(state: State, p: Params, now: number): number {
  return state.value >= p.capacity ? 0 : delayUntil(state, p, now, p.capacity);
}

