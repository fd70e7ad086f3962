// Whole operations on one key, decided before anything is applied: which rows to read, then
// exactly which rows to insert, patch and delete (a request), or exactly what to report (getValue).
// Each flow is a generator that yields the reads it needs and is sent back the stored rows, so
// the component runs it as a thin read/write loop over the database and tests run it over a Map.
// Pure: the clock and the random draws come in as arguments.
import { ConvexError } from "convex/values";
import { delayUntil, evaluate, stateOf, type State } from "./algebra.js";
import { minus } from "./split.js";
import type { Params } from "./algebra.js";
import { relayout, resolvePhase, sameClock, shardConfig, shardParams, type StoredRow } from "./layout.js";
import { shedPlan } from "./overload.js";
import { fold, settle, takenUnder, type PhaseOf } from "./settle.js";
import { planRequest, sampleDistinct, type Plan, type ShardRead, type ShardWrite } from "./plan.js";
import { invalid, validateConfig, validateCount, validateNameAndKey, validateSampleShards } from "./validate.js";
import type {
  GetValueArgs,
  GetValueResult,
  GetValueReturnsWithDetails,
  LimitAllArgs,
  LimitAllResult,
  RateLimitArgs,
  RateLimitConfig,
  RateLimitDetails,
  RateLimitAllError,
  RateLimitError,
  RateLimitResult,
  RateLimitReturns,
} from "./validators.js";

/** A stored row of one key as a flow sees it: the layout fields and the component's own `id`. */
export type KeyRow<Id> = StoredRow & { id: Id };

/**
 * A take of tokens recorded but not yet applied to its row (asynchronous mode): `count` tokens
 * (negative: given back) from shard `shard` at `ts` (ms), under `config` (as stored; a take just
 * decided, or one that records none, is under the request's config).
 */
export type Take = { shard: number; count: number; ts: number; config?: RateLimitConfig };

export { fold } from "./settle.js";

/**
 * A read a flow asks for, always within the request's name and key. Each is answered with the
 * rows found, in shard order: `shard`, the row of one shard (none or one); `any`, the key's first
 * row (none or one); `all`, every row of the key. With `pending`, also the takes recorded but not
 * yet applied in the same range (a limit with `applyUpdates: "asynchronously"`).
 */
export type RowQuery = { read: "shard"; shard: number; pending?: true } | { read: "any" } | { read: "all"; pending?: true };

/** The answer to a {@link RowQuery}: the rows found, and the takes asked for (else none). */
export type KeyRead<Id> = { rows: KeyRow<Id>[]; pending: Take[] };

/**
 * The fields a flow writes to a row: its state, and the layout and terms it was written under
 * (the shard's own `rate`, `period` and `capacity`), so a later change of config is recognised.
 */
export type RowFields = State & {
  shards: number;
  kind: RateLimitConfig["kind"];
  rate: number;
  period: number;
  capacity: number;
  terms?: string;
};

/** The fields of a row holding `state`, written under shard params `p`, `shards` and `kind`. */
function fieldsOf(state: State, p: Params, shards: number, kind: RateLimitConfig["kind"]): RowFields {
  const fields = {
    value: state.value,
    ts: state.ts,
    shards,
    kind,
    rate: p.rate,
    period: p.period,
    capacity: p.capacity,
    ...(p.terms === undefined ? {} : { terms: p.terms }),
  };
  return kind === "sliding window" ? { ...fields, prev: state.prev ?? 0 } : fields;
}

/**
 * A write a flow asks for, within the request's name and key: a row to insert, patch or delete,
 * or (asynchronous mode) a take to record for the applier.
 */
export type RowOp<Id> =
  | { op: "insert"; shard: number; fields: RowFields }
  | { op: "patch"; id: Id; shard: number; fields: RowFields }
  | { op: "delete"; id: Id; shard: number }
  | { op: "record"; take: Take };

/** A flow over one key: yields reads, is sent the rows found, returns `R`. */
export type KeyFlow<Id, R> = Generator<RowQuery, R, KeyRead<Id>>;

