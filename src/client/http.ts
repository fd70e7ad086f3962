// HTTP for rate limits, for httpActions: the `RateLimit-Policy` and `RateLimit` header fields of
// the IETF draft "RateLimit header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers-11),
// `Retry-After`, and a 429 response with a problem-details body (RFC 9457), all built from a
// `limit` or `check` result with `details: true`. Pure: no clock, no I/O.
import { invalid } from "../shared/validation/validate.js";
import { windowConfig } from "../shared/validation/validate-config.js";
import { periodIndex, periodStart } from "../shared/core/calendar.js";
import type { RateLimitConfig, RateLimitReturnsWithDetails } from "../shared/shapes/validators.js";
import type { CalendarConfig } from "../shared/shapes/calendar-validators.js";
import type { LeaseValue } from "../shared/shapes/concurrency-validators.js";

/**
 * Where the HTTP helpers find limit `Name`'s config: the config itself (e.g. the inline `config`
 * of a call), or the `RateLimiter` that names the limit, whose `limits[Name]` is read. With a
 * `RateLimiter`, a name it doesn't define fails to compile.
 */
export type RateLimitConfigSource<Name extends string> =
  | RateLimitConfig
  | CalendarConfig
  | { limits?: { [K in Name]: RateLimitConfig | CalendarConfig } | undefined };

/** A `limit` or `check` result with `details: true` that was refused (`ok: false`). */
export type RefusedWithDetails = Extract<RateLimitReturnsWithDetails, { ok: false }>;

/**
 * The header fields {@link rateLimitHeaders} returns, for a `Response`'s `headers` (or a
 * `Headers`): every value a string of whole numbers as the draft requires.
 */
export type RateLimitHeaders = {
  /** `"name";q=…;w=…`: the limit's quota `q` (tokens) per window `w` (seconds). Constant per config. */
  "RateLimit-Policy": string;
  /** `"name";r=…;t=…`: `r` tokens remaining now, `t` seconds until the limit is full again. */
  RateLimit: string;
  /** Whole seconds to wait before retrying, rounded up. Only when the request was refused. */
  "Retry-After"?: string;
};

/** Options of {@link tooManyRequests}. */
export type TooManyRequestsOptions = {
  /**
   * More headers for the response (e.g. CORS). They are applied last, so one named like a
   * rate-limit header or `Content-Type` replaces it.
   */
  headers?: HeadersInit;
  /** The problem body's `detail`, for people. Default: names the limit and the seconds to wait. */
  detail?: string;
};

/**
 * The problem type of the draft's "quota exceeded" problem (its section 5.1), used as the `type`
 * of {@link tooManyRequests}'s body.
 */
export const QUOTA_EXCEEDED_PROBLEM_TYPE = "https://iana.org/assignments/http-problem-types#quota-exceeded";

/**
 * rateLimitHeaders returns the HTTP header fields that tell a client where it stands with limit
 * `name`, from the result of `limit` or `check` called with `details: true`:
 *
 * - `RateLimit-Policy: "name";q=Q;w=W`: `q` is the limit's capacity, floored to whole tokens (its
 *   burst); `w` is the seconds it takes to refill that capacity from empty, rounded up: `period`
 *   when `capacity` is the default (`rate`); for a token bucket `capacity × period / rate`
 *   (`q=3;w=18` for 10 a minute in bursts of 3); for a fixed window, whole windows. `w` is left out
 *   when `capacity` is 0. It depends only on the config, so it is the same on every response,
 *   except a calendar quota's: its `q` is the period's allowance and its `w` the current period's
 *   length (from its start to `resetsAt`), which varies: a day in a zone with daylight saving is
 *   23, 24 or 25 hours, a month 28 to 31 days.
 * - `RateLimit: "name";r=R;t=T`: `r` is the tokens remaining across the limit after this request,
 *   floored, and 0 while reserved ahead (a debt); `t` is the seconds until the limit is full again,
 *   rounded up (0 when full; a calendar quota's runs to `resetsAt` once anything was taken in the
 *   period). For a sharded limit read in part (`details.exact` false), both are estimates.
 * - `Retry-After: S` when refused (`ok: false`): `retryAfter` in whole seconds, rounded up, so a
 *   client that waits that long never comes back early (1 ms and 1000 ms give 1; 1001 ms gives 2).
 *
 * `config` is the limit's config or the `RateLimiter` that names it; when an override decided, the
 * config in force, which the result's `details` carries, is reported instead. Use the headers on every
 * response of a limited route, allowed or not; {@link tooManyRequests} adds them to its 429 itself.
 * Throws an `InvalidRateLimit` `ConvexError` for a name that isn't printable ASCII (the draft's
 * policy names are quoted strings) or a `RateLimiter` without the limit.
 */
