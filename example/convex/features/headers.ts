// HTTP header fields and 429s (README, "HTTP: headers and 429"): an endpoint limited per API key.
// #region headers
import { MINUTE, RateLimiter, rateLimitHeaders, tooManyRequests } from "convex-rate-limiter";
import { components } from "../_generated/api.js";
import { httpAction } from "../_generated/server.js";

const rateLimiter = new RateLimiter(components.rateLimiter, {
  apiRequests: { kind: "token bucket", rate: 60, period: MINUTE }, // per API key
});

/**
 * ping answers "pong", 60 times a minute per API key (the `X-API-Key` header), with the RateLimit
 * and RateLimit-Policy header fields; refused, a 429 with Retry-After. Route it in convex/http.ts:
 * `http.route({ path: "/ping", method: "GET", handler: ping })`.
 */
export const ping = httpAction(async (ctx, request) => {
  const key = request.headers.get("X-API-Key");
  if (key === null) return new Response("Missing X-API-Key", { status: 401 });
  const status = await rateLimiter.limit(ctx, "apiRequests", { key, details: true });
  if (!status.ok) return tooManyRequests("apiRequests", status, rateLimiter);
  return new Response("pong", { headers: rateLimitHeaders("apiRequests", status, rateLimiter) });
});
// #endregion headers
