import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";
import { metricEventFields, metricStoredCountFields } from "../shared/metrics/metrics.js";
import { networkIntervalFields, overrideDocFields, pendingTakeFields, storedRowFields, termsFields } from "../shared/shapes/stored.js";
import { queuedRunFields } from "../shared/flow/wait.js";

export default defineSchema({
  /**
   * One row per (name, key, shard): the tokens `value` available at `ts`. Written (inserted,
   * patched, and deleted when a layout shrinks) by `lib.rateLimit`, `lib.limitAll`, `lib.credit`
   * and, for asynchronous limits, `applier.applyBatch`; deleted by `lib.resetRateLimit`,
   * `lib.clearAll` and `admin.cleanup` (idle keys); read by those and by `lib.checkRateLimit`,
   * `lib.checkAll`, `lib.decideOnSnapshot`, `lib.getValue`, `admin.listKeys` and `admin.listNames`. Storage grows with the keys in use, never with the
   * number of requests. Table and index names match `@convex-dev/rate-limiter`, so an app that
   * switches keeps its data.
   */
  rateLimits: defineTable({
    name: v.string(),
    key: v.optional(v.string()),
    /** A shard's state and the layout it was written under: see `storedRowFields`. */
    ...storedRowFields,
  }).index("name", ["name", "key", "shard"]),

  /**
   * The whole terms of a limit that rows fingerprint (`terms`, a number, on rows): one document per
   * limit name and fingerprint. Inserted (when missing) with the first rows written under new
   * terms: a new key, a new layout, a row rewritten from an earlier version's full form; read on
   * those writes (is it there yet?) and only when a row's fingerprint isn't the current config's,
   * to carry the row over exactly. Never deleted: one per config a name has used.
   */
  rateLimitTerms: defineTable(termsFields).index("hash", ["name", "hash"]),

  /**
   * Overrides of a limit for one key, one network or one tier (`scope`, `target`): a config in
   * force instead of the named one, a block until an instant, or (a network's) an exemption.
   * Written only by `overrides.set` and `overrides.remove` (app server code; never on the hot
   * path, so overrides add no conflicts) and deleted by `lib.clearAll`; read by `overrides.get` and
   * `overrides.list`, and by a request that names a tier (one indexed read of its tier's). A
   * network's entry is read on the hot path from `rateLimitNetworks`, never from here. A key's own override is also carried on its rows
   * (`o`), where the request's read of them finds it, and never read from here on the hot path.
   * Never deleted by the clean-up.
   */
  rateLimitOverrides: defineTable(overrideDocFields).index("target", ["name", "scope", "target"]),

  /**
   * A limit's network entries (overrides with `scope: "network"`) flattened into non-overlapping
   * address intervals, each carrying the entry that wins there (the longest prefix) and its
   * override: one document per interval. Rewritten (only the intervals that change) by
   * `overrides.set` and `overrides.remove` of a network target, and deleted by `lib.clearAll`;
   * read by a request of a limit with `networks: true` that carries an address (one indexed read:
   * the last interval starting at or before the address) and by `lib.getValue` likewise. Never
   * written on the hot path.
   */
  rateLimitNetworks: defineTable(networkIntervalFields).index("start", ["name", "start"]),

  /**
   * Consumption recorded but not yet applied to `rateLimits`, one row per take (and, for a take
   * under terms other than the key's rows', a marker of nothing on each of their shards it doesn't
   * take from: see `isMarker` in src/shared/flow/settle.ts), by limits with
   * `applyUpdates: "asynchronously"`. Only inserted on the hot path (inserts of new documents never
   * conflict with each other), by `lib.rateLimit`; read by every decision on the same key (so
   * nothing recorded is ever missed) and by the applier (`applier.getBatch`), which folds them into
   * `rateLimits` and deletes them (`applier.applyBatch`). Also deleted by `lib.resetRateLimit` and
   * `lib.clearAll`.
   */
  pendingTakes: defineTable({
    ...pendingTakeFields,
    /** When the take committed: the applier's cursor, in commit order. */
    committedAt: v.commitTs(),
  })
    .index("key", ["name", "key", "shard"])
    .index("committedAt", ["committedAt"]),

  /**
   * One row per lease of a concurrency limit (`kind: "concurrency"`): held by `name` and `key`
   * until `expiresAt` (UTC ms), acquired for `lease` ms. In flight means unexpired, so an expired
   * lease counts for nothing the instant it expires, and no job is needed to free it. Inserted by
   * `leases.acquire`; patched by `leases.extend`; deleted by `leases.release`, `leases.extend`
   * (expired), `leases.reset` and `leases.deleteExpired` (clean-up); read by those and by
   * `leases.check` and `leases.getValue`. One document per lease, so releases and extends of
   * different leases never write the same document.
   */
  leases: defineTable({
    name: v.string(),
    key: v.optional(v.string()),
    expiresAt: v.number(),
    lease: v.number(),
  })
    .index("live", ["name", "key", "expiresAt"])
    .index("expiresAt", ["expiresAt"]),

  /**
   * One row per request decided by a limit with `metrics: true`: admitted, reserved or refused,
   * and the tokens asked for. Only inserted on the hot path (by `lib.rateLimit` and
   * `lib.limitAll`; inserts of new documents never conflict, and nothing on the hot path reads
   * this table); read by `metrics.get` (by name and time) and by `metrics.fold` (in creation
   * order), which sums them into `metricBuckets` and `metricKeys` and deletes them in the same
   * transaction, so each event is counted exactly once.
   */
  metricEvents: defineTable(metricEventFields).index("name", ["name", "ts"]),

  /**
   * One row per limit name and minute (`bucket`, the minute's start in ms): the requests and
   * tokens admitted, reserved and refused, summed from folded events. Written (inserted, patched)
   * and deleted (after `retainFor`) only by `metrics.fold`; read by it and by `metrics.get`.
   */
  metricBuckets: defineTable({ name: v.string(), bucket: v.number(), ...metricStoredCountFields })
    .index("name", ["name", "bucket"])
    .index("bucket", ["bucket"]),

  /**
   * One row per limit name, minute and key that saw refusals: how many requests of the key were
   * refused, and their tokens, for the top offenders. Written and deleted only by `metrics.fold`;
   * read by it and by `metrics.get`.
   */
  metricKeys: defineTable({
    name: v.string(),
    bucket: v.number(),
    key: v.optional(v.string()),
    refused: v.number(),
    refusedTokens: v.number(),
  })
    .index("name", ["name", "bucket", "key"])
    .index("bucket", ["bucket"]),

  /**
   * One row per request that waits until allowed (`RateLimiter.runWhenAllowed`, and
   * `waitUntilAllowed`'s place in line): its limit, key, tokens, the shards they came from, the
   * instant its work may run (`runAt`) and, for scheduled work, the job that runs it (`job`, in this
   * component's `_scheduled_functions`). Inserted by `runs.runWhenAllowed`, which also reads a key's
   * latest `runAt` (so work runs in the order it was accepted) and deletes up to two of the key's
   * runs that are over; deleted by `runs.cancelRun` (its tokens credited back), `lib.clearAll`, and
   * `runs.deleteOver` (runs that are over, of any key, in `runAt` order: the `runAt` index), which
   * `admin.cleanup` schedules. Never read on the path of `limit`.
   */
  queuedRuns: defineTable(queuedRunFields)
    .index("key", ["name", "key", "runAt"])
    .index("job", ["job"])
    .index("runAt", ["runAt"]),
});
