// The component's database adapter: the one module that queries and writes its tables (but the
// metrics tables', in storeMetrics.ts, and the queued runs', in storeRuns.ts; test/one-store.test.ts
// checks it).
// It answers the flows' reads (src/shared/shapes/rows.ts, cleanup.ts, concurrency.ts) and executes their
// writes; every query is written once, here. Handlers import it; it imports no handler.
import type { LeaseInsert, LeaseOp, LeaseQuery, LeaseRecord } from "../shared/flow/concurrency.js";
import type { KeyRead, KeyRow, RowOp, RowQuery } from "../shared/shapes/rows.js";
import { networkIntervals } from "../shared/overrides/address.js";
import { scopeOf } from "../shared/overrides/overrides.js";
import type { NetworkInterval, OverrideEntry, OverrideScope, OverrideTarget } from "../shared/shapes/override-validators.js";
import { resetOps } from "../shared/admin/override-writes.js";
import type { RateLimitConfig } from "../shared/shapes/validators.js";
import type { Take } from "../shared/shapes/stored.js";
import type { Doc, Id, TableNames } from "./_generated/dataModel.js";
import type { PaginationOptions, PaginationResult, WithoutSystemFields } from "convex/server";
import { MAX_CLEANUP_TIERS, type CleanupQuery, type CleanupRead } from "../shared/admin/cleanup.js";
import type { DatabaseReader, DatabaseWriter, MutationCtx } from "./_generated/server.js";
import { wakeApplier } from "./wake.js";

/**
 * firstOf returns a query's first document, or null. It stops at the first document, where
 * `.first()` (`take(1)`) asks the stream once more to learn that it is done: one syscall fewer for
 * each read that finds its document, which is every read on the hot path. The read set is the
 * same: Convex records an index range as read up to the last document the stream returned. Without
 * `take`'s limit the backend may fetch a few more documents of the range ahead, unreturned and
 * unbilled; the ranges read here hold one document, or a key's few shard rows.
 */
export async function firstOf<T>(query: AsyncIterable<T>): Promise<T | null> {
  for await (const doc of query) return doc;
  return null;
}

/** A limit's name and key: the prefix of every read and write here. */
export type KeyAddress = { name: string; key?: string | undefined };
/** A stored row as the flows see it, with its document id. */
export type Row = KeyRow<Id<"rateLimits">>;
/** A flow's write, against documents of `rateLimits`. */
export type Op = RowOp<Id<"rateLimits">>;

/**
 * rowOf returns a stored row as the flows see it: its id and every field the row stores (state,
 * layout and terms), without the document's name, key and bookkeeping, in the order
 * `storedRowFields` declares them.
 */
export function rowOf(doc: Doc<"rateLimits">): Row {
  // Copied field by field, each by name: this runs for every row read, and a rest pattern, or a
  // loop over the field names, costs several times more. test/row-of.test.ts checks that every
  // field of `storedRowFields` is copied, in its order.
  const row: Record<string, unknown> = { id: doc._id };
  if (doc.shard !== undefined) row.shard = doc.shard;
  if (doc.value !== undefined) row.value = doc.value;
  if (doc.ts !== undefined) row.ts = doc.ts;
  if (doc.prev !== undefined) row.prev = doc.prev;
  if (doc.log !== undefined) row.log = doc.log;
  if (doc.h !== undefined) row.h = doc.h;
  if (doc.shards !== undefined) row.shards = doc.shards;
  if (doc.kind !== undefined) row.kind = doc.kind;
  if (doc.rate !== undefined) row.rate = doc.rate;
  if (doc.period !== undefined) row.period = doc.period;
  if (doc.capacity !== undefined) row.capacity = doc.capacity;
  if (doc.terms !== undefined) row.terms = doc.terms;
  if (doc.o !== undefined) row.o = doc.o;
  if (doc.u !== undefined) row.u = doc.u;
  return row as Row;
}

/**
 * takeOf returns a recorded take as the flows see it: its shard, count and instant (ms), and the
 * config it was decided under (it counts under those terms).
 */
export function takeOf(doc: Doc<"pendingTakes">): Take {
  return { shard: doc.shard, count: doc.count, ts: doc.ts, config: doc.config };
}

