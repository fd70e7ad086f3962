// The component's registered functions: thin loops over the store (src/component/store.ts).
// Every decision (validation, which rows to read, what to write, what to record, whether to
// throw, whether a stale decision stands) is a pure flow in src/shared; a handler answers the
// flow's reads from the database and executes the verdict it returns.
import { ConvexError, v, type Infer } from "convex/values";
import { creditFlow } from "../shared/flow/credit.js";
import { limitAllOutcome, mergeRequests, type LimitAllOutcome } from "../shared/flow/limit-all.js";
import { MAX_STALENESS_MS, staleVerdict } from "../shared/shards/overload.js";
import { requestFlow, type Raise, type RequestOutcome } from "../shared/flow/request.js";

export { MAX_STALENESS_MS };
import { runPlanAsync, type RowQuery } from "../shared/shapes/rows.js";
import { keyOverrideOps } from "../shared/admin/override-writes.js";
import { validateNameAndKey } from "../shared/validation/validate.js";
import { getValueFlow } from "../shared/flow/value.js";
import { runAtFlow } from "../shared/flow/wait.js";
import { configArgValidator, creditArgs, isAsync, rateLimitArgs, rateLimitCallReturns, rateLimitErrorValidator, rateLimitResult, type RateLimitArgs, type RateLimitCallResult, type RateLimitError } from "../shared/shapes/validators.js";
import { getValueArgs, getValueResult } from "../shared/shapes/value-validators.js";
import { limitAllArgs, limitAllCallResult, limitAllResult, type LimitAllArgs, type LimitAllCallResult } from "../shared/shapes/limit-all-validators.js";
import { takeValidator } from "../shared/shapes/stored.js";
import { decisionEvent, type DecisionEvent } from "../shared/metrics/metrics.js";
import { api, internal } from "./_generated/api.js";
import type { Id } from "./_generated/dataModel.js";
import { internalQuery, mutation, query, type DatabaseReader, type DatabaseWriter } from "./_generated/server.js";
import { recordMetric } from "./metrics.js";
import { deleteKeyRuns, queuedUntil } from "./storeRuns.js";
import { createdBefore, deleteDocs, keyRows, readKey, rebuildNetworks, removeOverride, resetKey, rowOf, writeKey, type KeyAddress } from "./store.js";

/** How many rows `clearAll` deletes per transaction before rescheduling itself. */
const CLEAR_BATCH = 500;

/** Decides a request at `now` (default this instant) on the transaction's own snapshot: every read counts. */
function decide(db: DatabaseReader, args: RateLimitArgs, now = Date.now()) {
  return runPlanAsync(requestFlow<Id<"rateLimits">>(args, now, Math.random), (q) => readKey(db, args, q));
}

/** Records a verdict's metric event, if it has one: one insert, no read. */
async function record(db: DatabaseWriter, at: KeyAddress, event: DecisionEvent | undefined, now: number): Promise<void> {
  if (event) await recordMetric(db, at, event, now);
}

/**
 * Logs a dry-run limit's would-be refusal as one JSON line, from the mutations that take tokens
 * (`check` and the stale first look of an asynchronous limit stay quiet, so each is logged once).
 */
function logDryRun(args: Pick<RateLimitArgs, "name" | "key" | "count">, wouldRefuse: { retryAfter: number } | undefined) {
  if (!wouldRefuse) return;
  const { name, key, count } = args;
  console.log(JSON.stringify({ event: "rateLimit.dryRun", name, key, count: count ?? 1, ...wouldRefuse }));
}

/** Throws a verdict's error here, unless it is for the caller to throw (then it is returned). */
function raiseHere<E extends RateLimitError>(raise: Raise<E> | undefined): { error?: E } {
  if (!raise) return {};
  if (!raise.inCaller) throw new ConvexError(raise.error);
  return { error: raise.error };
}

/** What a decision executes: its result, metric event and error (see `Executed`). */
const executedFields = {
  result: rateLimitResult,
  event: v.optional(decisionEvent),
  raise: v.optional(v.object({ error: rateLimitErrorValidator, inCaller: v.boolean() })),
};