export function rateLimitHeaders<Name extends string>(
  name: Name,
  result: RateLimitReturnsWithDetails,
  config: RateLimitConfigSource<Name>,
): RateLimitHeaders {
  // Under an override, the config in force, which the result carries.
  const resolved = result.details.config ?? windowConfig(resolveConfig(name, config));
  const policy = sfString(name);
  const quota = Math.floor(resolved.capacity ?? resolved.rate);
  const window = periodSeconds(resolved, result) ?? windowSeconds(resolved);
  const remaining = Math.max(0, Math.floor(result.details.remaining));
  const reset = Math.max(0, Math.ceil(result.details.resetAfter / 1000));
  const headers: RateLimitHeaders = {
    "RateLimit-Policy": window === undefined ? `${policy};q=${quota}` : `${policy};q=${quota};w=${window}`,
    RateLimit: `${policy};r=${remaining};t=${reset}`,
  };
  if (!result.ok) headers["Retry-After"] = String(retryAfterSeconds(result.retryAfter));
  return headers;
}

/**
 * tooManyRequests returns the `429 Too Many Requests` response for a request that limit `name`
 * refused: the headers of {@link rateLimitHeaders} (with `Retry-After`), and a problem-details body
 * (RFC 9457, `Content-Type: application/problem+json`):
 *
 * ```json
 * { "type": "https://iana.org/assignments/http-problem-types#quota-exceeded",
 *   "title": "Request cannot be satisfied as assigned quota has been exceeded",
 *   "status": 429, "detail": "Rate limit \"name\" exceeded: retry after 2 s.",
 *   "retryAfter": 1500, "violated-policies": ["name"] }
 * ```
 *
 * `retryAfter` in the body is in ms, as everywhere in this package (`Retry-After` in seconds is
 * rounded up; a client that can wait in ms need not wait that long). `result` must be refused
 * (`ok: false`, narrowed by `if (!status.ok)`); `config` is the limit's config or the
 * `RateLimiter` that names it. Return it from an httpAction as it is.
 */
export function tooManyRequests<Name extends string>(
  name: Name,
  result: RefusedWithDetails,
  config: RateLimitConfigSource<Name>,
  options?: TooManyRequestsOptions,
): Response {
  const headers = new Headers({ ...rateLimitHeaders(name, result, config) });
  headers.set("Content-Type", "application/problem+json");
  new Headers(options?.headers).forEach((value, key) => headers.set(key, value));
  const seconds = retryAfterSeconds(result.retryAfter);
  const body = {
    type: QUOTA_EXCEEDED_PROBLEM_TYPE,
    title: "Request cannot be satisfied as assigned quota has been exceeded",
    status: 429,
    detail: options?.detail ?? `Rate limit ${JSON.stringify(name)} exceeded: retry after ${seconds} s.`,
    retryAfter: result.retryAfter,
    "violated-policies": [name],
  };
  return new Response(JSON.stringify(body), { status: 429, statusText: "Too Many Requests", headers });
}

