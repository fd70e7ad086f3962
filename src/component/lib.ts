// The component's registered functions: thin read/write loops. Every decision (validation, which
// rows to read, what to write, what to report) is a pure flow in src/shared/flow.ts; a handler
// answers the flow's reads from the database and executes the writes it returns.
import { v } from "convex/values";
import { getValueFlow, requestFlow, type KeyRow, type RowOp, type RowQuery } from "../shared/flow.js";
import { runPlanAsync } from "../shared/plan.js";
import { validateNameAndKey } from "../shared/validate.js";
import { getValueArgs, getValueReturns, rateLimitArgs, rateLimitReturns } from "../shared/validators.js";
import { api } from "./_generated/api.js";
import type { Id } from "./_generated/dataModel.js";
import { mutation, query, type DatabaseReader, type DatabaseWriter } from "./_generated/server.js";

/** How many rows `clearAll` deletes per transaction before rescheduling itself. */
const CLEAR_BATCH = 500;

type Key = { name: string; key?: string };
type Row = KeyRow<Id<"rateLimits">>;

/** Answers a flow's read within one name and key. Every row read joins the transaction's read set. */
async function read(db: DatabaseReader, { name, key }: Key, q: RowQuery): Promise<Row[]> {
  const prefix = () => db.query("rateLimits").withIndex("name", (i) => i.eq("name", name).eq("key", key));
  let docs;
  switch (q.read) {
    case "shard": {
      const doc = await db
        .query("rateLimits")
        .withIndex("name", (i) => i.eq("name", name).eq("key", key).eq("shard", q.shard))
        .first();
      docs = doc ? [doc] : [];
      break;
    }
    case "any": {
      const doc = await prefix().first();
      docs = doc ? [doc] : [];
      break;
    }
    case "all":
      docs = await prefix().collect();
      break;
    default: {
      const never: never = q;
      throw new Error(`unknown read ${JSON.stringify(never)}`);
    }
  }
  return docs.map((d) => ({ id: d._id, shard: d.shard, value: d.value, ts: d.ts, shards: d.shards, kind: d.kind }));
}

/** Executes a flow's writes, in order. */
async function write(db: DatabaseWriter, { name, key }: Key, ops: RowOp<Id<"rateLimits">>[]): Promise<void> {
  for (const op of ops) {
    switch (op.op) {
      case "insert":
        await db.insert("rateLimits", { name, ...(key === undefined ? {} : { key }), shard: op.shard, ...op.fields });
        break;
      case "patch":
        await db.patch(op.id, op.fields);
        break;
      case "delete":
        await db.delete(op.id);
        break;
      default: {
        const never: never = op;
        throw new Error(`unknown write ${JSON.stringify(never)}`);
      }
    }
  }
}

/**
 * Decides a request and takes its tokens. See `RateLimiter.limit` for the arguments and result.
 * Validation errors throw an `InvalidRateLimit` `ConvexError` and write nothing.
 */
export const rateLimit = mutation({
  args: rateLimitArgs,
  returns: rateLimitReturns,
  handler: async (ctx, args) => {
    const outcome = await runPlanAsync(requestFlow<Id<"rateLimits">>(args, Date.now(), Math.random), (q) =>
      read(ctx.db, args, q),
    );
    await write(ctx.db, args, outcome.ops);
    return outcome.result;
  },
});

/** Decides a request exactly as `rateLimit` would at this instant, without taking any tokens. */
export const checkRateLimit = query({
  args: rateLimitArgs,
  returns: rateLimitReturns,
  handler: async (ctx, args) => {
    const outcome = await runPlanAsync(requestFlow<Id<"rateLimits">>(args, Date.now(), Math.random), (q) =>
      read(ctx.db, args, q),
    );
    return outcome.result;
  },
});

/**
 * Reads a limit's state for display: the emptiest of `sampleShards` shard rows (default 1),
 * evaluated at the query's time, with that shard's share of the config, and the whole limit's
 * `total`. See `getValueFlow`.
 */
export const getValue = query({
  args: getValueArgs,
  returns: getValueReturns,
  handler: async (ctx, args) =>
    runPlanAsync(getValueFlow<Id<"rateLimits">>(args, Date.now(), Math.random), (q) => read(ctx.db, args, q)),
});

/** Removes every shard row of a limit's name and key: the next request starts full. */
export const resetRateLimit = mutation({
  args: { name: v.string(), key: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, args) => {
    validateNameAndKey(args.name, args.key);
    const rows = await read(ctx.db, args, { read: "all" });
    await write(
      ctx.db,
      args,
      rows.map((r) => ({ op: "delete", id: r.id, shard: r.shard })),
    );
    return null;
  },
});

/**
 * Removes every row created at or before `before` (ms, default: now), in batches of 500 per
 * transaction, rescheduling itself until none are left.
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
    if (rows.length === CLEAR_BATCH) {
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
