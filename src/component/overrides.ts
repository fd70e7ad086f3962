// Overrides as data: set, read, list and remove a limit's override for one key, one network or
// one tier. Only the app's own server code can call these (a component's functions are never
// reachable from clients). The checks and the rows' writes are pure (src/shared/admin/override-writes.ts); a request
// never writes here, so overrides add no conflicts to the hot path.
import { paginationOptsValidator, paginationResultValidator } from "convex/server";
import { v } from "convex/values";
import { canonicalNetwork } from "../shared/overrides/address.js";
import { scopeOf } from "../shared/overrides/overrides.js";
import { overrideEntryValidator, overrideRecord, overrideScope, overrideTarget, type Override, type OverrideTarget } from "../shared/shapes/override-validators.js";
import { keyOverrideOps, validateOverride, validateTarget } from "../shared/admin/override-writes.js";
import { configArgValidator } from "../shared/shapes/validators.js";
import type { Doc } from "./_generated/dataModel.js";
import { mutation, query } from "./_generated/server.js";
import { keyRows, overrideOf, overridesPage, putOverride, rebuildNetworks, removeOverride, rowOf, writeKey } from "./store.js";

function recordOf(doc: Doc<"rateLimitOverrides">) {
  const target: OverrideTarget =
    doc.scope === "tier" ? { tier: doc.target! } : doc.scope === "network" ? { network: doc.target! } : doc.target === undefined ? {} : { key: doc.target };
  return { target, override: doc.override, ...(doc.note === undefined ? {} : { note: doc.note }), updatedAt: doc.updatedAt };
}

/** The key a key-scoped target names (undefined: the limit without a key, or a tier). */
function keyOf(target: OverrideTarget): string | undefined {
  return "key" in target ? target.key : undefined;
}

/** A target as stored: a network in its one canonical CIDR text, so every spelling finds one entry. */
function stored(target: OverrideTarget): OverrideTarget {
  return "network" in target ? { network: canonicalNetwork(target.network, "target.network") } : target;
}

/**
 * Sets limit `name`'s override for `target`, replacing any it had: see `RateLimiter.setOverride`.
 * `config` is the limit's named config, which the override's config is checked under. A key's
 * override is also written on every row of the key (rows full under it when the key has none);
 * its state is carried over by the next request, never granting tokens.
 */
export const set = mutation({
  args: { name: v.string(), target: overrideTarget, override: overrideEntryValidator, note: v.optional(v.string()), config: configArgValidator },
  returns: v.null(),
  handler: async (ctx, args) => {
    const now = Date.now();
    validateOverride(args.name, args.target, args.override, args.config, args.note);
    const target = stored(args.target);
    const doc = { name: args.name, ...scopeOf(target), override: args.override, ...(args.note === undefined ? {} : { note: args.note }), updatedAt: now };
    await putOverride(ctx.db, target, doc);
    if ("network" in target) await rebuildNetworks(ctx.db, args.name);
    else if (!("tier" in target)) {
      const at = { name: args.name, key: keyOf(target), config: args.config };
      const rows = (await keyRows(ctx.db, at)).map(rowOf);
      // Only a network's entry may be `{ allow }` (validateOverride).
      await writeKey(ctx, at, keyOverrideOps(rows, at, args.override as Override, now));
    }
    return null;
  },
});

/**
 * Removes limit `name`'s override for `target`; returns whether it had one. A key's rows lose it
 * too, and the next request carries their state over to what is then in force.
 */
export const remove = mutation({
  args: { name: v.string(), target: overrideTarget, config: configArgValidator },
  returns: v.boolean(),
  handler: async (ctx, args) => {
    validateTarget(args.name, args.target);
    const target = stored(args.target);
    const existed = await removeOverride(ctx.db, args.name, target);
    // Always rebuilt: intervals an earlier version left without their entry go too.
    if ("network" in target) await rebuildNetworks(ctx.db, args.name);
    else if (!("tier" in target)) {
      const at = { name: args.name, key: keyOf(target), config: args.config };
      const rows = (await keyRows(ctx.db, at)).map(rowOf).filter((r) => r.o !== undefined);
      await writeKey(ctx, at, keyOverrideOps(rows, at, undefined, Date.now()));
    }
    return existed;
  },
});

/** Limit `name`'s override for `target`, or null when it has none. */
export const get = query({
  args: { name: v.string(), target: overrideTarget },
  returns: v.union(overrideRecord, v.null()),
  handler: async (ctx, args) => {
    validateTarget(args.name, args.target);
    const doc = await overrideOf(ctx.db, args.name, stored(args.target));
    return doc ? recordOf(doc) : null;
  },
});

/**
 * Limit `name`'s overrides, a page at a time (`paginationOpts`, as `usePaginatedQuery` passes
 * it): keys' first (in key order), then networks' (in the order of their text), then tiers'; or
 * only those of `scope`.
 */
export const list = query({
  args: { name: v.string(), scope: v.optional(overrideScope), paginationOpts: paginationOptsValidator },
  returns: paginationResultValidator(overrideRecord),
  handler: async (ctx, args) => {
    validateTarget(args.name, {});
    const page = await overridesPage(ctx.db, args.name, args.scope, args.paginationOpts);
    return { ...page, page: page.page.map(recordOf) };
  },
});
