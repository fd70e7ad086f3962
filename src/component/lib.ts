// The component's registered functions. They are thin: validation and the decision live in the
// pure code under src/shared, the handlers here only read and write rows.
import { ConvexError, v } from "convex/values";
import { evaluate, windowStart, type State } from "../shared/algebra.js";
import {
  isComfortable,
  pickTwo,
  planOne,
  planTwo,
  resolvePhase,
  shardConfig,
  shardParams,
  type Plan,
  type ShardRead,
} from "../shared/shards.js";
import {
  validateConfig,
  validateCount,
  validateNameAndKey,
  validateSampleShards,
} from "../shared/validate.js";
import {
  getValueArgs,
  getValueReturns,
  rateLimitArgs,
  rateLimitReturns,
  type GetValueReturns,
  type RateLimitArgs,
  type RateLimitConfig,
  type RateLimitError,
  type RateLimitReturns,
} from "../shared/validators.js";
import { api } from "./_generated/api.js";
import type { Doc } from "./_generated/dataModel.js";
import {
  mutation,
  query,
  type DatabaseReader,
  type DatabaseWriter,
} from "./_generated/server.js";

/** How many rows `clearAll` deletes per transaction before rescheduling itself. */
const CLEAR_BATCH = 500;

type Row = { doc: Doc<"rateLimits"> | null; read: ShardRead };

/**
 * Reads shard `shard` of a limit. A missing row is a full shard when the limit is new or the
 * shard simply hasn't been used under the current layout; but when a sibling row was written under
 * another shard count (or by a version that didn't record it), the layout changed and this shard
 * starts empty at `now`, so a change of layout never refills anything.
 */
async function readShard(
  db: DatabaseReader,
  args: { name: string; key?: string; config: RateLimitConfig },
  phase: number,
  shard: number,
  now: number,
): Promise<Row> {
  const n = args.config.shards ?? 1;
  const p = shardParams(args.config, phase, shard);
  const prefix = () =>
    db.query("rateLimits").withIndex("name", (q) => q.eq("name", args.name).eq("key", args.key));
  let doc: Doc<"rateLimits"> | null;
  let sibling: Doc<"rateLimits"> | null = null;
  if (n === 1) {
    // One read covers both the row and any sibling left by an earlier layout.
    const first = await prefix().first();
    doc = first?.shard === shard ? first : null;
    sibling = doc ? null : first;
  } else {
    doc = await db
      .query("rateLimits")
      .withIndex("name", (q) => q.eq("name", args.name).eq("key", args.key).eq("shard", shard))
      .first();
    if (!doc) sibling = await prefix().first();
  }
  let state: State | null = doc && { value: doc.value, ts: doc.ts };
  if (!doc && sibling && sibling.shards !== n) {
    state = { value: 0, ts: p.kind === "fixed window" ? windowStart(now, p) : now };
  }
  return { doc, read: { shard, state, p } };
}

/**
 * Decides a request without writing: reads one shard, and a second only when the first can't
 * serve it comfortably (every read joins the transaction's read set, so it's a chance to
 * conflict). Returns the plan and the rows read, for {@link applyPlan}.
 */
export async function decide(
  db: DatabaseReader,
  args: RateLimitArgs,
  now: number,
  random: () => number,
): Promise<{ plan: Plan; rows: Row[] }> {
  validateNameAndKey(args.name, args.key);
  validateConfig(args.config);
  const count = args.count ?? 1;
  const reserve = args.reserve ?? false;
  validateCount(count, args.config, reserve);
  const phase = resolvePhase(args.config, args.name, args.key);
  const n = args.config.shards ?? 1;
  const [first, second] = pickTwo(n, random(), random());
  const a = await readShard(db, args, phase, first, now);
  if (n === 1 || isComfortable(a.read, now, count)) {
    return { plan: planOne(a.read, now, count, reserve), rows: [a] };
  }
  const b = await readShard(db, args, phase, second, now);
  return { plan: planTwo(a.read, b.read, now, count, reserve), rows: [a, b] };
}

/** Turns a plan into the result, throwing `RateLimited` when asked to and the work can't run now. */
function result(args: RateLimitArgs, plan: Plan): RateLimitReturns {
  // With `reserve`, throw whenever the work would have to wait, so "no throw" means "run now".
  if (args.throws && plan.retryAfter !== undefined) {
    throw new ConvexError<RateLimitError>({
      kind: "RateLimited",
      name: args.name,
      retryAfter: plan.retryAfter,
    });
  }
  return plan.ok
    ? plan.retryAfter === undefined
      ? { ok: true, shards: plan.shards }
      : { ok: true, retryAfter: plan.retryAfter, shards: plan.shards }
    : { ok: false, retryAfter: plan.retryAfter, shards: plan.shards };
}

