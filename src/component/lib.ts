// The component's registered functions: thin read/write loops. Every decision (validation, which
// rows to read, what to write, what to report) is a pure flow in src/shared/flow.ts; a handler
// answers the flow's reads from the database and executes the writes it returns.
import { v, type Infer } from "convex/values";
import {
  combineResults,
  creditFlow,
  getValueFlow,
  isAsync,
  mergeRequests,
  requestFlow,
  throwIfLimited,
  type KeyRead,
  type KeyRow,
  type RowOp,
  type RowQuery,
  type Take,
} from "../shared/flow.js";
import { outcomeOf, recordsMetrics } from "../shared/metrics.js";
import { staleVerdict } from "../shared/overload.js";
import { runPlanAsync } from "../shared/plan.js";
import { validateNameAndKey } from "../shared/validate.js";
import {
  configValidator,
  getValueArgs,
  getValueResult,
  limitAllArgs,
  limitAllResult,
  rateLimitArgs,
  rateLimitResult,
  takeValidator,
  type LimitAllArgs,
  type RateLimitArgs,
  type RateLimitConfig,
  type RateLimitResult,
} from "../shared/validators.js";
import { api, internal } from "./_generated/api.js";
import type { Doc, Id } from "./_generated/dataModel.js";
import {
  internalQuery,
  mutation,
  query,
  type DatabaseReader,
  type DatabaseWriter,
  type MutationCtx,
} from "./_generated/server.js";
import { wakeApplier } from "./applier.js";
import { recordMetric } from "./metrics.js";

/** How many rows `clearAll` deletes per transaction before rescheduling itself. */
const CLEAR_BATCH = 500;

type Key = { name: string; key?: string };
type Row = KeyRow<Id<"rateLimits">>;
type Read = KeyRead<Id<"rateLimits">>;
type Op = RowOp<Id<"rateLimits">>;

export { MAX_STALENESS_MS } from "../shared/overload.js";

/**
 * Answers a flow's read within one name and key, with the takes recorded but not yet applied when
 * asked. Every document read joins the transaction's read set (unless the caller reads a stale
 * snapshot).
 */
export async function read(db: DatabaseReader, { name, key }: Key, q: RowQuery): Promise<Read> {
  const prefix = () => db.query("rateLimits").withIndex("name", (i) => i.eq("name", name).eq("key", key));
  const pendingOf = (shard?: number) =>
    db
      .query("pendingTakes")
      .withIndex("key", (i) => (shard === undefined ? i.eq("name", name).eq("key", key) : i.eq("name", name).eq("key", key).eq("shard", shard)))
      .collect();
  let docs: Doc<"rateLimits">[];
  let takes: Doc<"pendingTakes">[] = [];
  switch (q.read) {
    case "shard": {
      const doc = await db
        .query("rateLimits")
        .withIndex("name", (i) => i.eq("name", name).eq("key", key).eq("shard", q.shard))
        .first();
      docs = doc ? [doc] : [];
      if (q.pending) takes = await pendingOf(q.shard);
      break;
    }
    case "any": {
      const doc = await prefix().first();
      docs = doc ? [doc] : [];
      break;
    }
    case "all":
      docs = await prefix().collect();
      if (q.pending) takes = await pendingOf();
      break;
    default: {
      const never: never = q;
      throw new Error(`unknown read ${JSON.stringify(never)}`);
    }
  }
  return { rows: docs.map(rowOf), pending: takes.map(takeOf) };
}

/**
 * A stored row as the shared decisions see it: its id and every field the row stores (state,
 * layout and terms), whatever the schema adds, without the document's own bookkeeping.
 */
export function rowOf(doc: Doc<"rateLimits">): Row {
  const { _id, _creationTime: _created, name: _name, key: _key, ...fields } = doc;
  return { ...fields, id: _id };
}

/**
 * A take recorded for the applier as the shared decisions see it: its shard, count and instant
 * (ms), and the config it was decided under (it counts under those terms).
 */
export function takeOf(doc: Doc<"pendingTakes">): Take {
  return { shard: doc.shard, count: doc.count, ts: doc.ts, config: doc.config };
}

/** Executes a flow's writes, in order; a recorded take wakes the applier. */
export async function write(
  ctx: { db: DatabaseWriter } & Pick<MutationCtx, "runQuery" | "runMutation">,
  { name, key, config }: Key & { config?: RateLimitConfig },
  ops: readonly Op[],
): Promise<void> {
  const keyField = key === undefined ? {} : { key };
  let recorded = false;
  for (const op of ops) {
    switch (op.op) {
      case "insert":
        await ctx.db.insert("rateLimits", { name, ...keyField, shard: op.shard, ...op.fields });
        break;
      case "patch":
        await ctx.db.patch(op.id, op.fields);
        break;
      case "delete":
        await ctx.db.delete(op.id);
        break;
      case "record":
        if (!config) throw new Error("a take is recorded with its config");
        await ctx.db.insert("pendingTakes", { name, ...keyField, ...op.take, config, committedAt: ctx.db.vars.commitTs });
        recorded = true;
        break;
      default: {
        const never: never = op;
        throw new Error(`unknown write ${JSON.stringify(never)}`);
      }
    }
  }
  if (recorded) await wakeApplier(ctx);
}

