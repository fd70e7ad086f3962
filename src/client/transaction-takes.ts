// What a transaction has taken asynchronously, so a later call on the same key in the same
// transaction decides exactly: a stale snapshot can't see the transaction's own takes, and the
// component can't tell which transaction calls it, so the client, which holds the caller's `ctx`
// (one object per transaction), remembers.
import { keyIdOf } from "../shared/shapes/rows.js";
import { isAsync, type RateLimitConfig } from "../shared/shapes/validators.js";

/**
 * The keys each transaction has taken from asynchronously, by the transaction's `ctx` (one object
 * for the whole of a mutation's handler): their `keyIdOf`s.
 */
const asyncTakes = new WeakMap<object, Set<string>>();

/** The set of keys `ctx`'s transaction has taken from asynchronously (see {@link asyncTakes}). */
export function asyncTakesOf(ctx: object): Set<string> {
  let taken = asyncTakes.get(ctx);
  if (taken === undefined) {
    taken = new Set();
    asyncTakes.set(ctx, taken);
  }
  return taken;
}

/**
 * Notes that `ctx`'s transaction took `count` (default 1) from an asynchronous limit's key, so a
 * later `limit` on that key in the same transaction decides exactly. Other limits: nothing to note.
 */
export function noteAsyncTake(
  ctx: object,
  r: { name: string; key?: string | undefined; count?: number | undefined; config: RateLimitConfig },
): void {
  if (isAsync(r.config) && (r.count ?? 1) > 0) asyncTakesOf(ctx).add(keyIdOf(r));
}

/**
 * exactFor reports whether a request on an asynchronous limit must be decided exactly: when the
 * same transaction (`ctx`) already took from its key, which a stale snapshot can't see.
 */
export function exactFor(ctx: object, r: { name: string; key?: string | undefined; config: RateLimitConfig }): boolean {
  return isAsync(r.config) && asyncTakesOf(ctx).has(keyIdOf(r));
}
