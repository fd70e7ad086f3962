// Telling the errors this package throws apart: a refused request (`throws: true`) and a malformed
// config or request. Both are `ConvexError`s whose data survives production redaction.
import type { InvalidRateLimitError, RateLimitError } from "../shared/shapes/validators.js";

/** Reads `error.data` as a plain object, or undefined; never throws (getters and Proxies may). */
function dataOf(error: unknown): Record<string, unknown> | undefined {
  try {
    if (typeof error !== "object" || error === null || !("data" in error)) return undefined;
    const data: unknown = error.data;
    if (typeof data !== "object" || data === null) return undefined;
    return { ...data };
  } catch {
    return undefined;
  }
}

/**
 * isRateLimitError tells whether `error` is the `ConvexError` thrown for a refused request with
 * `throws: true`, narrowing it so `error.data.retryAfter` (ms) can be read. Never throws.
 */
export function isRateLimitError(error: unknown): error is { data: RateLimitError } {
  const data = dataOf(error);
  return (
    data?.kind === "RateLimited" && typeof data.name === "string" && typeof data.retryAfter === "number"
  );
}

/**
 * isInvalidRateLimitError tells whether `error` is the `ConvexError` thrown for a malformed config
 * or request; `error.data.field` names the field at fault. Never throws.
 */
export function isInvalidRateLimitError(error: unknown): error is { data: InvalidRateLimitError } {
  const data = dataOf(error);
  return data?.kind === "InvalidRateLimit" && typeof data.field === "string";
}
