// The app's HTTP API: POST /api/echo, limited per API key (`apiKeyRequests` in limits.ts). Every
// response carries the rate-limit header fields (RateLimit-Policy, RateLimit); a refused request
// gets a 429 with Retry-After and a problem-details body.
// #region httpLimit
import { httpRouter } from "convex/server";
import { rateLimitHeaders, tooManyRequests } from "convex-rate-limiter";
import { httpAction } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";

/** API_KEY_HEADER names the request header that carries the caller's API key. */
export const API_KEY_HEADER = "X-API-Key";

/**
 * echo answers `{ echo: body }` with the request's body, 5 times a minute per API key. Without a
 * key it answers 401; when the key's limit is spent, 429.
 */
export const echo = httpAction(async (ctx, request) => {
  // A real app would look the key up and limit by the account it belongs to.
  const apiKey = request.headers.get(API_KEY_HEADER);
  if (apiKey === null) return new Response(`Missing ${API_KEY_HEADER}`, { status: 401 });
  const status = await rateLimiter.limit(ctx, "apiKeyRequests", { key: apiKey, details: true });
  // A dry run never refuses: it logs what it would have refused (see limits.ts).
  await rateLimiter.limit(ctx, "apiKeyBurst", { key: apiKey });
  // 429 Too Many Requests, with Retry-After, RateLimit and RateLimit-Policy.
  if (!status.ok) return tooManyRequests("apiKeyRequests", status, rateLimiter);
  const headers = { ...rateLimitHeaders("apiKeyRequests", status, rateLimiter), "Content-Type": "application/json" };
  return new Response(JSON.stringify({ echo: await request.text() }), { status: 200, headers });
});

const http = httpRouter();
http.route({ path: "/api/echo", method: "POST", handler: echo });
export default http;
// #endregion httpLimit
