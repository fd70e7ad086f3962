// Admin functions: the clean-up of idle keys, and listings of limit names and of a limit's keys for
// admin pages. Thin loops over the `name` index; what is idle and what a key holds are decided in
// src/shared/idle.ts.
import { paginationOptsValidator, paginationResultValidator, type PaginationResult } from "convex/server";
import { v, type Infer } from "convex/values";
import { isIdleKey, keyStatus, keyStatusValidator, type KeyStatus } from "../shared/idle.js";
import { resolvePhase } from "../shared/layout.js";
import { invalid, validateConfig, validateNameAndKey } from "../shared/validate.js";
import { configValidator } from "../shared/validators.js";
import { api } from "./_generated/api.js";
import { rowOf, takeOf } from "./lib.js";
import type { Doc } from "./_generated/dataModel.js";
import { mutation, query, type DatabaseReader } from "./_generated/server.js";

/** CLEANUP_BATCH is how many rows `cleanup` reads per transaction by default (500). */
export const CLEANUP_BATCH = 500;
/** MAX_CLEANUP_BATCH is the most rows `cleanup` may be asked to read per transaction (4000). */
export const MAX_CLEANUP_BATCH = 4000;
/** MAX_NAMES_PAGE is the most names one page of `listNames` may ask for (1000). */
export const MAX_NAMES_PAGE = 1000;

/** A limit the clean-up scans: its name and its current config. */
const limitValidator = v.object({ name: v.string(), config: configValidator });

/** Where a clean-up goes on: limit `limit` of its list, after key `after.key` (absent: from the first key). */
const cleanupCursor = v.object({
  limit: v.number(),
  after: v.optional(v.object({ key: v.optional(v.string()) })),
});
type CleanupCursor = Infer<typeof cleanupCursor>;

/** What one transaction of the clean-up did. */
const cleanupResult = v.object({
  /** Rows of the limits' state read. */
  rowsRead: v.number(),
  /** Keys whose rows were all read and judged. */
  keysRead: v.number(),
  /** Keys found idle, all of whose rows were deleted. */
  keysDeleted: v.number(),
  /** Rows deleted. */
  rowsDeleted: v.number(),
  /** Whether every limit has been scanned; otherwise the next batch is scheduled. */
  done: v.boolean(),
});
type CleanupResult = Infer<typeof cleanupResult>;

/** One key's rows, in index order. */
type KeyDocs = { key: string | undefined; docs: Doc<"rateLimits">[] };

/** Splits rows read in index order (one name) into their keys, in order. */
function byKey(docs: readonly Doc<"rateLimits">[]): KeyDocs[] {
  const groups: KeyDocs[] = [];
  for (const doc of docs) {
    const last = groups[groups.length - 1];
    if (last && last.key === doc.key) last.docs.push(doc);
    else groups.push({ key: doc.key, docs: [doc] });
  }
  return groups;
}

/** Every row of one name and key, in index order. */
function keyRows(db: DatabaseReader, name: string, key: string | undefined): Promise<Doc<"rateLimits">[]> {
  return db
    .query("rateLimits")
    .withIndex("name", (q) => q.eq("name", name).eq("key", key))
    .collect();
}

/**
 * Deletes the rows of keys that hold no information (see `isIdleKey`): keys that are full, owe
 * nothing, have no takes waiting for the applier and were written under the limit's current
 * layout. Deleting them changes no decision, since a missing row is a full one; it only keeps
 * storage to the keys in use. Keys of another layout, and names not in `limits`, are left alone.
 *
 * `limits` are the names to scan, each with its current config (the decision needs the config:
 * rows don't record every term of it; `RateLimiter.cleanup` passes the limits it was given). It
 * reads at most `batchSize` rows per transaction (default {@link CLEANUP_BATCH}, at most
 * {@link MAX_CLEANUP_BATCH}), plus the rest of the last key it reaches, walking each name's keys in
 * index order, and schedules itself to go on from `cursor` until every limit is scanned.
 *
 * Cost: each row scanned is one document read; each key one more index query on the takes waiting
 * (at most one document read); each row of an idle key one write (its delete). A key is judged and
 * deleted whole in one transaction. Running it while another run is under way is harmless: the
 * second finds less to delete, and overlapping deletes conflict and are retried.
 */
export const cleanup = mutation({
  args: {
    limits: v.array(limitValidator),
    batchSize: v.optional(v.number()),
    cursor: v.optional(cleanupCursor),
  },
  returns: cleanupResult,
  handler: async (ctx, args): Promise<CleanupResult> => {
    const batchSize = args.batchSize ?? CLEANUP_BATCH;
    if (!(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= MAX_CLEANUP_BATCH)) {
      throw invalid("batchSize", batchSize, `must be a whole number from 1 to ${MAX_CLEANUP_BATCH}`);
    }
    for (const limit of args.limits) {
      validateNameAndKey(limit.name, undefined);
      validateConfig(limit.config);
    }
    const now = Date.now();
    const out = { rowsRead: 0, keysRead: 0, keysDeleted: 0, rowsDeleted: 0 };
    let cursor: CleanupCursor = args.cursor ?? { limit: 0 };
    while (cursor.limit < args.limits.length) {
      const budget = batchSize - out.rowsRead;
      if (budget <= 0) {
        await ctx.scheduler.runAfter(0, api.admin.cleanup, { limits: args.limits, batchSize, cursor });
        return { ...out, done: false };
      }
      const { name, config } = args.limits[cursor.limit]!;
      const after = cursor.after;
      const docs = await ctx.db
        .query("rateLimits")
        .withIndex("name", (q) => (after ? q.eq("name", name).gt("key", after.key) : q.eq("name", name)))
        .take(budget);
      const keys = byKey(docs);
      const more = docs.length === budget;
      const last = keys[keys.length - 1];
      // A full batch may have stopped inside its last key: judge that key on all its rows.
      if (more && last) last.docs = await keyRows(ctx.db, name, last.key);
      for (const { key, docs: rows } of keys) {
        out.rowsRead += rows.length;
        out.keysRead += 1;
        const waiting = await ctx.db
          .query("pendingTakes")
          .withIndex("key", (q) => q.eq("name", name).eq("key", key))
          .first();
        const read = {
          rows: rows.map(rowOf),
          pending: waiting ? [takeOf(waiting)] : [],
        };
        if (!isIdleKey(read, config, resolvePhase(config, name, key), now)) continue;
        for (const row of rows) await ctx.db.delete(row._id);
        out.keysDeleted += 1;
        out.rowsDeleted += rows.length;
      }
      cursor = more && last ? { limit: cursor.limit, after: last.key === undefined ? {} : { key: last.key } } : { limit: cursor.limit + 1 };
    }
    return { ...out, done: true };
  },
});