/**
 * What a request's flow decided: the result to return and the exact writes that apply it.
 * `safeOnStale` says whether the decision may stand on a stale snapshot (asynchronous mode): it
 * admits, and every shard it used keeps at least {@link ASYNC_MARGIN} of its capacity, a margin
 * for consumption the snapshot may not show yet.
 */
export type RequestOutcome<Id> = {
  plan: Plan;
  result: RateLimitResult;
  ops: RowOp<Id>[];
  safeOnStale: boolean;
  /**
   * Asynchronous mode: the refusal to return instead when the decision doesn't stand on a stale
   * snapshot but others are taking from the key (see `shedPlan` and `staleVerdict` in
   * overload.ts); unset when it must then be decided again on the current state.
   */
  shed?: RateLimitResult;
  /** Set when a dry-run limit would have refused or made the work wait: that wait (ms). */
  wouldRefuse?: { retryAfter: number };
};

/**
 * ASYNC_MARGIN is the fraction of each shard's capacity that a decision on a stale snapshot must
 * leave untouched (asynchronous mode): takes committed after the snapshot, which it can't see, are
 * covered by it. Closer to the limit than that, the decision is made again on the current state,
 * exactly. See docs/hot-limits.md, "Asynchronous mode", for the bound it gives.
 */
export const ASYNC_MARGIN = 0.25;

/** Whether a config records its consumption for the applier instead of writing its rows. */
export function isAsync(config: RateLimitConfig): boolean {
  return config.applyUpdates === "asynchronously";
}

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
  /** Whether a read found takes still waiting for the applier (asynchronous mode): others are taking. */
  busy: boolean;
  /** The phase of any config's windows for this key (a take may record another config). */
  phaseOf: PhaseOf;
};

/**
 * Fails closed on a corrupt stored row (a value or time that isn't a finite number, which no
 * write of ours produces): an `InvalidRateLimit` error naming `state`, never a decision from it.
 */
function checkStored(row: StoredRow): void {
  if (!(Number.isFinite(row.value) && Number.isFinite(row.ts))) {
    throw invalid(
      "state",
      Number.isFinite(row.value) ? row.ts : row.value,
      `shard ${row.shard}'s stored row (value ${row.value} at ${row.ts}) is corrupt; reset the key to clear it`,
    );
  }
}

function newView<Id>(args: { name: string; key?: string | undefined; config: RateLimitConfig }, now: number): View<Id> {
  const phaseOf = (config: RateLimitConfig) => resolvePhase(config, args.name, args.key);
  const { config } = args;
  return { config, phase: phaseOf(config), now, n: config.shards ?? 1, rows: new Map(), fresh: false, busy: false, phaseOf };
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
 * new, or laid out differently?); the whole key only when a row of another layout turns up. An
 * asynchronous limit also reads the takes pending on the shard (on the whole key when unsharded
 * or when the row is missing), and a take recorded under other terms settles the key too
 * (`settle`: each take counted under the terms it was taken under).
 */
function* shardOf<Id>(view: View<Id>, shard: number): KeyFlow<Id, { row: KeyRow<Id> | null; read: ShardRead }> {
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
  const seen = row ?? other;
  if (seen) checkStored(seen);
  const p = shardParams(view.config, view.phase, shard);
  // A take recorded under other terms counts under them (settle), never under the current ones.
  const otherTerms = (key?.pending ?? takes).some((t) => !takenUnder(t, view.config, view.phaseOf));
  if ((seen && (seen.shards !== view.n || !sameClock(seen, p))) || otherTerms) {
    const all = key ?? (yield pending ? { read: "all", pending } : { read: "all" });
    all.rows.forEach(checkStored);
    if (all.pending.length > 0) view.busy = true;
    const states = pending
      ? settle(all.rows, all.pending, view.config, view.phaseOf, view.now)
      : relayout(all.rows, view.config, view.phase, view.now);
    view.migration = { rows: all.rows, states };
    return migrated(view, shard);
  }
  const state = fold(row && stateOf(row), takes, p);
  const found = { row, read: { shard, state, p } };
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
  if (isAsync(view.config)) return takesOf(view, plan);
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
    const fields = fieldsOf(state, shardParams(view.config, view.phase, shard), view.n, view.config.kind);
    ops.push(row ? { op: "patch", id: row.id, shard, fields } : { op: "insert", shard, fields });
  }
  return ops;
}

