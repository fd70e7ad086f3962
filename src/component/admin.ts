// Admin functions: the clean-up of idle keys, and listings of limit names and of a limit's keys for
// admin pages. Thin loops over the `name` index; what is idle and what a key holds are decided in
// src/shared/admin/idle.ts.
import { paginationOptsValidator, paginationResultValidator, type PaginationResult } from "convex/server";
import { v } from "convex/values";
import { CLEANUP_BATCH, cleanupCursor, cleanupFlow, cleanupLimit, cleanupResult, type CleanupResult } from "../shared/admin/cleanup.js";
import { keyStatus, keyStatusValidator, type KeyStatus } from "../shared/admin/idle.js";
import { runPlanAsync } from "../shared/shapes/rows.js";
import { invalid, validateConfig, validateNameAndKey } from "../shared/validation/validate.js";
import { configValidator } from "../shared/shapes/validators.js";
import { api } from "./_generated/api.js";
import { deleteDocs, firstRow, keyRows, knownTerms, nameAfter, namePage, pendingTakes, readCleanup, rowOf } from "./store.js";
import { MAX_OVER_BATCH } from "./runs.js";
import type { Doc, Id } from "./_generated/dataModel.js";
import { mutation, query } from "./_generated/server.js";

export { CLEANUP_BATCH, MAX_CLEANUP_BATCH } from "../shared/admin/cleanup.js";
/** MAX_NAMES_PAGE is the most names one page of `listNames` may ask for (1000). */
export const MAX_NAMES_PAGE = 1000;
/** Splits rows read in index order (one name) into their keys, in order. */
function byKey(docs: readonly Doc<"rateLimits">[]): { key: string | undefined; docs: Doc<"rateLimits">[] }[] {
  const groups: { key: string | undefined; docs: Doc<"rateLimits">[] }[] = [];
  for (const doc of docs) {
    const last = groups[groups.length - 1];
    if (last && last.key === doc.key) last.docs.push(doc);
    else groups.push({ key: doc.key, docs: [doc] });
  }
  return groups;
}

/**
 * Deletes the rows of keys that hold no information (see `isIdleKey`): keys that are full, owe
 * nothing, have no takes waiting for the applier and were written under the limit's current
 * layout. Deleting them changes no decision, since a missing row is a full one; it only keeps
 * storage to the keys in use. Keys of another layout, and names not in `limits`, are left alone.
 * Its first transaction (no `cursor`) also schedules `runs.deleteOver`, the pass over queued runs
 * that are over, with the same `batchSize` (at most its own {@link MAX_OVER_BATCH}): it reads no
 * queued run itself, so its reads stay one index query per key however many runs a key queued.
 *
 * `limits` are the names to scan, each with its current config (the decision needs the config:
 * rows don't record every term of it; `RateLimiter.cleanup` passes the limits it was given). It
 * reads at most `batchSize` rows per transaction (default {@link CLEANUP_BATCH}, at most
 * {@link MAX_CLEANUP_BATCH}), plus the rest of the last key it reaches, walking each name's keys in
 * index order, and schedules itself to go on from `cursor` until every limit is scanned.
 *
 * Cost: each row scanned is one document read; each key one more index query on the takes waiting
 * (at most one document read); each row of an idle key deleted one write. A key is judged and
 * deleted whole in one transaction. Running it while another run is under way is harmless: the
 * second finds less to delete, and overlapping deletes conflict and are retried.
 */
export const cleanup = mutation({
  args: {
    limits: v.array(cleanupLimit),
    batchSize: v.optional(v.number()),
    cursor: v.optional(cleanupCursor),
  },
  returns: cleanupResult,
  handler: async (ctx, args): Promise<CleanupResult> => {
    const flow = cleanupFlow<Id<"rateLimits">>(args.limits, args.batchSize, args.cursor, Date.now());
    const { deletes, result, next } = await runPlanAsync(flow, (q) => readCleanup(ctx.db, q));
    await deleteDocs(ctx.db, deletes);
    if (next) await ctx.scheduler.runAfter(0, api.admin.cleanup, { ...args, cursor: next });
    // Once per clean-up, after the flow checked batchSize: its own transactions, so the runs it
    // reads never count against this one (the caller's, for the first batch).
    if (args.cursor === undefined) {
      await ctx.scheduler.runAfter(0, api.runs.deleteOver, { batchSize: Math.min(args.batchSize ?? CLEANUP_BATCH, MAX_OVER_BATCH) });
    }
    return result;
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
    const result = await namePage(ctx.db, name, paginationOpts);
    const keys = byKey(result.page);
    const first = keys[0];
    if (paginationOpts.cursor !== null && first) {
      // Reported on the earlier page that holds its first row.
      const start = await firstRow(ctx.db, { name, key: first.key });
      if (start && start._id !== first.docs[0]!._id) keys.shift();
    }
    const last = keys[keys.length - 1];
    if (last && !result.isDone) last.docs = await keyRows(ctx.db, { name, key: last.key });
    const now = Date.now();
    const page: KeyStatus[] = [];
    for (const { key, docs } of keys) {
      const pending = await pendingTakes(ctx.db, { name, key });
      const rows = docs.map(rowOf);
      const hashes = rows.flatMap((r) => (r.h === undefined ? [] : [r.h]));
      const read = { rows, pending, known: await knownTerms(ctx.db, name, hashes) };
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
    const page: { name: string }[] = [];
    let after = start;
    while (end === undefined ? page.length < numItems : end !== null) {
      const name = await nameAfter(ctx.db, after, end ?? undefined);
      if (name === undefined) break;
      page.push({ name });
      after = name;
    }
    const last = end === undefined ? after : end;
    return { page, isDone: (await nameAfter(ctx.db, last)) === undefined, continueCursor: JSON.stringify(last) };
  },
});
