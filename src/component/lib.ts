// The component's registered functions. They are thin: validation and the decision live in the
// pure code under src/shared, the handlers here only read and write rows.
import { ConvexError, v } from "convex/values";
import { evaluate, type State } from "../shared/algebra.js";
import {
  planRequest,
  relayout,
  resolvePhase,
  sameClock,
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
 * A limit's shard rows as one request sees them, read lazily: one index lookup per shard asked
 * for. A missing row is a full shard (never used under this layout). When a row turns out to have
 * been written under another layout (shard count, kind, or fixed-window phase or period; see
 * `sameClock`), the view switches to the limit's whole state
 * redistributed over the current layout (`relayout`), and `migration` holds what to write so
 * every row is rewritten once under the new layout.
 */
class LimitView {
  private rows = new Map<number, Row>();
  migration: { states: State[]; docs: Doc<"rateLimits">[] } | undefined;
  /** Whether the key has no rows at all (learned when a missing shard made us look). */
  fresh = false;
  private readonly n: number;

  constructor(
    private db: DatabaseReader,
    private args: { name: string; key?: string; config: RateLimitConfig },
    private phase: number,
    readonly now: number,
  ) {
    this.n = args.config.shards ?? 1;
  }

  private prefix() {
    return this.db
      .query("rateLimits")
      .withIndex("name", (q) => q.eq("name", this.args.name).eq("key", this.args.key));
  }

  /** Shard `shard`'s row and state, as of the current layout. */
  async shard(shard: number): Promise<Row> {
    if (this.migration) return this.migrated(shard);
    const cached = this.rows.get(shard);
    if (cached) return cached;
    let doc: Doc<"rateLimits"> | null;
    let other: Doc<"rateLimits"> | null = null;
    if (this.n === 1) {
      // One read finds the row, or a row left by an earlier, sharded layout.
      const first = await this.prefix().first();
      doc = first?.shard === shard ? first : null;
      other = doc ? null : first;
    } else {
      doc = await this.db
        .query("rateLimits")
        .withIndex("name", (q) => q.eq("name", this.args.name).eq("key", this.args.key).eq("shard", shard))
        .first();
      // Only a missing row needs a look at its siblings: is the limit new, or re-laid out? Once
      // a key has rows it has all of them (see applyPlan), so this is off the hot path.
      if (!doc) other = await this.prefix().first();
    }
    if (!doc && !other) this.fresh = true;
    const seen = doc ?? other;
    const p = shardParams(this.args.config, this.phase, shard);
    if (seen && (seen.shards !== this.n || !sameClock(seen, p))) {
      const docs = await this.prefix().collect();
      this.migration = { docs, states: relayout(docs, this.args.config, this.phase, this.now) };
      return this.migrated(shard);
    }
    const row = { doc, read: { shard, state: doc && { value: doc.value, ts: doc.ts }, p } };
    this.rows.set(shard, row);
    return row;
  }

  /** Shard `shard`'s share of the config. */
  params(shard: number) {
    return shardParams(this.args.config, this.phase, shard);
  }

  /**
   * The stored row of a shard this view has seen, without reading: the plan only writes shards
   * it read, a migration read them all, and a fresh key has none.
   */
  docOf(shard: number): Doc<"rateLimits"> | null {
    if (this.migration) return this.migrated(shard).doc;
    return this.rows.get(shard)?.doc ?? null;
  }

  private migrated(shard: number): Row {
    const { docs, states } = this.migration!;
    return {
      doc: docs.find((d) => d.shard === shard) ?? null,
      read: { shard, state: states[shard]!, p: shardParams(this.args.config, this.phase, shard) },
    };
  }
}

/**
 * Decides a request without writing: reads one shard, and a second only when the first can't
 * serve it comfortably (every read joins the transaction's read set, so it's a chance to
 * conflict). Returns the plan and the view it was made from, for {@link applyPlan}.
 */
async function decide(
  db: DatabaseReader,
  args: RateLimitArgs,
  now: number,
  random: () => number,
): Promise<{ plan: Plan; view: LimitView }> {
  validateNameAndKey(args.name, args.key);
  validateConfig(args.config);
  const count = args.count ?? 1;
  const reserve = args.reserve ?? false;
  validateCount(count, args.config, reserve);
  const phase = resolvePhase(args.config, args.name, args.key);
  const view = new LimitView(db, args, phase, now);
  const flow = planRequest(args.config.shards ?? 1, now, count, reserve, random);
  let step = flow.next();
  while (!step.done) step = flow.next((await view.shard(step.value)).read);
  return { plan: step.value, view };
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

/**
 * Writes a plan's rows, recording the layout they were written under. After a layout change,
 * writes every shard of the new layout and deletes rows the new layout doesn't have (unless the
 * request is a peek).
 */
async function applyPlan(db: DatabaseWriter, args: RateLimitArgs, plan: Plan, view: LimitView) {
  const shards = args.config.shards ?? 1;
  const writes = new Map(plan.writes.map((w) => [w.shard, w.state]));
  // A pending migration is written by any request but a peek (which never writes), refused ones
  // included: a row whose clock changed is carried over "as it stands, now", so until it is
  // rewritten every read would start that clock again and the key would never refill.
  if (view.migration && (args.count ?? 1) > 0) {
    view.migration.states.forEach((state, shard) => {
      if (!writes.has(shard)) writes.set(shard, state);
    });
    for (const doc of view.migration.docs) {
      if (doc.shard >= shards || !Number.isInteger(doc.shard)) await db.delete(doc._id);
    }
  }
  // A key's first write creates all its shards (full ones for those not taken from), so later
  // requests never find a missing row and never need to look at siblings.
  if (writes.size > 0 && view.fresh) {
    for (let shard = 0; shard < shards; shard++) {
      if (!writes.has(shard)) writes.set(shard, evaluate(null, view.params(shard), view.now));
    }
  }
  for (const [shard, state] of writes) {
    const doc = view.docOf(shard);
    const fields = { value: state.value, ts: state.ts, shards, kind: args.config.kind };
    if (doc) {
      await db.patch(doc._id, fields);
    } else {
      await db.insert("rateLimits", {
        name: args.name,
        ...(args.key === undefined ? {} : { key: args.key }),
        shard,
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
    const { plan, view } = await decide(ctx.db, args, Date.now(), Math.random);
    const out = result(args, plan);
    await applyPlan(ctx.db, args, plan, view);
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
    const view = new LimitView(ctx.db, args, phase, now);
    for (const shard of picked) await view.shard(shard);
    // Asked again: a read may have switched the view to a migrated layout.
    const rows = await Promise.all(picked.map((shard) => view.shard(shard)));
    const evaluated = rows.map((r) => ({ r, cur: evaluate(r.read.state, r.read.p, now) }));
    // The emptiest shard read, ties going to the smallest share. With every shard read (what
    // hookAPI does by default), what it can serve every pair a request may draw can serve too.
    const best = evaluated.reduce((x, y) =>
      y.cur.value < x.cur.value || (y.cur.value === x.cur.value && y.r.read.p.capacity < x.r.read.p.capacity)
        ? y
        : x,
    );
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
        // Scaled from the sample; a sample of zero capacity (capacity 0) can't be scaled.
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