/** Writes a plan's rows, recording the layout they were written under. */
async function applyPlan(db: DatabaseWriter, args: RateLimitArgs, plan: Plan, rows: Row[]) {
  const shards = args.config.shards ?? 1;
  for (const write of plan.writes) {
    const doc = rows.find((r) => r.read.shard === write.shard)?.doc;
    const fields = { value: write.state.value, ts: write.state.ts, shards };
    if (doc) {
      await db.patch(doc._id, fields);
    } else {
      await db.insert("rateLimits", {
        name: args.name,
        ...(args.key === undefined ? {} : { key: args.key }),
        shard: write.shard,
        ...fields,
      });
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
    const { plan, rows } = await decide(ctx.db, args, Date.now(), Math.random);
    const out = result(args, plan);
    await applyPlan(ctx.db, args, plan, rows);
    return out;
  },
});

/** Decides a request exactly as `rateLimit` would at this instant, without taking any tokens. */
export const checkRateLimit = query({
  args: rateLimitArgs,
  returns: rateLimitReturns,
  handler: async (ctx, args) => {
    const { plan } = await decide(ctx.db, args, Date.now(), Math.random);
    return result(args, plan);
  },
});

/** Picks `k` distinct shards out of `n` uniformly (a partial Fisher-Yates shuffle). */
function sampleDistinct(n: number, k: number, random: () => number): number[] {
  const all = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < k; i++) {
    const j = i + Math.min(n - i - 1, Math.floor(random() * (n - i)));
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all.slice(0, k);
}

/**
 * Reads a limit's state for display. Returns the emptiest of `sampleShards` shard rows (default 1)
 * as `{ value, ts, shard, config }`, evaluated at the query's time, where `config` is that shard's own share, start resolved, so
 * `calculateRateLimit(value, config, t)` is exactly what that shard answers at `t`. `total` is the
 * whole limit's available tokens now: exact when every shard was read, else scaled from the sample.
 */
export const getValue = query({
  args: getValueArgs,
  returns: getValueReturns,
  handler: async (ctx, args): Promise<GetValueReturns> => {
    validateNameAndKey(args.name, args.key);
    validateConfig(args.config);
    validateSampleShards(args.sampleShards);
    const now = Date.now();
    const n = args.config.shards ?? 1;
    const phase = resolvePhase(args.config, args.name, args.key);
    const picked = sampleDistinct(n, Math.min(n, args.sampleShards ?? 1), Math.random);
    const rows = [];
    for (const shard of picked) rows.push(await readShard(ctx.db, args, phase, shard, now));
    const evaluated = rows.map((r) => ({ r, cur: evaluate(r.read.state, r.read.p, now) }));
    // The emptiest shard read: a conservative promise, whichever shards a request then picks.
    const best = evaluated.reduce((x, y) => (y.cur.value < x.cur.value ? y : x));
    const readValue = evaluated.reduce((sum, e) => sum + e.cur.value, 0);
    const readCapacity = evaluated.reduce((sum, e) => sum + e.r.read.p.capacity, 0);
    const capacity = args.config.capacity ?? args.config.rate;
    const exact = rows.length === n;
    // The shard's state evaluated at the query's time: predicting forward from it gives exactly
    // what predicting from the stored row would, and a client without a clock offset can use
    // `ts` as a lower bound on the server's clock.
    return {
      value: best.cur.value,
      ts: best.cur.ts,
      shard: best.r.read.shard,
      config: shardConfig(args.config, phase, best.r.read.shard),
      total: {
        value: exact || readCapacity === 0 ? readValue : (readValue * capacity) / readCapacity,
        capacity,
        exact,
      },
    };
  },
});

/** Removes every shard row of a limit's name and key: the next request starts full. */
export const resetRateLimit = mutation({
  args: { name: v.string(), key: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, args) => {
    validateNameAndKey(args.name, args.key);
    const rows = await ctx.db
      .query("rateLimits")
      .withIndex("name", (q) => q.eq("name", args.name).eq("key", args.key))
      .collect();
    for (const row of rows) await ctx.db.delete(row._id);
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

/** Returns the server's clock (`Date.now()`, ms), for measuring the client's clock offset. */
export const getServerTime = mutation({
  args: {},
  returns: v.number(),
  handler: async () => Date.now(),
});