/** The rows of one key in index order (by shard), or of one of its shards, or (`every`) of every key of the name. */
function rowsQuery(db: DatabaseReader, { name, key }: KeyAddress, shard?: number, every = false) {
  return db
    .query("rateLimits")
    .withIndex("name", (i) => (every ? i.eq("name", name) : shard === undefined ? i.eq("name", name).eq("key", key) : i.eq("name", name).eq("key", key).eq("shard", shard)));
}

/** The takes recorded for one key (or one of its shards) and not yet applied, in index order. */
export function pendingQuery(db: DatabaseReader, { name, key }: KeyAddress, shard?: number) {
  return db
    .query("pendingTakes")
    .withIndex("key", (i) => (shard === undefined ? i.eq("name", name).eq("key", key) : i.eq("name", name).eq("key", key).eq("shard", shard)));
}

/**
 * The takes recorded for one key and not yet applied, as the flows see them, in the order they
 * were recorded: in index order they are by shard, and `settle` folds takes at one instant in
 * the order given (a take recorded after another was seen is stamped no earlier than it).
 */
export async function pendingTakes(db: DatabaseReader, at: KeyAddress): Promise<Take[]> {
  const docs = await pendingQuery(db, at).collect();
  return docs.sort((a, b) => a._creationTime - b._creationTime).map(takeOf);
}

/** The terms recorded for limit `name` under fingerprint `hash` (see `termsHash`): none or one. */
function termsQuery(db: DatabaseReader, name: string, hash: number) {
  return db.query("rateLimitTerms").withIndex("hash", (i) => i.eq("name", name).eq("hash", hash));
}

/** The override of limit `name` for `target` (a key, or a tier): none or one. */
export function overrideQuery(db: DatabaseReader, name: string, target: OverrideTarget) {
  const { scope, target: value } = scopeOf(target);
  return db.query("rateLimitOverrides").withIndex("target", (i) => i.eq("name", name).eq("scope", scope).eq("target", value));
}

/** A limit's overrides in index order (by scope, then target), or those of one scope. */
export function overridesQuery(db: DatabaseReader, name: string, scope?: OverrideScope) {
  return db.query("rateLimitOverrides").withIndex("target", (i) => (scope === undefined ? i.eq("name", name) : i.eq("name", name).eq("scope", scope)));
}

/**
 * networkAt returns the interval of limit `name`'s network entries that holds `address` (32 hex
 * digits), or null: one indexed read, the last interval starting at or before it, which holds it
 * if it ends at or after it. The range read (from that interval's start to the address) conflicts
 * only with an admin's rewrite of it.
 */
export async function networkAt(db: DatabaseReader, name: string, address: string): Promise<Doc<"rateLimitNetworks"> | null> {
  const doc = await firstOf(
    db
      .query("rateLimitNetworks")
      .withIndex("start", (i) => i.eq("name", name).lte("start", address))
      .order("desc"),
  );
  return doc !== null && doc.end >= address ? doc : null;
}

/**
 * rebuildNetworks rewrites limit `name`'s network intervals from its network entries, after one
 * was set or removed: it reads every entry and every interval of the name (the admin path, never a
 * request's), and writes only the intervals that changed, so a request's read of an interval an
 * admin left alone never conflicts. Returns how many intervals it deleted and inserted.
 */
export async function rebuildNetworks(db: DatabaseWriter, name: string): Promise<number> {
  const entries = await overridesQuery(db, name, "network").collect();
  const overrideOf = new Map<string, OverrideEntry>(entries.map((e) => [e.target!, e.override]));
  const wanted = new Map<string, NetworkInterval & { override: OverrideEntry }>();
  for (const interval of networkIntervals([...overrideOf.keys()])) wanted.set(interval.start, { ...interval, override: overrideOf.get(interval.network)! });
  const existing = await db
    .query("rateLimitNetworks")
    .withIndex("start", (i) => i.eq("name", name))
    .collect();
  const stale = existing.filter((doc) => {
    const want = wanted.get(doc.start);
    return !(want !== undefined && want.end === doc.end && want.network === doc.network && JSON.stringify(want.override) === JSON.stringify(doc.override) && wanted.delete(doc.start));
  });
  for (const doc of stale) await db.delete("rateLimitNetworks", doc._id);
  for (const interval of wanted.values()) await db.insert("rateLimitNetworks", { name, ...interval });
  return stale.length + wanted.size;
}

/**
 * knownTerms returns the terms recorded for limit `name` under each of `hashes`, one indexed read
 * each, for answering a flow's `terms` reads from memory (see `answerRead`).
 */
