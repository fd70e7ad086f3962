// Whole operations on one key, decided before anything is applied: which rows to read, then
// exactly which rows to insert, patch and delete (a request), or exactly what to report (getValue).
// Each flow is a generator that yields the reads it needs and is sent back the stored rows, so
// the component runs it as a thin read/write loop over the database and tests run it over a Map.
// Pure: the clock and the random draws come in as arguments.
import { ConvexError } from "convex/values";
import { evaluate, type State } from "./algebra.js";
import { relayout, resolvePhase, sameClock, shardConfig, shardParams, type StoredRow } from "./layout.js";
import { planRequest, sampleDistinct, type Plan, type ShardRead } from "./plan.js";
import { validateConfig, validateCount, validateNameAndKey, validateSampleShards } from "./validate.js";
import type {
  GetValueArgs,
  GetValueReturns,
  RateLimitArgs,
  RateLimitConfig,
  RateLimitError,
  RateLimitReturns,
} from "./validators.js";

/** A stored row of one key as a flow sees it: the layout fields and the component's own `id`. */
export type KeyRow<Id> = StoredRow & { id: Id };

/**
 * A read a flow asks for, always within the request's name and key. Each is answered with the
 * rows found, in shard order: `shard`, the row of one shard (none or one); `any`, the key's first
 * row (none or one); `all`, every row of the key.
 */
export type RowQuery = { read: "shard"; shard: number } | { read: "any" } | { read: "all" };

/** The fields a flow writes to a row: its state and the layout it was written under. */
export type RowFields = State & { shards: number; kind: RateLimitConfig["kind"] };

/** A write a flow asks for, within the request's name and key. */
export type RowOp<Id> =
  | { op: "insert"; shard: number; fields: RowFields }
  | { op: "patch"; id: Id; shard: number; fields: RowFields }
  | { op: "delete"; id: Id; shard: number };

/** A flow over one key: yields reads, is sent the rows found, returns `R`. */
export type KeyFlow<Id, R> = Generator<RowQuery, R, KeyRow<Id>[]>;

/** What a request's flow decided: the result to return and the exact writes that apply it. */
export type RequestOutcome<Id> = { plan: Plan; result: RateLimitReturns; ops: RowOp<Id>[] };

/**
 * What one request knows of its key's rows. A missing row is a full shard (never used under this
 * layout). When a row turns out to have been written under another layout (shard count, kind, or
 * fixed-window phase or period; see `sameClock`), the whole key is read and its state
 * redistributed over the current layout (`relayout`); `migration` then holds every shard's state
 * and the rows it replaces.
 */
type View<Id> = {
  config: RateLimitConfig;
  phase: number;
  now: number;
  n: number;
  rows: Map<number, { row: KeyRow<Id> | null; read: ShardRead }>;
  migration?: { rows: KeyRow<Id>[]; states: State[] };
  /** Whether the key has no rows at all (learned when a missing shard made us look). */
  fresh: boolean;
};

function newView<Id>(config: RateLimitConfig, phase: number, now: number): View<Id> {
  return { config, phase, now, n: config.shards ?? 1, rows: new Map(), fresh: false };
}

function migrated<Id>(view: View<Id>, shard: number): { row: KeyRow<Id> | null; read: ShardRead } {
  const { rows, states } = view.migration!;
  return {
    row: rows.find((r) => r.shard === shard) ?? null,
    read: { shard, state: states[shard]!, p: shardParams(view.config, view.phase, shard) },
  };
}

/**
 * Shard `shard`'s stored row and state as of the current layout, reading as little as possible:
 * one index lookup; a look at the key's first row only when the shard's row is missing (is the key
 * new, or laid out differently?); the whole key only when a row of another layout turns up.
 */