/**
 * A request's verdict as a stale-snapshot query returns it: no row ids, only takes to record;
 * whether it stands on the snapshot, and the refusal it may shed instead (see `staleVerdict`).
 */
const snapshotDecision = v.object({
  ...executedFields,
  takes: v.array(takeValidator),
  safeOnStale: v.boolean(),
  shed: v.optional(v.object(executedFields)),
  snapshotTs: v.int64(),
});
type SnapshotDecision = Infer<typeof snapshotDecision>;

/** Executes a request's verdict: throws or writes, records its event, returns its result. */
async function execute(
  ctx: Parameters<typeof writeKey>[0],
  args: RateLimitArgs,
  outcome: Pick<RequestOutcome<Id<"rateLimits">>, "result" | "ops" | "event" | "raise">,
  now: number,
): Promise<RateLimitCallResult> {
  const error = raiseHere(outcome.raise);
  // Skipped when there is nothing to do: every await costs a call on the hot path.
  if (outcome.ops.length > 0) await writeKey(ctx, args, outcome.ops);
  if (outcome.event) await record(ctx.db, args, outcome.event, now);
  // Only a refusal is returned with its error (see `raiseOf`).
  return error.error && !outcome.result.ok ? { ...outcome.result, error: error.error } : outcome.result;
}

/**
 * Decides a request and takes its tokens. See `RateLimiter.limit` for the arguments and result.
 * Validation errors throw an `InvalidRateLimit` `ConvexError` and write nothing.
 *
 * With `applyUpdates: "asynchronously"`, the decision is first made on a stale snapshot, whose
 * reads never conflict; `staleVerdict` says what of it stands on a snapshot at most
 * {@link MAX_STALENESS_MS} old (an admission leaving every shard it used at least `ASYNC_MARGIN`
 * of its capacity, or, while others are taking, a refusal that sheds the excess); otherwise it is
 * made again on the current state. Either way the tokens taken are recorded with inserts only, and
 * the applier folds them into the rows later.
 */
export const rateLimit = mutation({
  args: rateLimitArgs,
  returns: rateLimitCallReturns,
  handler: async (ctx, args): Promise<RateLimitCallResult> => {
    const now = Date.now();
    // Before convex 1.48 a transaction can't tell its snapshot's time, so how stale another
    // snapshot is can't be known: there every request is decided on the current state.
    if (isAsync(args.config) && !args.exact && canMeasureStaleness(ctx.meta)) {
      const stale: SnapshotDecision = await ctx.runQuery(internal.lib.decideOnSnapshot, args, { useStaleSnapshot: true });
      const stands = staleVerdict(stale, Number(ctx.meta.getSnapshotTs() - stale.snapshotTs) / 1e6);
      if (stands) return await execute(ctx, args, { ...stands, ops: stands.takes.map((take) => ({ op: "record", take })) }, now);
    }
    const outcome = await decide(ctx.db, args, now);
    logDryRun(args, outcome.wouldRefuse);
    return await execute(ctx, args, outcome, now);
  },
});

/**
 * Whether this convex can tell a transaction's snapshot time (`ctx.meta.getSnapshotTs`, convex
 * 1.48 on), which deciding on a stale snapshot needs to know how stale it is.
 */
function canMeasureStaleness(meta: object): boolean {
  return typeof (meta as { getSnapshotTs?: unknown }).getSnapshotTs === "function";
}

/**
 * Decides an asynchronous limit's request on the snapshot this query runs on (`rateLimit` reads
 * it stale), counting the takes recorded but not yet applied. Returns the result, the takes that
 * apply it, whether the decision may stand on a stale snapshot, the refusal it may shed instead,
 * and the snapshot's time.
 */
