// The clean-up's plan: which keys of which limits to judge in one transaction, within a budget of
// rows read, which rows to delete, and where the next transaction goes on. Pure: the component
// (admin.cleanup) answers its reads from the `name` index and executes the deletes it returns.
import { v, type Infer } from "convex/values";
import { isIdleKey } from "./idle.js";
import { configHash, resolvePhase } from "../shards/layout.js";
import { mergeOverride } from "../overrides/overrides.js";
import type { KeyRow } from "../shapes/rows.js";
import { invalid, validateConfig, validateNameAndKey } from "../validation/validate.js";
import { configValidator, type RateLimitConfig } from "../shapes/validators.js";
import { type Take } from "../shapes/stored.js";

/** CLEANUP_BATCH is how many rows `cleanup` reads per transaction by default (500). */
export const CLEANUP_BATCH = 500;
/** MAX_CLEANUP_BATCH is the most rows `cleanup` may be asked to read per transaction (4000). */
export const MAX_CLEANUP_BATCH = 4000;

/** A limit the clean-up scans: its name and its current config. */
export const cleanupLimit = v.object({ name: v.string(), config: configValidator });

/** Where a clean-up goes on: limit `limit` of its list, after key `after.key` (absent: from the first key). */
export const cleanupCursor = v.object({
  limit: v.number(),
  after: v.optional(v.object({ key: v.optional(v.string()) })),
});
export type CleanupCursor = Infer<typeof cleanupCursor>;

/** What one transaction of the clean-up did. */
export const cleanupResult = v.object({
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
export type CleanupResult = Infer<typeof cleanupResult>;

/** A stored row with the key it belongs to. */
export type AddressedRow<Id> = KeyRow<Id> & { key?: string | undefined };

/**
 * A read the clean-up asks for: `page`, up to `take` rows of limit `name` in index order, after
 * key `after.key` when given; `key`, every row of one key (when `rows`) and whether it has a take
 * waiting for the applier (at most one is read); `tiers`, the configs of limit `name`'s tier
 * overrides and network entries (at most {@link MAX_CLEANUP_TIERS} of each), read once per name
 * and only when a key written under other terms than the named config's turns up.
 */
export type CleanupQuery =
  | { read: "page"; name: string; after?: { key?: string | undefined }; take: number }
  | { read: "key"; name: string; key?: string | undefined; rows: boolean }
  | { read: "tiers"; name: string };

/** MAX_CLEANUP_TIERS is how many of a name's tier overrides, and of its network entries, the clean-up reads to judge keys under (100 each). */
export const MAX_CLEANUP_TIERS = 100;

/**
 * The answer to a {@link CleanupQuery}: rows in index order, the takes found (at most one), and
 * for `tiers`, the tier overrides' configs.
 */
export type CleanupRead<Id> = { rows: AddressedRow<Id>[]; pending: Take[]; tiers?: RateLimitConfig[] };

/** What a transaction of the clean-up does: the rows to delete, what it did, and where to go on. */
export type CleanupPlan<Id> = { deletes: Id[]; result: CleanupResult; next?: CleanupCursor };

/** Splits rows read in index order (one name) into their keys, in order. */
function byKey<Id>(rows: readonly AddressedRow<Id>[]): { key: string | undefined; rows: AddressedRow<Id>[] }[] {
  const groups: { key: string | undefined; rows: AddressedRow<Id>[] }[] = [];
  for (const row of rows) {
    const last = groups[groups.length - 1];
    if (last && last.key === row.key) last.rows.push(row);
    else groups.push({ key: row.key, rows: [row] });
  }
  return groups;
}

/**
 * cleanupFlow plans one transaction of the clean-up at `now` (ms): validates its arguments (an
 * `InvalidRateLimit` error naming the field, before any read), then walks the limits from `cursor`
 * a key at a time, reading up to `batchSize` rows (plus the rest of the last key it reaches, which
 * it judges on all its rows), and deletes every key `isIdleKey` finds idle, whole: under the named
 * config, or, for a key written under other terms, under one of the name's tier overrides (a tier
 * user's key, full again under its tier's config). When the budget
 * runs out first, `next` is where the next transaction goes on.
 */
export function* cleanupFlow<Id>(
  limits: readonly { name: string; config: RateLimitConfig }[],
  batchSize: number | undefined,
  cursor: CleanupCursor | undefined,
  now: number,
): Generator<CleanupQuery, CleanupPlan<Id>, CleanupRead<Id>> {
  const budgetRows = batchSize ?? CLEANUP_BATCH;
  if (!(Number.isInteger(budgetRows) && budgetRows >= 1 && budgetRows <= MAX_CLEANUP_BATCH)) {
    throw invalid("batchSize", budgetRows, `must be a whole number from 1 to ${MAX_CLEANUP_BATCH}`);
  }
  for (const limit of limits) {
    validateNameAndKey(limit.name, undefined);
    validateConfig(limit.config);
  }
  const deletes: Id[] = [];
  const out = { rowsRead: 0, keysRead: 0, keysDeleted: 0, rowsDeleted: 0 };
  let at: CleanupCursor = cursor ?? { limit: 0 };
  while (at.limit < limits.length) {
    const budget = budgetRows - out.rowsRead;
    if (budget <= 0) return { deletes, result: { ...out, done: false }, next: at };
    const { name, config } = limits[at.limit]!;
    // The configs a key of this name may be written under: the named one, then its tiers' (read
    // when first needed). A key full under the one its rows record is idle: its next request
    // under that config starts full, as the kept rows would.
    let tiers: RateLimitConfig[] | undefined;
    const named = configHash(config);
    const page = (yield { read: "page", name, ...(at.after ? { after: at.after } : {}), take: budget }).rows;
    const keys = byKey(page);
    const more = page.length === budget;
    const last = keys[keys.length - 1];
    for (const group of keys) {
      // A full batch may have stopped inside its last key: judge that key on all its rows.
      const whole = more && group === last;
      const read = yield { read: "key", name, key: group.key, rows: whole };
      const rows = whole ? read.rows : group.rows;
      out.rowsRead += rows.length;
      out.keysRead += 1;
      const idleUnder = (c: RateLimitConfig) => isIdleKey({ rows, pending: read.pending }, c, resolvePhase(c, name, group.key), now);
      let idle = idleUnder(config);
      if (!idle && rows.some((r) => r.h !== undefined && r.h !== named)) {
        tiers ??= ((yield { read: "tiers", name }).tiers ?? []).map((c) => mergeOverride(config, c));
        idle = tiers.some(idleUnder);
      }
      if (!idle) continue;
      deletes.push(...rows.map((r) => r.id));
      out.keysDeleted += 1;
      out.rowsDeleted += rows.length;
    }
    at = more && last ? { limit: at.limit, after: last.key === undefined ? {} : { key: last.key } } : { limit: at.limit + 1 };
  }
  return { deletes, result: { ...out, done: true } };
}