const snapshotDecision = v.object({
  result: rateLimitResult,
  takes: v.array(takeValidator),
  safeOnStale: v.boolean(),
  shed: v.optional(rateLimitResult),
  snapshotTs: v.int64(),
});
type SnapshotDecision = Infer<typeof snapshotDecision>;

/** Decides a request at `now` (default this instant) on the transaction's own snapshot: every read counts. */
function decide(db: DatabaseReader, args: RateLimitArgs, now = Date.now()) {
  return runPlanAsync(requestFlow<Id<"rateLimits">>(args, now, Math.random), (q) => read(db, args, q));
}

/**
 * Records a decision's metric event when the limit has `metrics: true` (a peek, `count: 0`,
 * records nothing): one insert, no read. `decision` is what the limit decided; for a dry run, what
 * it would have decided.
 */
async function recordDecision(
  db: DatabaseWriter,
  args: Pick<RateLimitArgs, "name" | "key" | "count" | "config">,
  decision: { ok: boolean; retryAfter?: number | undefined },
  now: number,
): Promise<void> {
  const count = args.count ?? 1;
  if (!recordsMetrics(args.config) || count === 0) return;
  await recordMetric(db, args, outcomeOf(decision), count, now);
}

/**
 * Logs a dry-run limit's would-be refusal as one JSON line, from the mutations that take tokens
 * (`check` and the stale first look of an asynchronous limit stay quiet, so each is logged once).
 */
function logDryRun(args: Pick<RateLimitArgs, "name" | "key" | "count">, outcome: { wouldRefuse?: { retryAfter: number } }) {
  if (!outcome.wouldRefuse) return;
  const { name, key, count } = args;
  console.log(JSON.stringify({ event: "rateLimit.dryRun", name, key, count: count ?? 1, ...outcome.wouldRefuse }));
}

/**
 * Decides a request and takes its tokens. See `RateLimiter.limit` for the arguments and result.
 * Validation errors throw an `InvalidRateLimit` `ConvexError` and write nothing.
 *
 * With `applyUpdates: "asynchronously"`, the decision is first made on a stale snapshot, whose
 * reads never conflict; `staleVerdict` says what of it stands (an admission leaving every shard
 * it used at least `ASYNC_MARGIN` of its capacity, or, while others are taking, a refusal that
 * sheds the excess); otherwise it is made again on the current state. Either way the tokens taken
 * are recorded with inserts only, and the applier folds them into the rows later.
 */
export const rateLimit = mutation({
  args: rateLimitArgs,
  returns: rateLimitResult,
  handler: async (ctx, args): Promise<RateLimitResult> => {
    const now = Date.now();
    if (isAsync(args.config) && !args.exact) {
      const stale: SnapshotDecision = await ctx.runQuery(internal.lib.decideOnSnapshot, { ...args, throws: false }, { useStaleSnapshot: true });
      const stands = staleVerdict(stale, Number(ctx.meta.getSnapshotTs() - stale.snapshotTs) / 1e6);
      if (stands) {
        throwIfLimited(args, stands.result);
        await write(ctx, args, stands.takes.map((take) => ({ op: "record", take })));
        await recordDecision(ctx.db, args, stands.result, now);
        return stands.result;
      }
    }
    const outcome = await decide(ctx.db, args, now);
    logDryRun(args, outcome);
    await write(ctx, args, outcome.ops);
    await recordDecision(ctx.db, args, outcome.plan, now);
    return outcome.result;
  },
});

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
    const outcome = await decide(ctx.db, args);
    return {
      result: outcome.result,
      takes: outcome.ops.flatMap((op) => (op.op === "record" ? [op.take] : [])),
      safeOnStale: outcome.safeOnStale,
      ...(outcome.shed ? { shed: outcome.shed } : {}),
      snapshotTs: ctx.meta.getSnapshotTs(),
    };
  },
});

/** Decides a request exactly as `rateLimit` would at this instant, without taking any tokens. */
export const checkRateLimit = query({
  args: rateLimitArgs,
  returns: rateLimitResult,
  handler: async (ctx, args) => (await decide(ctx.db, args)).result,
});

/**
 * Decides every request of a `limitAll`/`checkAll` call on the transaction's own snapshot: the
 * same name and key twice is one request with the counts summed; each is decided by its own flow,
 * exactly (an asynchronous limit's recorded takes count too).
 */