function* shardOf<Id>(view: View<Id>, shard: number): KeyFlow<Id, { row: KeyRow<Id> | null; read: ShardRead }> {
  if (view.migration) return migrated(view, shard);
  const cached = view.rows.get(shard);
  if (cached) return cached;
  let row: KeyRow<Id> | null;
  let other: KeyRow<Id> | null = null;
  if (view.n === 1) {
    // One read finds the row, or a row left by an earlier, sharded layout.
    const first = (yield { read: "any" })[0] ?? null;
    row = first?.shard === shard ? first : null;
    other = row ? null : first;
  } else {
    row = (yield { read: "shard", shard })[0] ?? null;
    // Only a missing row needs a look at its siblings. Once a key has rows it has all of them
    // (a key's first write creates every shard), so this is off the hot path.
    if (!row) other = (yield { read: "any" })[0] ?? null;
  }
  if (!row && !other) view.fresh = true;
  const seen = row ?? other;
  const p = shardParams(view.config, view.phase, shard);
  if (seen && (seen.shards !== view.n || !sameClock(seen, p))) {
    const all = yield { read: "all" };
    view.migration = { rows: all, states: relayout(all, view.config, view.phase, view.now) };
    return migrated(view, shard);
  }
  const found = { row, read: { shard, state: row && { value: row.value, ts: row.ts }, p } };
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
function opsOf<Id>(view: View<Id>, plan: Plan, count: number): RowOp<Id>[] {
  const ops: RowOp<Id>[] = [];
  const writes = new Map(plan.writes.map((w) => [w.shard, w.state]));
  if (view.migration && count > 0) {
    view.migration.states.forEach((state, shard) => {
      if (!writes.has(shard)) writes.set(shard, state);
    });
    for (const row of view.migration.rows) {
      if (row.shard >= view.n || !Number.isInteger(row.shard)) ops.push({ op: "delete", id: row.id, shard: row.shard });
    }
  }
  if (writes.size > 0 && view.fresh) {
    for (let shard = 0; shard < view.n; shard++) {
      if (!writes.has(shard)) writes.set(shard, evaluate(null, shardParams(view.config, view.phase, shard), view.now));
    }
  }
  for (const [shard, state] of writes) {
    const row = view.migration ? migrated(view, shard).row : (view.rows.get(shard)?.row ?? null);
    const fields: RowFields = { value: state.value, ts: state.ts, shards: view.n, kind: view.config.kind };
    ops.push(row ? { op: "patch", id: row.id, shard, fields } : { op: "insert", shard, fields });
  }
  return ops;
}

/**
 * The result of a plan, or the `RateLimited` error when the caller asked for `throws` and the work
 * can't run now: refused, or (with `reserve`) reserved for later, so "no throw" means "run now".
 */
export function resultOf(args: Pick<RateLimitArgs, "name" | "throws">, plan: Plan): RateLimitReturns {
  if (args.throws && plan.retryAfter !== undefined) {
    throw new ConvexError<RateLimitError>({ kind: "RateLimited", name: args.name, retryAfter: plan.retryAfter });
  }
  return plan.ok
    ? plan.retryAfter === undefined
      ? { ok: true, shards: plan.shards }
      : { ok: true, retryAfter: plan.retryAfter, shards: plan.shards }
    : { ok: false, retryAfter: plan.retryAfter, shards: plan.shards };
}

/**
 * requestFlow decides a request at `now` and says exactly how to apply it. It validates first
 * (an `InvalidRateLimit` `ConvexError` before any read), reads one shard and a second only when
 * the first can't serve comfortably (`planRequest`), and throws `RateLimited` when `throws` asks
 * for it. `lib.rateLimit` executes the returned `ops`; `lib.checkRateLimit` drops them.
 */
export function* requestFlow<Id>(args: RateLimitArgs, now: number, random: () => number): KeyFlow<Id, RequestOutcome<Id>> {
  validateNameAndKey(args.name, args.key);
  validateConfig(args.config);
  const count = args.count ?? 1;
  const reserve = args.reserve ?? false;
  validateCount(count, args.config, reserve);
  const view = newView<Id>(args.config, resolvePhase(args.config, args.name, args.key), now);
  const flow = planRequest(view.n, now, count, reserve, random);
  let step = flow.next();
  while (!step.done) step = flow.next((yield* shardOf(view, step.value)).read);
  const plan = step.value;
  return { plan, result: resultOf(args, plan), ops: opsOf(view, plan, count) };
}

/**
 * getValueFlow reports a limit's state at `now` without writing: the emptiest of `sampleShards`
 * shards (default 1, drawn uniformly with `random`; ties go to the smallest share) evaluated at
 * `now`, with that shard's own share of the config (start resolved), so `calculateRateLimit(value,
 * config, t)` is exactly what that shard answers at `t`; and `total`, the whole limit's tokens,
 * exact when every shard was read and otherwise scaled from the sample.
 */
export function* getValueFlow<Id>(args: GetValueArgs, now: number, random: () => number): KeyFlow<Id, GetValueReturns> {
  validateNameAndKey(args.name, args.key);
  validateConfig(args.config);
  validateSampleShards(args.sampleShards);
  const view = newView<Id>(args.config, resolvePhase(args.config, args.name, args.key), now);
  const picked = sampleDistinct(view.n, args.sampleShards ?? 1, random);
  for (const shard of picked) yield* shardOf(view, shard);
  // Asked again: a later read may have switched the view to a migrated layout.
  const reads: ShardRead[] = [];
  for (const shard of picked) reads.push((yield* shardOf(view, shard)).read);
  return summarize(reads, args.config, view.phase, now);
}

/** The `getValue` report of the shards read, evaluated at `now`. */
export function summarize(reads: readonly ShardRead[], config: RateLimitConfig, phase: number, now: number): GetValueReturns {
  const evaluated = reads.map((read) => ({ read, cur: evaluate(read.state, read.p, now) }));
  // With every shard read (what hookAPI does by default), what the emptiest can serve every pair a
  // request may draw can serve too.
  const best = evaluated.reduce((x, y) =>
    y.cur.value < x.cur.value || (y.cur.value === x.cur.value && y.read.p.capacity < x.read.p.capacity) ? y : x,
  );
  const readValue = evaluated.reduce((sum, e) => sum + e.cur.value, 0);
  const readCapacity = evaluated.reduce((sum, e) => sum + e.read.p.capacity, 0);
  const capacity = config.capacity ?? config.rate;
  const exact = reads.length === (config.shards ?? 1);
  // Evaluated at the query's time: predicting forward from it gives exactly what predicting from
  // the stored row would, and a client without a clock offset can use `ts` as a lower bound on
  // the server's clock.
  return {
    value: best.cur.value,
    ts: best.cur.ts,
    shard: best.read.shard,
    config: shardConfig(config, phase, best.read.shard),
    total: {
      // Scaled from the sample; a sample of zero capacity (capacity 0) can't be scaled.
      value: exact || readCapacity === 0 ? readValue : (readValue * capacity) / readCapacity,
      capacity,
      exact,
    },
  };
}