/**
 * Lists the keys of limit `name`, a page at a time, each with its state evaluated at the query's
 * time under `config` (see `KeyStatus`: tokens available across its shards, capacity, ms until
 * full, whether the clean-up would delete it), in key order (the global key first). Uses Convex's
 * pagination (`paginationOpts` in, `{ page, isDone, continueCursor }` out), so `usePaginatedQuery`
 * can drive it through an app query.
 *
 * Pages are counted in rows: `numItems` rows make a page, so a limit of N shards lists about
 * `numItems / N` keys per page. A key is reported on the page holding its first row. Cost: the
 * page's rows, plus for each key listed its takes waiting for the applier (one index query), plus
 * every row of the page's last key again (it may go on past the page) and, after the first page,
 * one row to tell whether the page's first key began on an earlier page.
 */
export const listKeys = query({
  args: { name: v.string(), config: configValidator, paginationOpts: paginationOptsValidator },
  returns: paginationResultValidator(keyStatusValidator),
  handler: async (ctx, { name, config, paginationOpts }): Promise<PaginationResult<KeyStatus>> => {
    validateNameAndKey(name, undefined);
    validateConfig(config);
    const result = await ctx.db
      .query("rateLimits")
      .withIndex("name", (q) => q.eq("name", name))
      .paginate(paginationOpts);
    const keys = byKey(result.page);
    const first = keys[0];
    if (paginationOpts.cursor !== null && first) {
      // Reported on the earlier page that holds its first row.
      const start = await ctx.db
        .query("rateLimits")
        .withIndex("name", (q) => q.eq("name", name).eq("key", first.key))
        .first();
      if (start && start._id !== first.docs[0]!._id) keys.shift();
    }
    const last = keys[keys.length - 1];
    if (last && !result.isDone) last.docs = await keyRows(ctx.db, name, last.key);
    const now = Date.now();
    const page: KeyStatus[] = [];
    for (const { key, docs } of keys) {
      const takes = await ctx.db
        .query("pendingTakes")
        .withIndex("key", (q) => q.eq("name", name).eq("key", key))
        .collect();
      const read = { rows: docs.map(rowOf), pending: takes.map(takeOf) };
      page.push(keyStatus(name, key, read, config, now));
    }
    return { ...result, page };
  },
});

/** Reads a `listNames` cursor: the JSON of the last name listed, or of null at the start. */
function afterName(field: string, cursor: string): string | null {
  let after: unknown;
  try {
    after = JSON.parse(cursor);
  } catch {
    throw invalid(field, cursor, "is not a cursor listNames returned");
  }
  if (after !== null && typeof after !== "string") throw invalid(field, cursor, "is not a cursor listNames returned");
  return after;
}

/**
 * Lists the names of the limits that have state, in index order, a page of up to `numItems` (at
 * most {@link MAX_NAMES_PAGE}) at a time, with Convex's pagination shape. Cost: one index query and
 * one row read per name (it skips from each name straight to the next, however many keys the name
 * has), plus one to tell whether any name is left.
 */
export const listNames = query({
  args: { paginationOpts: paginationOptsValidator },
  returns: paginationResultValidator(v.object({ name: v.string() })),
  handler: async (ctx, { paginationOpts }): Promise<PaginationResult<{ name: string }>> => {
    const { numItems, cursor, endCursor } = paginationOpts;
    if (!(Number.isInteger(numItems) && numItems >= 0 && numItems <= MAX_NAMES_PAGE)) {
      throw invalid("paginationOpts.numItems", numItems, `must be a whole number from 0 to ${MAX_NAMES_PAGE}`);
    }
    const start = cursor === null ? null : afterName("paginationOpts.cursor", cursor);
    // Re-running a page (usePaginatedQuery does) lists exactly up to where it ended before.
    const end = endCursor === undefined || endCursor === null ? undefined : afterName("paginationOpts.endCursor", endCursor);
    /** The first name after `from` (null: the first name), up to `upTo` if given. */
    const nameAfter = async (from: string | null, upTo?: string) => {
      const doc = await ctx.db
        .query("rateLimits")
        .withIndex("name", (q) => {
          const lower = from === null ? q : q.gt("name", from);
          return upTo === undefined ? lower : lower.lte("name", upTo);
        })
        .first();
      return doc?.name;
    };
    const page: { name: string }[] = [];
    let after = start;
    while (end === undefined ? page.length < numItems : end !== null) {
      const name = await nameAfter(after, end ?? undefined);
      if (name === undefined) break;
      page.push({ name });
      after = name;
    }
    const last = end === undefined ? after : end;
    return { page, isDone: (await nameAfter(last)) === undefined, continueCursor: JSON.stringify(last) };
  },
});