async function decideAll(db: DatabaseReader, args: LimitAllArgs, now = Date.now()) {
  const { merged, of } = mergeRequests(args);
  const outcomes = [];
  for (const request of merged) outcomes.push(await decide(db, { ...request, throws: false }, now));
  const result = combineResults(args, merged, outcomes.map((o) => o.result), of);
  return { merged, outcomes, result };
}

/**
 * Decides several limits at once and takes from all of them or none: the writes happen only when
 * every limit admits. See `RateLimiter.limitAll`. One call, one transaction, whatever the count.
 */
export const limitAll = mutation({
  args: limitAllArgs,
  returns: limitAllResult,
  handler: async (ctx, args) => {
    const now = Date.now();
    const { merged, outcomes, result } = await decideAll(ctx.db, args, now);
    outcomes.forEach((outcome, i) => logDryRun(merged[i]!, outcome));
    if (result.ok) {
      for (const [i, outcome] of outcomes.entries()) await write(ctx, merged[i]!, outcome.ops);
    }
    // Metrics: what each limit decided (a dry run: would have). When all admit, each was taken
    // from; otherwise a limit that refused records a refusal, and one that would have admitted
    // records nothing: nothing was taken from it, as when an app skips a second limit after the
    // first refuses.
    for (const [i, outcome] of outcomes.entries()) {
      if (result.ok || !outcome.plan.ok) await recordDecision(ctx.db, merged[i]!, outcome.plan, now);
    }
    return result;
  },
});

/** Decides several limits at once exactly as `limitAll` would at this instant, taking nothing. */
export const checkAll = query({
  args: limitAllArgs,
  returns: limitAllResult,
  handler: async (ctx, args) => (await decideAll(ctx.db, args)).result,
});

/**
 * Gives tokens back to a key: see `RateLimiter.credit` and `creditFlow` for the rule (never above
 * a shard's capacity). Returns the tokens actually credited.
 */
export const credit = mutation({
  args: {
    name: v.string(),
    key: v.optional(v.string()),
    /** Tokens to give back, > 0. */
    count: v.number(),
    /** The shards to credit: the `details.shards` of the `limit` result the tokens came from. */
    shards: v.optional(v.array(v.number())),
    config: configValidator,
  },
  returns: v.object({ credited: v.number() }),
  handler: async (ctx, args) => {
    const { credited, ops } = await runPlanAsync(creditFlow<Id<"rateLimits">>(args, Date.now()), (q) =>
      read(ctx.db, args, q),
    );
    await write(ctx, args, ops);
    return { credited };
  },
});

/**
 * Reads a limit's state for display: the emptiest of `sampleShards` shard rows (default 1),
 * evaluated at the query's time, with that shard's share of the config, and the whole limit's
 * `total`; an asynchronous limit's recorded takes count. See `getValueFlow`.
 */
export const getValue = query({
  args: getValueArgs,
  returns: getValueResult,
  handler: async (ctx, args) =>
    runPlanAsync(getValueFlow<Id<"rateLimits">>(args, Date.now(), Math.random), (q) => read(ctx.db, args, q)),
});

/**
 * Removes every shard row of a limit's name and key, and the takes recorded for it but not yet
 * applied: the next request starts full.
 */
export const resetRateLimit = mutation({
  args: { name: v.string(), key: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, args) => {
    validateNameAndKey(args.name, args.key);
    const { rows } = await read(ctx.db, args, { read: "all" });
    await write(ctx, args, rows.map((r) => ({ op: "delete", id: r.id, shard: r.shard })));
    const takes = await ctx.db
      .query("pendingTakes")
      .withIndex("key", (i) => i.eq("name", args.name).eq("key", args.key))
      .collect();
    for (const take of takes) await ctx.db.delete(take._id);
    return null;
  },
});

/**
 * Removes every row, and every take not yet applied, created at or before `before` (ms, default:
 * now), in batches of 500 per transaction, rescheduling itself until none are left.
 */
export const clearAll = mutation({
  args: { before: v.optional(v.number()) },
  returns: v.null(),
  handler: async (ctx, args) => {
    const before = args.before ?? Date.now();
    const rows = await ctx.db
      .query("rateLimits")
      .withIndex("by_creation_time", (q) => q.lte("_creationTime", before))
      .take(CLEAR_BATCH);
    for (const row of rows) await ctx.db.delete(row._id);
    const takes = await ctx.db
      .query("pendingTakes")
      .withIndex("by_creation_time", (q) => q.lte("_creationTime", before))
      .take(CLEAR_BATCH - rows.length);
    for (const take of takes) await ctx.db.delete(take._id);
    if (rows.length + takes.length === CLEAR_BATCH) {
      await ctx.scheduler.runAfter(0, api.lib.clearAll, { before });
    }
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