export const decideOnSnapshot = internalQuery({
  args: rateLimitArgs,
  returns: snapshotDecision,
  handler: async (ctx, args): Promise<SnapshotDecision> => {
    const { result, ops, event, raise, safeOnStale, shed } = await decide(ctx.db, args);
    return {
      result,
      takes: ops.flatMap((op) => (op.op === "record" ? [op.take] : [])),
      ...(event ? { event } : {}),
      ...(raise ? { raise } : {}),
      safeOnStale,
      ...(shed ? { shed } : {}),
      snapshotTs: ctx.meta.getSnapshotTs(),
    };
  },
});

/** Decides a request exactly as `rateLimit` would at this instant, without taking any tokens. */
export const checkRateLimit = query({
  args: rateLimitArgs,
  returns: rateLimitResult,
  handler: async (ctx, args) => {
    const { result, raise } = await decide(ctx.db, args);
    if (raise) throw new ConvexError(raise.error);
    return result;
  },
});

/**
 * Decides every request of a `limitAll`/`checkAll` call on the transaction's own snapshot: the
 * same name and key twice is one request with the counts summed; each is decided by its own flow,
 * exactly (an asynchronous limit's recorded takes count too).
 */
async function decideAll(db: DatabaseReader, args: LimitAllArgs, now = Date.now()): Promise<LimitAllOutcome<Id<"rateLimits">>> {
  const { merged, of } = mergeRequests(args);
  const outcomes = [];
  for (const request of merged) outcomes.push(await decide(db, { ...request, throws: false }, now));
  return limitAllOutcome(args, merged, outcomes, of);
}

/**
 * Decides several limits at once and takes from all of them or none: the writes happen only when
 * every limit admits. See `RateLimiter.limitAll`. One call, one transaction, whatever the count.
 */
export const limitAll = mutation({
  args: limitAllArgs,
  returns: limitAllCallResult,
  handler: async (ctx, args): Promise<LimitAllCallResult> => {
    const now = Date.now();
    const outcome = await decideAll(ctx.db, args, now);
    for (const { request, retryAfter } of outcome.wouldRefuse) logDryRun(request, { retryAfter });
    const error = raiseHere(outcome.raise);
    for (const { request, ops } of outcome.writes) await writeKey(ctx, request, ops);
    for (const { request, event } of outcome.events) await record(ctx.db, request, event, now);
    return { ...outcome.result, ...error };
  },
});

/** Decides several limits at once exactly as `limitAll` would at this instant, taking nothing. */
export const checkAll = query({
  args: limitAllArgs,
  returns: limitAllResult,
  handler: async (ctx, args) => {
    const { result, raise } = await decideAll(ctx.db, args);
    if (raise) throw new ConvexError(raise.error);
    return result;
  },
});

/**
 * Gives tokens back to a key: see `RateLimiter.credit` and `creditFlow` for the rule (never above
 * a shard's capacity). Returns the tokens actually credited.
 */
export const credit = mutation({
  args: creditArgs,
  returns: v.object({ credited: v.number() }),
  handler: async (ctx, args) => {
    const { credited, ops } = await runPlanAsync(creditFlow<Id<"rateLimits">>(args, Date.now()), (q) => readKey(ctx.db, args, q));
    await writeKey(ctx, args, ops);
    return { credited };
  },
});

/**
 * Reads a limit's state for display: the emptiest of `sampleShards` shard rows (default 1),
 * evaluated at the query's time, with that shard's share of the config, and the whole limit's
 * `total`; an asynchronous limit's recorded takes count. See `getValueFlow`. With `wait`, also
 * `runAt`, when work of one token queued now would run, decided at the same instant as
 * `runs.checkRun` decides it (see `runAtFlow`).
 */
export const getValue = query({
  args: getValueArgs,
  returns: getValueResult,
  handler: async (ctx, args) => {
    const now = Date.now();
    const read = (q: RowQuery) => readKey(ctx.db, args, q);
    const value = await runPlanAsync(getValueFlow<Id<"rateLimits">>(args, now, Math.random), read);
    if (args.wait !== true) return value;
    const runAt = await runPlanAsync(runAtFlow<Id<"rateLimits">>(args, now, Math.random, await queuedUntil(ctx.db, args)), read);
    return runAt === undefined ? value : { ...value, runAt };
  },
});

