// The data of the errors that cross the component boundary: `RateLimited` (a refusal thrown) and
// `InvalidRateLimit` (bad input). Re-exported by validators.ts.
import { v, type Infer } from "convex/values";

/** The data of the `ConvexError` thrown for a refused request when `throws: true`. */
export const rateLimitErrorValidator = v.object({
  kind: v.literal("RateLimited"),
  /** The name of the limit that refused. */
  name: v.string(),
  /** Whole ms after which the same request succeeds if nothing else takes tokens meanwhile. */
  retryAfter: v.number(),
});

/**
 * The data of the `RateLimited` `ConvexError` that `limitAll`/`checkAll` throw with `throws`: a
 * `RateLimitError` (`name` is the first limit that refused, `retryAfter` when all succeed
 * together), plus `names`, every limit that refused (or would make reserved work wait).
 */
export const rateLimitAllErrorValidator = v.object({
  ...rateLimitErrorValidator.fields,
  names: v.array(v.string()),
});

export type RateLimitError = Infer<typeof rateLimitErrorValidator>;
export type RateLimitAllError = Infer<typeof rateLimitAllErrorValidator>;

/** The data of the `ConvexError` thrown for a malformed config or request. */
export const invalidRateLimitErrorValidator = v.object({
  kind: v.literal("InvalidRateLimit"),
  /** The field at fault, e.g. `"config.rate"` or `"count"`. */
  field: v.string(),
  /** The offending value, as a string so NaN and ±Infinity survive serialization. */
  value: v.string(),
  /** `field = value: what is wrong`, readable as it stands. */
  message: v.string(),
});
export type InvalidRateLimitError = Infer<typeof invalidRateLimitErrorValidator>;
