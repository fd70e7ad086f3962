// The concurrency-limit methods of RateLimiter (`kind: "concurrency"`): acquire a slot as a lease,
// release it, extend it. RateLimiter extends this class.
import { ConvexError } from "convex/values";
import type { AcquireResult, ExtendResult, LimitConfig } from "../shared/shapes/concurrency-validators.js";
import { validateOptionTypes } from "../shared/validation/validate-config.js";
import type { ConcurrencyName, ConcurrencyNamesOf } from "./names.js";
import { OverrideMethods } from "./overrides.js";
import { acquireRequest, concurrencyConfigFor, generated } from "./resolve.js";
import type { RunMutationCtx } from "./types.js";

/** LeaseMethods are `RateLimiter`'s methods for concurrency limits: at most `capacity` in flight per key. */
export class LeaseMethods<Limits extends Record<string, LimitConfig>> extends OverrideMethods<Limits> {
  /**
   * acquire takes a slot of a concurrency limit (`kind: "concurrency"`) for `key`: at most
   * `capacity` leases are in flight per key at once. Call it from a mutation before starting the
   * work, and {@link release} the lease when the work ends, in a `finally` or from workpool's
   * `onComplete`; a holder that crashes frees its slot by itself when its lease expires (`lease`
   * ms after acquiring, or after its last {@link extend}), with no job. Options: `key` (whose
   * slots; default the global ones), `throws` (throw a `RateLimited` `ConvexError`, as `limit`
   * does, instead of returning `ok: false`; default false). When the caller's mutation throws
   * later, the lease is rolled back with it.
   *
   * @returns `{ ok: true, lease, expiresAt }`: `lease` is an opaque handle (keep it, e.g. pass it
   * to the action doing the work) and `expiresAt` (UTC ms) when the slot frees itself. `{ ok:
   * false, retryAfter }`: every slot is held; `retryAfter` is the whole ms until enough of the
   * leases held now expire for a slot to be free (the earliest one's expiry), so the same acquire
   * then succeeds if nothing else acquired meanwhile. A release may free one sooner.
   */
  async acquire<Name extends string = ConcurrencyNamesOf<Limits>>(
    ctx: RunMutationCtx,
    name: ConcurrencyName<Limits, Name>,
    options?: { key?: string; throws?: boolean },
  ): Promise<AcquireResult> {
    const args = acquireRequest(name, concurrencyConfigFor(this.limits, name, options), options, ["key", "throws"]);
    const result = await ctx.runMutation(generated(this.component.leases).acquire, { ...args, ...(args.throws ? { raiseInCaller: true } : {}) });
    // The component returns the error instead of throwing when that keeps the refusal's metric event.
    if (!result.ok && result.error) throw new ConvexError(result.error);
    return result.ok ? result : { ok: false, retryAfter: result.retryAfter };
  }

  /**
   * release gives a lease's slot back at once. Idempotent: releasing a lease twice, one that
   * expired (its slot freed itself already) or an unknown handle is harmless.
   *
   * @returns `{ released: true }` when this call freed a slot; false when there was nothing to free.
   */
  async release(ctx: RunMutationCtx, lease: string): Promise<{ released: boolean }> {
    return await ctx.runMutation(generated(this.component.leases).release, { lease });
  }

  /**
   * extend keeps a lease for long work: its expiry moves to `by` ms from now (default: the
   * `lease` it was acquired with), never earlier than it was. Call it from the work's action now
   * and then (e.g. every `lease / 3` ms), so the lease outlives the work but not a crash.
   *
   * @returns `{ ok: true, expiresAt }` (UTC ms); `{ ok: false }` when the lease had already
   * expired, was released or is unknown: its slot may be someone else's now, so stop or acquire
   * again.
   */
  async extend(ctx: RunMutationCtx, lease: string, options: { by?: number } = {}): Promise<ExtendResult> {
    validateOptionTypes(options);
    return await ctx.runMutation(generated(this.component.leases).extend, { lease, ...(options.by === undefined ? {} : { by: options.by }) });
  }

}
