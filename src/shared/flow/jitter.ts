// Jitter for retries and scheduled work: a bounded random delay added to a `retryAfter`, so
// callers told the same `retryAfter` don't all come back in the same instant. The randomness is an
// argument (defaulting to `Math.random` only at this edge), so tests pass a fixed draw.
import { invalid } from "../validation/validate.js";
import { math } from "../core/math.js";

/** DEFAULT_MAX_JITTER_MS is the most ms {@link withJitter} adds when not told otherwise: 1000 (one second). */
export const DEFAULT_MAX_JITTER_MS = 1000;

/** Options of {@link withJitter}. */
export type JitterOptions = {
  /**
   * The most ms added, a whole number (a fraction is rounded down); 0 adds nothing. Default
   * {@link DEFAULT_MAX_JITTER_MS}. Choose it near the time the limit takes to admit the callers
   * you expect back together, e.g. `period / rate` × their number: a spread much shorter than
   * one token's refill still brings them back to the same empty bucket.
   */
  maxJitterMs?: number;
  /** A draw in [0, 1), as `Math.random` returns (the default). Pass a fixed one in tests. */
  random?: () => number;
};

/**
 * withJitter returns how many ms to wait before retrying or running reserved work: `retryAfter`
 * (ms, rounded up to whole ms) plus a random delay drawn uniformly from the whole ms 0 to
 * `maxJitterMs` (both included; default {@link DEFAULT_MAX_JITTER_MS}). Use it for
 * `scheduler.runAfter` and client retries, so callers told the same `retryAfter` come back spread
 * out instead of together.
 *
 * Jitter only ever delays, and waiting longer than `retryAfter` is always safe. Nothing to wait
 * for (`retryAfter` undefined or 0, e.g. an `ok` result without a reservation) returns 0: jitter
 * spreads waits out but never creates one.
 *
 * ```ts
 * const wait = withJitter(status.retryAfter, { maxJitterMs: 2 * SECOND });
 * ```
 *
 * Throws an `InvalidRateLimit` `ConvexError` when `retryAfter` or `maxJitterMs` is negative or not
 * finite, or when `random` returns a number outside 0 to 1.
 */
export function withJitter(retryAfter: number | undefined, options?: JitterOptions): number {
  if (retryAfter === undefined || retryAfter === 0) return 0;
  if (!(Number.isFinite(retryAfter) && retryAfter > 0)) {
    throw invalid("retryAfter", retryAfter, "must be a finite number of ms ≥ 0");
  }
  const maxJitterMs = options?.maxJitterMs ?? DEFAULT_MAX_JITTER_MS;
  if (!(Number.isFinite(maxJitterMs) && maxJitterMs >= 0)) {
    throw invalid("maxJitterMs", maxJitterMs, "must be a finite number of ms ≥ 0");
  }
  const draw = (options?.random ?? Math.random)();
  if (!(draw >= 0 && draw <= 1)) throw invalid("random", draw, "must return a number from 0 to 1");
  const most = math.floor(maxJitterMs);
  // most + 1 equally likely whole ms, 0..most; a draw of exactly 1 (outside Math.random's range,
  // but accepted) counts as the top one rather than one past it.
  const jitter = math.min(math.floor(draw * (most + 1)), most);
  return math.ceil(retryAfter) + jitter;
}