/** The state of a shard the view has read, as of the current layout. */
function readOf<Id>(view: View<Id>, shard: number): ShardRead {
  return view.migration ? migrated(view, shard).read : view.rows.get(shard)!.read;
}

/**
 * Asynchronous mode: the takes to record for `plan`, one per shard it changed, each the tokens
 * the shard held at `now` less what it holds after the plan (negative when a balanced take over
 * two shards gave one of them tokens). Rows are written only by the applier.
 */
function takesOf<Id>(view: View<Id>, plan: Plan): RowOp<Id>[] {
  return plan.writes.flatMap((w) => {
    const read = readOf(view, w.shard);
    const count = evaluate(read.state, read.p, view.now).value - w.state.value;
    return count === 0 ? [] : [{ op: "record" as const, take: { shard: w.shard, count, ts: view.now } }];
  });
}

/** Whether `plan` admits and leaves every shard it used at least {@link ASYNC_MARGIN} of its capacity. */
function keepsMargin<Id>(view: View<Id>, plan: Plan): boolean {
  if (!plan.ok) return false;
  return plan.shards.every((shard) => {
    const read = readOf(view, shard);
    const after = plan.writes.find((w) => w.shard === shard)?.state.value ?? evaluate(read.state, read.p, view.now).value;
    return after >= ASYNC_MARGIN * read.p.capacity;
  });
}

/** The result a plan returns to the caller: exactly `@convex-dev/rate-limiter`'s shape. */
export function resultOf(plan: Plan): RateLimitReturns {
  return plan.ok
    ? plan.retryAfter === undefined
      ? { ok: true }
      : { ok: true, retryAfter: plan.retryAfter }
    : { ok: false, retryAfter: plan.retryAfter };
}

/**
 * The whole limit's tokens from the shards read: their sum when every shard was read (`exact`),
 * otherwise scaled by capacity to the whole limit (a sample of zero capacity can't be scaled).
 */
function scaledTotal(sum: number, readCapacity: number, capacity: number, exact: boolean): number {
  return exact || readCapacity === 0 ? sum : (sum * capacity) / readCapacity;
}

/** Whole ms until `state` is full (0 when it is now), with no other traffic. */
function fullAfter(state: State, p: Params, now: number): number {
  return state.value >= p.capacity ? 0 : delayUntil(state, p, now, p.capacity);
}

/**
 * The details of a decision (see `rateLimitDetails`): the shards it used, and the tokens left and
 * the wait until full over the shards the view read, scaled to the whole limit unless it read
 * every shard.
 */
function detailsOf<Id>(view: View<Id>, plan: Plan): RateLimitDetails {
  const reads = view.migration
    ? view.migration.states.map((_, shard) => migrated(view, shard).read)
    : [...view.rows.values()].map((r) => r.read);
  const after = reads.map((r) => ({
    p: r.p,
    state: plan.writes.find((w) => w.shard === r.shard)?.state ?? evaluate(r.state, r.p, view.now),
  }));
  const sum = after.reduce((total, a) => total + a.state.value, 0);
  const readCapacity = after.reduce((total, a) => total + a.p.capacity, 0);
  const capacity = view.config.capacity ?? view.config.rate;
  const exact = reads.length === view.n;
  return {
    shards: plan.shards,
    remaining: scaledTotal(sum, readCapacity, capacity, exact),
    capacity,
    resetAfter: Math.max(0, ...after.map((a) => fullAfter(a.state, a.p, view.now))),
    exact,
  };
}

/**
 * throwIfLimited throws the `RateLimited` error when the caller asked for `throws` and the work
 * can't run now: refused, or (with `reserve`) reserved for later, so "no throw" means "run now".
 */
