// The public conveniences over the algebra: `calculateRateLimit` and `decideRateLimit`, pure
// functions of one row's state that the server, the React hook and the example's offline mode all
// decide with. Only they default `now` to `Date.now()`; the algebra itself takes time as an
// argument.
import { decideRow, delayUntil, evaluate, exactWait, paramsOf, phaseOf, stateOf, withValue, type State } from "./algebra.js";
import { minus } from "../core/split.js";
import { validateCount } from "../validation/validate.js";
import { checkConfig } from "../validation/validate-config.js";
import type { RateLimitConfig } from "../shapes/validators.js";

/**
 * The phase (ms) of a config's windows for the public conveniences: `config.start`'s; without it,
 * a fixed window's from the existing row's `ts` (a window start), else 0. Only fixed and
 * approximate sliding windows read it: a token bucket's `start` can only be null, an exact
 * sliding window counts no aligned windows, and `paramsOf` gives a calendar quota phase 0.
 */
function phaseFor(config: RateLimitConfig, existing: State | null): number {
  const anchor = config.start ?? (config.kind === "fixed window" ? existing?.ts : undefined) ?? 0;
  return phaseOf(anchor, config.period);
}

/**
 * What {@link calculateRateLimit} returns: `@convex-dev/rate-limiter`'s shape, plus, for an
 * approximate sliding window, `prev` (the previous window's count), and for an exact one, `log`
 * (its last window's takes), to store with `value` and `ts`.
 */
export type CalculatedRateLimit = {
  value: number;
  ts: number;
  retryAfter: number | undefined;
  windowStart: number | undefined;
  prev?: number;
  log?: ArrayBuffer;
};

/**
 * calculateRateLimit calculates what one row (a whole limit, or one shard's config as `getValue`
 * returns it) holds at `now` (ms, default `Date.now()`) after taking `count` tokens (default 0, a
 * peek): the `value` left, negative when `count` isn't there yet (then `retryAfter`, the least
 * whole ms after which it is), and the `ts` (and a sliding window's `prev`) to store. A fixed
 * window's phase is `config.start`, else the row's `ts`; a sliding window's is `config.start`,
 * else 0. With `reserve`, `value` may go into debt up to `maxReserved` and `retryAfter` is when it
 * is repaid; `decideRateLimit` gives the server's verdict directly. Throws `InvalidRateLimit` for a
 * malformed config (its shape checked as the component checks it: a field its kind doesn't have,
 * such as a token bucket's `calendar`, is named) or a count that could never fit.
 */
export function calculateRateLimit(
  existing: State | null,
  config: RateLimitConfig,
  now: number = Date.now(),
  count: number = 0,
  options: { reserve?: boolean } = {},
): CalculatedRateLimit {
  const reserve = options.reserve ?? false;
  checkConfig(config);
  validateCount(count, config, reserve);
  const p = paramsOf(config, phaseFor(config, existing));
  const cur = evaluate(existing, p, now);
  const value = minus(cur.value, count);
  // Without `reserve`: when `count` is there. With it: when the debt taking it leaves is repaid,
  // which is when the server runs reserved work (for a count within capacity, the same instant).
  // Not checked by exactWait: a calculation for display (the hook's), which past
  // Number.MAX_SAFE_INTEGER ms reports the wait to the float; `decideRateLimit`, the server's
  // verdict, refuses such a request as the server does.
  const retryAfter = !(value < 0)
    ? undefined
    : reserve
      ? delayUntil({ ...cur, value }, p, now, 0, undefined, count)
      : delayUntil(existing, p, now, count);
  return { ...stateOf(withValue(cur, p, value)), retryAfter, windowStart: p.kind === "fixed window" ? cur.ts : undefined };
}

/**
 * RateLimitDecision is the decision {@link decideRateLimit} returns: the server's answer
 * (`retryAfter` in ms) and the row (`value` tokens at `ts` ms, and for a sliding window `prev`,
 * its previous window's count, or an exact one's `log`) after it.
 */
export type RateLimitDecision =
  | { ok: true; retryAfter: number | undefined; value: number; ts: number; prev?: number; log?: ArrayBuffer }
  | { ok: false; retryAfter: number; value: number; ts: number; prev?: number; log?: ArrayBuffer };

/**
 * decideRateLimit decides a whole request against one row exactly as the server decides an
 * unsharded limit (or one shard, given that shard's config as `getValue` returns it): `count`
 * tokens (default 1; 0 peeks, ok while nothing is owed) at `now` (ms, default `Date.now()`), with
 * `reserve` (default false) letting the row go into debt down to `-maxReserved`.
 *
 * Returns `ok`, `retryAfter` (whole ms: with `reserve`, when the reserved work may run; when
 * refused, the least wait after which the same request succeeds with no other traffic), and the
 * row's `value` and `ts` afterwards (with a sliding window's `prev`, so it can be fed back;
 * unchanged when refused or peeking). Use it to predict or replay decisions in the browser or in
 * tests; `calculateRateLimit` answers the simpler "what does the row hold after taking `count`".
 * The phase of a fixed or sliding window comes as in `calculateRateLimit`.
 * Throws an `InvalidRateLimit` `ConvexError` for a malformed config (shape and numbers, as the
 * component checks them) or a count that could never succeed (or whose wait runs past Number.MAX_SAFE_INTEGER ms), as the server does.
 */
export function decideRateLimit(
  existing: State | null,
  config: RateLimitConfig,
  request: { now?: number; count?: number; reserve?: boolean } = {},
): RateLimitDecision {
  const { now = Date.now(), count = 1, reserve = false } = request;
  checkConfig(config);
  const whole = { ...config, shards: 1 };
  validateCount(count, whole, reserve);
  const p = paramsOf(whole, phaseFor(config, existing));
  const d = decideRow(existing, p, now, count, reserve);
  if (d.retryAfter !== undefined) exactWait(d.retryAfter, now, count, p);
  const after = d.ok && d.next ? d.next : evaluate(existing, p, now);
  const row = stateOf(after);
  return d.ok ? { ok: true, retryAfter: d.retryAfter, ...row } : { ok: false, retryAfter: d.retryAfter, ...row };
}
