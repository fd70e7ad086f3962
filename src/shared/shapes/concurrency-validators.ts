// The shapes of concurrency limits that cross the component boundary: the config, and the
// arguments and results of the lease functions. Types are inferred from these validators.
import { v, type Infer } from "convex/values";
import { rateLimitArgs, rateLimitErrorValidator, type RateLimitConfig } from "./validators.js";
import type { CalendarConfig } from "./calendar-validators.js";

/**
 * A concurrency limit: at most `capacity` leases held at once per key ("in flight"), each holding
 * its slot until it is released or `lease` ms pass since it was acquired or last extended. A
 * lease past its time stops counting at once (in-flight means unexpired), so a holder that
 * crashes frees its slot at its expiry with no job running; clean-up later deletes what is left.
 * Acquired with `RateLimiter.acquire`, given back with `release`; see docs/guide.md
 * ("Concurrency limits").
 *
 * Pro: bounds work running at once (LLM generations, exports, slow providers), which a rate
 * can't: a rate bounds how often work starts, whatever it costs to run.
 * Con: each acquire reads the key's live leases (up to `capacity` documents), and every acquire,
 * release or extend on one key conflicts with acquires on it running at the same time; no
 * shards (a slot count split over shards would refuse while another shard has room).
 */
export const concurrencyValidator = v.object({
  kind: v.literal("concurrency"),
  /**
   * The most leases held at once per key: a whole number from 1 to 1000. Named as the other kinds
   * name the most they hold at once; headers and `getValue` report it as `capacity` too.
   */
  capacity: v.number(),
  /**
   * How long a lease holds its slot (ms) unless released first, counted from its acquire or its
   * last extend: the safety net for a holder that crashes. Finite, ≥ 1 ms.
   */
  lease: v.number(),
  /**
   * Record each acquire's outcome (admitted or refused, one slot) as a metric event, like a rate
   * limit's `metrics`: one insert per acquire, no read. Default false.
   */
  metrics: v.optional(v.boolean()),
});
export type ConcurrencyConfig = Infer<typeof concurrencyValidator>;

/** Any limit the `RateLimiter` constructor takes: a rate limit, a calendar quota or a concurrency limit. */
export type LimitConfig = RateLimitConfig | CalendarConfig | ConcurrencyConfig;

/** The arguments of `leases.acquire` and `leases.check`. */
export const acquireArgs = {
  /** The name of the limit. Must be non-empty. */
  name: v.string(),
  /** Whose slots: e.g. a user ID. Omit it for one global limit. */
  key: v.optional(v.string()),
  /** Throw a `RateLimited` `ConvexError` instead of returning `{ ok: false }`. Default false. */
  throws: v.optional(v.boolean()),
  /** With `throws`: the caller throws the returned `error` itself (see `rateLimitArgs.raiseInCaller`). */
  raiseInCaller: v.optional(v.boolean()),
  config: concurrencyValidator,
};
const acquireArgsObject = v.object(acquireArgs);
export type AcquireArgs = Infer<typeof acquireArgsObject>;

/**
 * The result of `acquire`:
 * - `ok: true`: a slot is yours; `lease` is the opaque handle to `release` (or `extend`) it with,
 *   and `expiresAt` (UTC ms) is when it frees itself if neither happens.
 * - `ok: false`: every slot is held; `retryAfter` is the whole ms until enough of the leases held
 *   now expire for one to be free (with `capacity` leases held: the earliest one's expiry), so the
 *   same acquire at that instant succeeds if nothing else acquired and no config changed. A
 *   release frees a slot sooner; the hook and clients may retry then.
 */
export const acquireResult = v.union(
  v.object({ ok: v.literal(true), lease: v.string(), expiresAt: v.number() }),
  v.object({ ok: v.literal(false), retryAfter: v.number() }),
);
export type AcquireResult = Infer<typeof acquireResult>;

/**
 * What `leases.acquire` returns: {@link acquireResult} and, when refused with `throws` and
 * `raiseInCaller`, the `RateLimited` error for the caller to throw (so the refusal's metric event
 * is kept; a throw in the component would roll it back).
 */
export const acquireCallResult = v.union(
  v.object({ ok: v.literal(true), lease: v.string(), expiresAt: v.number() }),
  v.object({ ok: v.literal(false), retryAfter: v.number(), error: v.optional(rateLimitErrorValidator) }),
);
export type AcquireCallResult = Infer<typeof acquireCallResult>;

/** The arguments of `leases.extend`. */
export const extendArgs = {
  /** The handle `acquire` returned. */
  lease: v.string(),
  /** The lease's new length from now (ms): finite, ≥ 1. Defaults to the `lease` it was acquired with. */
  by: v.optional(v.number()),
};

/**
 * The result of `extend`: `ok: true` with the new `expiresAt` (UTC ms; never earlier than it
 * was); `ok: false` when the lease had expired, was released or is unknown: its slot may be
 * someone else's now, so acquire again.
 */
export const extendResult = v.union(
  v.object({ ok: v.literal(true), expiresAt: v.number() }),
  v.object({ ok: v.literal(false) }),
);
export type ExtendResult = Infer<typeof extendResult>;

/**
 * The arguments of `leases.getValue`: a concurrency limit's name, key and config; `expiries` to
 * also return every unexpired lease's expiry (for `useRateLimit`'s prediction).
 */
export const leaseValueArgs = {
  name: v.string(),
  key: v.optional(v.string()),
  config: concurrencyValidator,
  expiries: v.optional(v.boolean()),
};

/**
 * A concurrency limit's state at `ts` (UTC ms, the query's instant): `inFlight` unexpired leases
 * of `capacity`, and `earliestExpiry` (UTC ms), when the first of them frees itself (absent when
 * none is held).
 */
export const leaseValueResult = v.object({
  inFlight: v.number(),
  capacity: v.number(),
  ts: v.number(),
  earliestExpiry: v.optional(v.number()),
  /** With `expiries: true`: every unexpired lease's expiry (UTC ms), earliest first. */
  expiries: v.optional(v.array(v.number())),
});
export type LeaseValue = Infer<typeof leaseValueResult>;

/**
 * What `hookAPI`'s query returns for a concurrency limit: its state with every unexpired lease's
 * expiry (UTC ms, earliest first) and its config, from which `useRateLimit` predicts when a slot
 * is free.
 */
export const hookLeaseValue = v.object({
  inFlight: v.number(),
  capacity: v.number(),
  ts: v.number(),
  earliestExpiry: v.optional(v.number()),
  expiries: v.array(v.number()),
  config: concurrencyValidator,
});
export type HookLeaseValue = Infer<typeof hookLeaseValue>;