export function throwIfLimited(args: Pick<RateLimitArgs, "name" | "throws">, result: RateLimitReturns): void {
  if (args.throws && result.retryAfter !== undefined) {
    throw new ConvexError<RateLimitError>({ kind: "RateLimited", name: args.name, retryAfter: result.retryAfter });
  }
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
  const view = newView<Id>(args, now);
  const flow = planRequest(view.n, now, count, reserve, random, undefined, !isAsync(args.config));
  let step = flow.next();
  while (!step.done) step = flow.next((yield* shardOf(view, step.value)).read);
  const plan = step.value;
  const details = args.details ? { details: detailsOf(view, plan) } : {};
  // A dry run admits, now, what it would refuse or make wait (a refusal writes nothing), and says so.
  const shadow = args.config.dryRun === true && plan.retryAfter !== undefined;
  const result: RateLimitResult = shadow ? { ok: true, ...details } : { ...resultOf(plan), ...details };
  throwIfLimited(args, result);
  const outcome: RequestOutcome<Id> = { plan, result, ops: opsOf(view, plan, count), safeOnStale: keepsMargin(view, plan) };
  const shed = isAsync(args.config)
    ? shedPlan(plan, plan.shards.map((shard) => readOf(view, shard)), now, {
        count,
        reserve,
        dryRun: args.config.dryRun === true,
        busy: view.busy,
        shards: view.n,
        margin: ASYNC_MARGIN,
      })
    : undefined;
  if (shed) outcome.shed = { ...resultOf(shed), ...(args.details ? { details: detailsOf(view, shed) } : {}) };
  return shadow ? { ...outcome, wouldRefuse: { retryAfter: plan.retryAfter! } } : outcome;
}

/**
 * getValueFlow reports a limit's state at `now` without writing: the emptiest of `sampleShards`
 * shards (default 1, drawn uniformly with `random`; ties go to the smallest share) evaluated at
 * `now`, with that shard's own share of the config (start resolved), so `calculateRateLimit(value,
 * config, t)` is exactly what that shard answers at `t`; and `total`, the whole limit's tokens,
 * exact when every shard was read and otherwise scaled from the sample, when `details` asks.
 */
export function* getValueFlow<Id>(args: GetValueArgs, now: number, random: () => number): KeyFlow<Id, GetValueResult> {
  validateNameAndKey(args.name, args.key);
  validateConfig(args.config);
  validateSampleShards(args.sampleShards);
  const view = newView<Id>(args, now);
  const picked = sampleDistinct(view.n, args.sampleShards ?? 1, random);
  for (const shard of picked) yield* shardOf(view, shard);
  // Asked again: a later read may have switched the view to a migrated layout.
  const reads: ShardRead[] = [];
  for (const shard of picked) reads.push((yield* shardOf(view, shard)).read);
  const summary = summarize(reads, args.config, view.phase, now);
  if (args.details) return summary;
  const { total: _total, ...plain } = summary;
  return plain;
}

/** The `getValue` report of the shards read, evaluated at `now`, with the whole limit's `total`. */
export function summarize(
  reads: readonly ShardRead[],
  config: RateLimitConfig,
  phase: number,
  now: number,
): GetValueReturnsWithDetails {
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
    ...(best.cur.prev === undefined ? {} : { prev: best.cur.prev }),
    shard: best.read.shard,
    config: shardConfig(config, phase, best.read.shard),
    total: {
      // Scaled from the sample; a sample of zero capacity (capacity 0) can't be scaled.
      value: scaledTotal(readValue, readCapacity, capacity, exact),
      capacity,
      exact,
    },
  };
}

/**
 * applyFlow folds takes recorded for one key (asynchronous mode) into its rows at `now`, under
 * `args.config` (the newest take's): it reads every row of the key and settles rows and takes
 * (`settle`): each take folded in order of time under the config it was taken under, rows of
 * another layout or terms carried over (`relayout`). It returns the exact writes: every shard of
 * the layout that changed or is missing is patched or inserted (every shard, when a row or take
 * was of other terms), and rows beyond the layout are deleted. The takes themselves are deleted
 * by the caller, in the same transaction.
 */