export async function knownTerms(db: DatabaseReader, name: string, hashes: Iterable<number>): Promise<Map<number, string>> {
  const known = new Map<number, string>();
  for (const hash of new Set(hashes)) {
    const doc = await firstOf(termsQuery(db, name, hash));
    if (doc) known.set(hash, doc.terms);
  }
  return known;
}

/** keyRows returns every row of one key, in index order (by shard). */
export function keyRows(db: DatabaseReader, at: KeyAddress): Promise<Doc<"rateLimits">[]> {
  return rowsQuery(db, at).collect();
}

/**
 * readKey answers a flow's read within one name and key, with the takes recorded but not yet
 * applied when asked. Every document read joins the transaction's read set (unless the caller
 * reads a stale snapshot).
 */
export async function readKey(db: DatabaseReader, at: KeyAddress, q: RowQuery): Promise<KeyRead<Id<"rateLimits">>> {
  switch (q.read) {
    case "shard": {
      const doc = await firstOf(rowsQuery(db, at, q.shard));
      const takes = q.pending ? await pendingQuery(db, at, q.shard).collect() : [];
      return { rows: doc ? [rowOf(doc)] : [], pending: takes.map(takeOf) };
    }
    case "any": {
      const doc = await firstOf(rowsQuery(db, at));
      return { rows: doc ? [rowOf(doc)] : [], pending: [] };
    }
    case "all": {
      const docs = await rowsQuery(db, at).collect();
      return { rows: docs.map(rowOf), pending: q.pending ? await pendingTakes(db, at) : [] };
    }
    case "terms": {
      const doc = await firstOf(termsQuery(db, at.name, q.hash));
      return doc ? { rows: [], pending: [], terms: doc.terms } : { rows: [], pending: [] };
    }
    case "tier": {
      const doc = await firstOf(overrideQuery(db, at.name, { tier: q.tier }));
      // A tier's entry is never `{ allow }` (validateOverride refuses it).
      return doc && !("allow" in doc.override) ? { rows: [], pending: [], override: doc.override } : { rows: [], pending: [] };
    }
    case "network": {
      const doc = await networkAt(db, at.name, q.address);
      return doc ? { rows: [], pending: [], entry: { network: doc.network, override: doc.override } } : { rows: [], pending: [] };
    }
    default: {
      const never: never = q;
      throw new Error(`unknown read ${JSON.stringify(never)}`);
    }
  }
}

/**
 * writeKey executes a flow's writes to one key, in order. A recorded take is inserted with the
 * config it was decided under and its commit time, and wakes the applier.
 */
export async function writeKey(
  ctx: { db: DatabaseWriter } & Pick<MutationCtx, "runQuery" | "runMutation">,
  { name, key, config }: KeyAddress & { config?: RateLimitConfig | undefined },
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
        // Replaced when the row was written under other terms or in full (by an earlier version,
        // or upstream): it loses the fields it no longer needs (the fingerprint stands for them).
        if (op.replace) await ctx.db.replace("rateLimits", op.id, { name, ...keyField, shard: op.shard, ...op.fields });
        else await ctx.db.patch("rateLimits", op.id, op.fields);
        break;
      case "delete":
        await ctx.db.delete("rateLimits", op.id);
        break;
      case "record": {
        const under = op.take.config ?? config;
        if (under === undefined) throw new Error(`a take of ${name} recorded without the config it was decided under`);
        await ctx.db.insert("pendingTakes", { name, ...keyField, ...op.take, config: under, committedAt: ctx.db.vars.commitTs });
        recorded = true;
        break;
      }
      case "override":
        await ctx.db.patch("rateLimits", op.id, { o: op.o });
        break;
      case "terms":
        if ((await firstOf(termsQuery(ctx.db, name, op.hash))) === null) {
          await ctx.db.insert("rateLimitTerms", { name, hash: op.hash, terms: op.terms });
        }
        break;
      default: {
        const never: never = op;
        throw new Error(`unknown write ${JSON.stringify(never)}`);
      }
    }
  }
  if (recorded) await wakeApplier(ctx);
}

/**
 * resetKey resets one key: it starts full again. Every take recorded for it is deleted, and its
 * rows too (`resetOps`), except that a key with its own override gets full rows carrying it, under
 * `config` (the limit's named config).
 */
