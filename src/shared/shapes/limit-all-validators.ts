// The shapes of `limitAll` and `checkAll` calls: their requests, arguments and results.
import { v, type Infer } from "convex/values";
import { addFieldsToValidator } from "convex-helpers/validators";
import { configArgValidator, rateLimitAllErrorValidator, rateLimitResult } from "./validators.js";

/** One limit of a `limitAll` or `checkAll` call. */
export const limitAllItem = v.object({
  /** The name of the limit. */
  name: v.string(),
  /** Which bucket of the limit; omit it for the global one. */
  key: v.optional(v.string()),
  /** Tokens to take from this limit. Default 1; 0 peeks. */
  count: v.optional(v.number()),
  /** The tier the key belongs to, for its overrides: see `rateLimitArgs.tier`. Default: none. */
  tier: v.optional(v.string()),
  config: configArgValidator,
});

/** The arguments of `lib.limitAll` and `lib.checkAll`. */
export const limitAllArgs = {
  /** The limits to take from, all or none. The same name and key twice is one request, counts summed. */
  requests: v.array(limitAllItem),
  /** Reserve in every limit (see `rateLimitArgs.reserve`). Default false. */
  reserve: v.optional(v.boolean()),
  /** Throw `RateLimited` naming every limit that refused (or would make reserved work wait). Default false. */
  throws: v.optional(v.boolean()),
  /** Return each limit's `details` in `results`. Default false. */
  details: v.optional(v.boolean()),
  /** With `throws`: the caller throws the returned `error` itself (see `rateLimitArgs.raiseInCaller`). */
  raiseInCaller: v.optional(v.boolean()),
  /** The address every limit with `networks: true` matches against its network entries (see `rateLimitArgs.ip`). */
  ip: v.optional(v.string()),
};

/**
 * The result of `limitAll` and `checkAll`: `ok` when every limit admits (and then all were taken
 * from); `retryAfter` is when they all could succeed together with no other traffic (refused), or
 * when every reservation is repaid (reserved); `results` holds each limit's own answer, in order.
 */
export const limitAllResult = v.union(
  v.object({ ok: v.literal(true), retryAfter: v.optional(v.number()), results: v.array(rateLimitResult) }),
  v.object({ ok: v.literal(false), retryAfter: v.number(), results: v.array(rateLimitResult) }),
);
export type LimitAllItem = Infer<typeof limitAllItem>;
const limitAllArgsObject = v.object(limitAllArgs);
export type LimitAllArgs = Infer<typeof limitAllArgsObject>;
export type LimitAllResult = Infer<typeof limitAllResult>;

/** What `lib.limitAll` returns: its result and, as for {@link rateLimitCallResult}, an error to throw. */
export const limitAllCallResult = addFieldsToValidator(limitAllResult, { error: v.optional(rateLimitAllErrorValidator) });
export type LimitAllCallResult = Infer<typeof limitAllCallResult>;