export function* applyFlow<Id>(
  args: { name: string; key?: string; config: RateLimitConfig },
  takes: readonly Take[],
  now: number,
): KeyFlow<Id, RowOp<Id>[]> {
  const { config } = args;
  const phaseOf: PhaseOf = (c) => resolvePhase(c, args.name, args.key);
  const phase = phaseOf(config);
  const n = config.shards ?? 1;
  const params = Array.from({ length: n }, (_, i) => shardParams(config, phase, i));
  const { rows } = yield { read: "all" };
  rows.forEach(checkStored);
  // Rows of another layout, or takes under other terms: every shard is rewritten, each take
  // counted under the terms it was taken under (settle).
  const laidOut =
    rows.some((r) => r.shards !== n || !sameClock(r, params[r.shard] ?? params[0]!)) ||
    takes.some((t) => !takenUnder(t, config, phaseOf));
  const after = settle(rows, takes, config, phaseOf, now);
  const ops: RowOp<Id>[] = [];
  if (laidOut) {
    for (const row of rows) {
      if (row.shard >= n || !Number.isInteger(row.shard)) ops.push({ op: "delete", id: row.id, shard: row.shard });
    }
  }
  params.forEach((p, i) => {
    const row = rows.find((r) => r.shard === i) ?? null;
    if (row && !laidOut && !takes.some((t) => t.shard === i)) return;
    const fields = fieldsOf(after[i]!, p, n, config.kind);
    ops.push(row ? { op: "patch", id: row.id, shard: i, fields } : { op: "insert", shard: i, fields });
  });
  return ops;
}

/**
 * mergeRequests groups a `limitAll` call's requests by name and key: the same name and key twice is
 * one request with the counts summed (default 1 each), decided once. Returns the merged requests
 * and, for each original request, the index of its merged one. Two configs for the same name and
 * key are an `InvalidRateLimit` error (field `requests`): they can't both be the limit.
 */
export function mergeRequests(
  args: Pick<LimitAllArgs, "requests" | "reserve" | "details">,
): { merged: RateLimitArgs[]; of: number[] } {
  const merged: RateLimitArgs[] = [];
  const byKey = new Map<string, number>();
  const of = args.requests.map((r) => {
    // Each count on its own, before any sum: a negative count is an error, not a credit.
    if (r.count !== undefined && !(Number.isFinite(r.count) && r.count >= 0)) {
      throw invalid("count", r.count, "must be a finite number ≥ 0");
    }
    const id = keyIdOf(r);
    const at = byKey.get(id);
    if (at === undefined) {
      byKey.set(id, merged.length);
      merged.push({
        name: r.name,
        ...(r.key === undefined ? {} : { key: r.key }),
        count: r.count ?? 1,
        config: r.config,
        ...(args.reserve === undefined ? {} : { reserve: args.reserve }),
        ...(args.details === undefined ? {} : { details: args.details }),
      });
      return merged.length - 1;
    }
    const into = merged[at]!;
    if (!sameConfig(into.config, r.config)) {
      throw invalid("requests", r.name, "names the same limit and key twice with different configs");
    }
    into.count = (into.count ?? 1) + (r.count ?? 1);
    return at;
  });
  return { merged, of };
}

/**
 * keyIdOf returns one string per limit name and key (no key is its own, distinct from every
 * string key), for grouping requests, takes and events by the key they are for.
 */
export function keyIdOf({ name, key }: { name: string; key?: string | undefined }): string {
  return JSON.stringify([name, key ?? null]);
}

/** Whether two configs are the same, field by field, whatever order their fields were written in. */
function sameConfig(a: RateLimitConfig, b: RateLimitConfig): boolean {
  const fields = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...fields].every((f) => (a as Record<string, unknown>)[f] === (b as Record<string, unknown>)[f]);
}

/**
 * combineResults decides a `limitAll` call from each merged request's own result: ok when all are
 * ok; when refused, `retryAfter` is the latest of the refusals' (each request's acceptance only
 * improves with time, so that is when all succeed together); when all are ok but some reserve,
 * the latest wait, when every reservation is repaid. Throws `RateLimited` naming every limit that
 * refused (or, when ok, would make the work wait) if `throws` asks for it.
 */