/**
 * Removes every shard row of a limit's name and key, and the takes recorded for it but not yet
 * applied: the next request starts full. A key's own override stays (see `resetOps`): its rows
 * are written full, carrying it, under `config`, the limit's named config (`RateLimiter.reset`
 * passes it; required only for a key with its own override). The key's queued runs are forgotten
 * (their jobs still run): a later `cancelRun` of one cancels its job and credits nothing.
 */
export const resetRateLimit = mutation({
  args: { name: v.string(), key: v.optional(v.string()), config: v.optional(configArgValidator) },
  returns: v.null(),
  handler: async (ctx, args) => {
    validateNameAndKey(args.name, args.key);
    await resetKey(ctx, args);
    // The reset made the key full: its queued runs' tokens are gone, so a cancel credits none back.
    await deleteKeyRuns(ctx.db, args);
    return null;
  },
});

/**
 * Removes every row, every take not yet applied, every override and every queued run (the runs'
 * jobs are left to run), created at or before `before` (ms, default: now), up to 500 documents
 * per transaction, rescheduling itself until none are left. A limit that lost a network entry has
 * its network intervals rebuilt from the entries it keeps, in the same transaction (so no interval
 * outlives its entry); the intervals rewritten count toward the 500 (a batch can pass it by those).
 * A key's own override goes with its rows either way: a row carrying one takes the key's override
 * with it, and a key's override removed takes itself off the key's remaining rows.
 */
export const clearAll = mutation({
  args: { before: v.optional(v.number()) },
  returns: v.null(),
  handler: async (ctx, args) => {
    const now = Date.now();
    const before = args.before ?? now;
    let left = CLEAR_BATCH;
    const rows = await createdBefore(ctx.db, "rateLimits", before, left);
    left -= rows.length;
    for (const row of rows) {
      const at = { name: row.name, key: row.key };
      await writeKey(ctx, at, [{ op: "delete", id: row._id, shard: row.shard }]);
      // A key's own override lives on its rows and in `rateLimitOverrides`: both go, or neither.
      if (row.o !== undefined) await removeOverride(ctx.db, row.name, { key: row.key });
    }
    const takes = await createdBefore(ctx.db, "pendingTakes", before, left);
    left -= takes.length;
    await deleteDocs(ctx.db, takes.map((take) => take._id));
    const overrides = await createdBefore(ctx.db, "rateLimitOverrides", before, left);
    left -= overrides.length;
    const networked = new Set<string>();
    for (const override of overrides) {
      await deleteDocs(ctx.db, [override._id]);
      if (override.scope === "network") networked.add(override.name);
      if (override.scope !== "key") continue;
      // The key's rows lose it, as `overrides.remove` takes it off them (keyOverrideOps).
      const at = { name: override.name, key: override.target };
      const carrying = (await keyRows(ctx.db, at)).map(rowOf).filter((r) => r.o !== undefined);
      await writeKey(ctx, at, keyOverrideOps(carrying, at, undefined, now));
    }
    // Network intervals are derived from the entries: a name that lost one has them rebuilt from
    // those left (an interval's own creation time says nothing of the entries it was made from:
    // setting a nested entry re-inserts the intervals it splits). Each interval written counts.
    for (const name of networked) left -= await rebuildNetworks(ctx.db, name);
    // Runs queued behind a limit: their jobs still run (their tokens went with the rows).
    const runs = await createdBefore(ctx.db, "queuedRuns", before, Math.max(0, left));
    left -= runs.length;
    await deleteDocs(ctx.db, runs.map((run) => run._id));
    if (left <= 0) await ctx.scheduler.runAfter(0, api.lib.clearAll, { before });
    return null;
  },
});

/**
 * Returns the server's clock (`Date.now()`, ms). Kept for apps written for
 * `@convex-dev/rate-limiter`, whose component has it; `RateLimiter.hookAPI` makes the app-side
 * `getServerTime` that `useRateLimit` uses.
 */
export const getServerTime = mutation({
  args: {},
  returns: v.number(),
  handler: async () => Date.now(),
});