/** Whole seconds to wait for `retryAfter` ms, rounded up so a client never retries early. */
/**
 * concurrencyHeaders returns the HTTP header fields for concurrency limit `name`, from its
 * `getValue` (read after the `acquire`) and, when the acquire was refused, its result:
 *
 * - `RateLimit-Policy: "name";q=C;qu="concurrent-requests"`: `q` is the limit's `capacity`, in
 *   the draft's quota unit for requests in flight; no window, since a slot is held, not spent.
 * - `RateLimit: "name";r=R;t=T`: `r` is the free slots now; `t` is 0 while one is free, else the
 *   seconds until the earliest lease expires, rounded up (a release may free one sooner).
 * - `Retry-After: S` when refused: `retryAfter` in whole seconds, rounded up.
 */
export function concurrencyHeaders(name: string, value: LeaseValue, refused?: { retryAfter: number }): RateLimitHeaders {
  const policy = sfString(name);
  const free = Math.max(0, value.capacity - value.inFlight);
  const t = free > 0 || value.earliestExpiry === undefined ? 0 : Math.max(0, Math.ceil((value.earliestExpiry - value.ts) / 1000));
  return {
    "RateLimit-Policy": `${policy};q=${value.capacity};qu="concurrent-requests"`,
    RateLimit: `${policy};r=${free};t=${t}`,
    ...(refused ? { "Retry-After": String(retryAfterSeconds(refused.retryAfter)) } : {}),
  };
}

function retryAfterSeconds(retryAfter: number): number {
  return Math.max(0, Math.ceil(retryAfter / 1000));
}

/** The config `source` gives for `name`: itself, or the limiter's `limits[name]`. */
function resolveConfig(name: string, source: RateLimitConfigSource<string>): RateLimitConfig | CalendarConfig {
  if ("kind" in source) return source;
  const config: RateLimitConfig | CalendarConfig | undefined = source.limits?.[name];
  // Reachable only by bypassing the types (e.g. from JavaScript).
  if (config === undefined) throw invalid("name", name, "no such limit in this RateLimiter; pass its config");
  return config;
}

/**
 * A calendar quota's `w`: the length of the period the result stands in (from its start to the
 * result's `resetsAt`), in seconds rounded up; undefined for any other limit, or a result without
 * `resetsAt` (then the period's nominal length stands in: a day, a week, 30 days).
 */
function periodSeconds(config: RateLimitConfig, result: RateLimitReturnsWithDetails): number | undefined {
  const resetsAt = (result as { resetsAt?: unknown }).resetsAt;
  if (config.kind !== "fixed window" || config.calendar === undefined || typeof resetsAt !== "number") return undefined;
  const start = periodStart(periodIndex(resetsAt - 1, config.calendar), config.calendar);
  return Math.ceil((resetsAt - start) / 1000);
}

/**
 * The seconds a limit takes to refill its capacity from empty, rounded up: the draft's `w`, so
 * that `q` per `w` is both the burst and the sustained rate. Undefined for capacity 0, since `w`
 * must be > 0.
 */
function windowSeconds(config: RateLimitConfig): number | undefined {
  const capacity = config.capacity ?? config.rate;
  let ms: number;
  switch (config.kind) {
    case "token bucket":
      // Multiply first: 3 × 60 000 / 10 is exactly 18 000, where 3 / 10 × 60 000 may not be.
      ms = (capacity * config.period) / config.rate;
      break;
    case "fixed window":
      // Tokens arrive `rate` at a time, at window boundaries.
      ms = Math.ceil(capacity / config.rate) * config.period;
      break;
    case "sliding window":
      // `rate` in any `period`: exactly the draft's quota.
      ms = config.period;
      break;
    default: {
      const never: never = config;
      throw new Error(`unknown kind in ${JSON.stringify(never)}`);
    }
  }
  const seconds = Math.ceil(ms / 1000);
  return seconds > 0 ? seconds : undefined;
}

/**
 * `name` as a Structured Field String (RFC 9651): printable ASCII, in double quotes, with `"` and
 * `\` escaped.
 */
function sfString(name: string): string {
  if (!/^[\x20-\x7e]*$/.test(name)) {
    throw invalid("name", name, "must be printable ASCII to name an HTTP rate-limit policy");
  }
  return `"${name.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