export function combineResults(
  args: Pick<LimitAllArgs, "throws">,
  merged: readonly RateLimitArgs[],
  results: readonly RateLimitResult[],
  of: readonly number[],
): LimitAllResult {
  const ok = results.every((r) => r.ok);
  const waiting = results.flatMap((r, i) => ((ok ? r.retryAfter !== undefined : !r.ok) ? [i] : []));
  const retryAfter = waiting.length === 0 ? undefined : Math.max(...waiting.map((i) => results[i]!.retryAfter!));
  if (args.throws && retryAfter !== undefined) {
    const names = waiting.map((i) => merged[i]!.name);
    throw new ConvexError<RateLimitAllError>({ kind: "RateLimited", name: names[0]!, retryAfter, names });
  }
  const each = of.map((i) => results[i]!);
  return ok
    ? retryAfter === undefined
      ? { ok: true, results: each }
      : { ok: true, retryAfter, results: each }
    : { ok: false, retryAfter: retryAfter!, results: each };
}

/**
 * creditFlow gives `count` tokens back to a key at `now` and says exactly how to write it. The
 * rule: a credit never lifts a shard above its capacity, and so never makes a key hold more than
 * it could hold; it can't know how many tokens the caller took, so crediting only what was taken
 * is the caller's part, and then no token is created (the key ends where it would be had the
 * request never taken them, or lower where a full shard can't take them back). On a sharded limit
 * `shards` (the `details.shards` of the `limit` result the tokens came from) is required, and the
 * credit goes to those shards, emptiest first: a credit to another shard could outlast the take
 * once the shard it came from refills. An asynchronous limit records the credit as a negative take
 * for the applier. Returns the tokens actually credited.
 */
export function* creditFlow<Id>(
  args: { name: string; key?: string; count: number; config: RateLimitConfig; shards?: readonly number[] },
  now: number,
): KeyFlow<Id, { credited: number; ops: RowOp<Id>[] }> {
  validateNameAndKey(args.name, args.key);
  validateConfig(args.config);
  if (!(Number.isFinite(args.count) && args.count > 0)) throw invalid("count", args.count, "must be a finite number > 0");
  const view = newView<Id>(args, now);
  for (const shard of args.shards ?? []) {
    if (!(Number.isInteger(shard) && shard >= 0 && shard < view.n)) throw invalid("shards", shard, `must be a shard of the limit's ${view.n}`);
  }
  // Without knowing which shards the tokens came from, a credit to another shard could outlast
  // the take once the shard it came from refills: on a sharded limit, say which.
  if (view.n > 1 && !(args.shards && args.shards.length > 0)) {
    throw invalid("shards", "(none)", "a credit to a sharded limit needs the shards the tokens came from: pass the limit result's details.shards");
  }
  const targets = args.shards && args.shards.length > 0 ? [...new Set(args.shards)] : [0];
  const reads: ShardRead[] = [];
  for (const shard of targets) reads.push((yield* shardOf(view, shard)).read);
  // Re-asked: a later read may have switched the view to a migrated layout.
  for (let i = 0; i < reads.length; i++) reads[i] = (yield* shardOf(view, targets[i]!)).read;
  const room = reads
    .map((read) => ({ read, cur: evaluate(read.state, read.p, now) }))
    .sort((a, b) => a.cur.value / Math.max(a.read.p.capacity, 1e-300) - b.cur.value / Math.max(b.read.p.capacity, 1e-300));
  let left = args.count;
  const writes: ShardWrite[] = [];
  for (const { read, cur } of room) {
    if (!(left > 0)) break;
    const gave = Math.min(left, Math.max(0, minus(read.p.capacity, cur.value)));
    if (gave > 0) {
      writes.push({ shard: read.shard, state: { ...cur, value: cur.value + gave } });
      left = minus(left, gave);
    }
  }
  const credited = minus(args.count, Math.max(0, left));
  const plan: Plan = { ok: true, writes, shards: writes.map((w) => w.shard) };
  // An asynchronous limit records the credit as negative takes (see takesOf).
  return { credited, ops: opsOf(view, plan, 1) };
}