export async function resetKey(ctx: Parameters<typeof writeKey>[0], at: KeyAddress & { config?: RateLimitConfig | undefined }): Promise<void> {
  const rows = (await keyRows(ctx.db, at)).map(rowOf);
  const ops = resetOps(rows, at, Date.now());
  for (const take of await pendingQuery(ctx.db, at).collect()) await ctx.db.delete("pendingTakes", take._id);
  if (ops.length > 0) await writeKey(ctx, at, ops);
}

/** deleteDocs deletes documents by id, in order: what a clean-up, the applier or `clearAll` decided to delete. */
export async function deleteDocs(db: DatabaseWriter, ids: readonly Id<TableNames>[]): Promise<void> {
  for (const id of ids) await db.delete(id);
}

/** The tables `clearAll` empties, oldest first. */
export type ClearedTable = "rateLimits" | "pendingTakes" | "rateLimitOverrides" | "rateLimitNetworks" | "queuedRuns";

/** createdBefore returns up to `limit` documents of `table` created at or before `before` (ms), oldest first. */
export function createdBefore<T extends ClearedTable>(db: DatabaseReader, table: T, before: number, limit: number): Promise<Doc<T>[]> {
  // Typed through one table: TypeScript can't follow the system index's field through a generic name.
  const docs = db.query(table as "rateLimits").withIndex("by_creation_time", (q) => q.lte("_creationTime", before));
  return docs.take(limit) as unknown as Promise<Doc<T>[]>;
}

/**
 * readCleanup answers the clean-up's reads (see `CleanupQuery`): a page of a name's rows from the
 * `name` index, a key's rows and whether it has takes waiting, a name's tiers' configs.
 */
export async function readCleanup(db: DatabaseReader, q: CleanupQuery): Promise<CleanupRead<Id<"rateLimits">>> {
  switch (q.read) {
    case "page": {
      const { name, after, take } = q;
      const docs = await db
        .query("rateLimits")
        .withIndex("name", (i) => (after ? i.eq("name", name).gt("key", after.key) : i.eq("name", name)))
        .take(take);
      return { rows: docs.map((d) => ({ ...rowOf(d), ...(d.key === undefined ? {} : { key: d.key }) })), pending: [] };
    }
    case "key": {
      const rows = q.rows ? (await keyRows(db, q)).map(rowOf) : [];
      const waiting = await firstOf(pendingQuery(db, q));
      return { rows, pending: waiting ? [takeOf(waiting)] : [] };
    }
    case "tiers": {
      // A key is decided under its network's config as under its tier's: both may have written its rows.
      const docs = [...(await overridesQuery(db, q.name, "tier").take(MAX_CLEANUP_TIERS)), ...(await overridesQuery(db, q.name, "network").take(MAX_CLEANUP_TIERS))];
      return { rows: [], pending: [], tiers: docs.flatMap((d) => ("config" in d.override ? [d.override.config] : [])) };
    }
    default: {
      const never: never = q;
      throw new Error(`unknown read ${JSON.stringify(never)}`);
    }
  }
}

/** namePage returns a page of limit `name`'s rows in index order (by key, then shard), with Convex's pagination. */
export function namePage(db: DatabaseReader, name: string, paginationOpts: PaginationOptions): Promise<PaginationResult<Doc<"rateLimits">>> {
  return rowsQuery(db, { name }, undefined, true).paginate(paginationOpts);
}

/** firstRow returns a key's first row in index order (its lowest shard), or null. */
export function firstRow(db: DatabaseReader, at: KeyAddress): Promise<Doc<"rateLimits"> | null> {
  return firstOf(rowsQuery(db, at));
}

/** nameAfter returns the first limit name with rows after `from` (null: the first of all), up to `upTo` if given. */
export async function nameAfter(db: DatabaseReader, from: string | null, upTo?: string): Promise<string | undefined> {
  const doc = await firstOf(
    db.query("rateLimits").withIndex("name", (q) => {
      const lower = from === null ? q : q.gt("name", from);
      return upTo === undefined ? lower : lower.lte("name", upTo);
    }),
  );
  return doc?.name;
}

/** takesFrom returns up to `limit` recorded takes in commit order, from commit timestamp `cursor` on. */
export function takesFrom(db: DatabaseReader, cursor: Doc<"pendingTakes">["committedAt"], limit: number): Promise<Doc<"pendingTakes">[]> {
  return db
    .query("pendingTakes")
    .withIndex("committedAt", (q) => q.gte("committedAt", cursor))
    .take(limit);
}

/** takeExists reports whether a recorded take is still there (not applied, reset or cleared since). */
export async function takeExists(db: DatabaseReader, id: Id<"pendingTakes">): Promise<boolean> {
  return (await db.get(id)) !== null;
}

/** overrideOf returns limit `name`'s override for `target` (a stored target), or null. */
export function overrideOf(db: DatabaseReader, name: string, target: OverrideTarget): Promise<Doc<"rateLimitOverrides"> | null> {
  return firstOf(overrideQuery(db, name, target));
}

/** putOverride writes `doc`, limit `doc.name`'s override for `target`, replacing the one it had. */
export async function putOverride(db: DatabaseWriter, target: OverrideTarget, doc: WithoutSystemFields<Doc<"rateLimitOverrides">>): Promise<void> {
  const existing = await overrideOf(db, doc.name, target);
  if (existing) await db.replace(existing._id, doc);
  else await db.insert("rateLimitOverrides", doc);
}

/** overridesPage returns a page of limit `name`'s overrides in index order (by scope, then target), or of one scope's. */
export function overridesPage(db: DatabaseReader, name: string, scope: OverrideScope | undefined, paginationOpts: PaginationOptions) {
  return overridesQuery(db, name, scope).paginate(paginationOpts);
}

/** removeOverride deletes limit `name`'s override for `target`; returns whether it had one. */
export async function removeOverride(db: DatabaseWriter, name: string, target: OverrideTarget): Promise<boolean> {
  const existing = await overrideOf(db, name, target);
  if (existing) await db.delete(existing._id);
  return existing !== null;
}

/** A lease as the concurrency flows see it. */
function leaseOf(doc: Doc<"leases">): LeaseRecord<Id<"leases">> {
  return { id: doc._id, expiresAt: doc.expiresAt, lease: doc.lease };
}

/** The leases of one name and key, optionally only those unexpired at `now`, earliest expiry first. */
function leasesQuery(db: DatabaseReader, { name, key }: KeyAddress, now?: number) {
  return db
    .query("leases")
    .withIndex("live", (i) => (now === undefined ? i.eq("name", name).eq("key", key) : i.eq("name", name).eq("key", key).gt("expiresAt", now)));
}

/**
 * readLeases answers a concurrency flow's read: the key's unexpired leases (one index range,
 * which joins the read set, so acquires on one key serialize), or one lease by its handle (a
 * malformed or unknown handle finds none).
 */
export async function readLeases(db: DatabaseReader, q: LeaseQuery): Promise<LeaseRecord<Id<"leases">>[]> {
  switch (q.read) {
    case "live":
      return (await leasesQuery(db, q, q.now).collect()).map(leaseOf);
    case "lease": {
      const id = db.normalizeId("leases", q.id);
      const doc = id === null ? null : await db.get(id);
      return doc === null ? [] : [leaseOf(doc)];
    }
    default: {
      const never: never = q;
      throw new Error(`unknown read ${JSON.stringify(never)}`);
    }
  }
}

/** insertLease inserts an acquired lease; its id is the lease's handle. */
export function insertLease(db: DatabaseWriter, lease: LeaseInsert): Promise<Id<"leases">> {
  return db.insert("leases", lease);
}

/** writeLeases executes a concurrency flow's writes to held leases, in order. */
export async function writeLeases(db: DatabaseWriter, ops: readonly LeaseOp<Id<"leases">>[]): Promise<void> {
  for (const op of ops) {
    switch (op.op) {
      case "patch":
        await db.patch(op.id, { expiresAt: op.expiresAt });
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

/** deleteLeases removes every lease of one name and key, expired or not: every slot is free again. */
export async function deleteLeases(db: DatabaseWriter, at: KeyAddress): Promise<number> {
  const docs = await leasesQuery(db, at).collect();
  for (const doc of docs) await db.delete(doc._id);
  return docs.length;
}

/** deleteExpiredLeases deletes up to `limit` leases expired at `now` (any name), oldest first; returns how many. */
export async function deleteExpiredLeases(db: DatabaseWriter, now: number, limit: number): Promise<number> {
  const docs = await db
    .query("leases")
    .withIndex("expiresAt", (i) => i.lte("expiresAt", now))
    .take(limit);
  for (const doc of docs) await db.delete(doc._id);
  return docs.length;
}

