// Rate-limit administration: a daily clean-up of idle keys and a fold of metrics every minute
// (crons.ts runs both), listings of limit names and keys, and metrics, for an admin page. The
// component's functions are reachable only through the app, so these queries are the only way in,
// and each checks that the caller is an admin.
// #region adminImports
import { paginationOptsValidator, paginationResultValidator } from "convex/server";
import { ConvexError, v } from "convex/values";
import { keyStatusValidator, metricsResult } from "convex-rate-limiter";
import { internalMutation, query, type QueryCtx } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";
// #endregion adminImports

// #region adminAuth
/**
 * The signed-in emails allowed to see rate-limit state. A toy: a real app keeps roles in its own
 * tables, or in its auth provider's claims.
 */
export const ADMIN_EMAILS: readonly string[] = ["admin@example.com"];

/** Throws a `ConvexError` unless the caller is signed in with an admin email. */
async function requireAdmin(ctx: QueryCtx): Promise<void> {
  const identity = await ctx.auth.getUserIdentity();
  if (identity === null) throw new ConvexError("sign in to see rate limits");
  if (identity.email === undefined || !ADMIN_EMAILS.includes(identity.email)) {
    throw new ConvexError("only admins may see rate limits");
  }
}

/** The names of the rate limits in limits.ts (not the concurrency limit, which has no keys to list). */
type Limits = NonNullable<typeof rateLimiter.limits>;
type LimitName = { [K in keyof Limits]: Limits[K] extends { kind: "concurrency" } ? never : K }[keyof Limits];
function isLimitName(name: string): name is LimitName {
  const limits: Record<string, { kind: string }> | undefined = rateLimiter.limits;
  return limits !== undefined && Object.hasOwn(limits, name) && limits[name]?.kind !== "concurrency";
}
// #endregion adminAuth

// #region cleanupRateLimits
/**
 * cleanupRateLimits deletes the rate-limit state of keys that are idle (full again, nothing
 * owed): it changes no decision, and keeps storage to the keys in use. crons.ts runs it daily.
 */
export const cleanupRateLimits = internalMutation({
  args: {},
  returns: v.null(),
  handler: async (ctx) => {
    await rateLimiter.cleanup(ctx);
    return null;
  },
});
// #endregion cleanupRateLimits

// #region listRateLimitKeys
/**
 * listRateLimitKeys lists the keys of one of the app's limits for an admin page, a page at a
 * time (`usePaginatedQuery`), each with its tokens now, its capacity and the ms until it is full.
 */
export const listRateLimitKeys = query({
  args: { name: v.string(), paginationOpts: paginationOptsValidator },
  returns: paginationResultValidator(keyStatusValidator),
  handler: async (ctx, { name, paginationOpts }) => {
    await requireAdmin(ctx);
    if (!isLimitName(name)) throw new ConvexError(`no rate limit is named ${name}`);
    return await rateLimiter.listKeys(ctx, name, { paginationOpts });
  },
});
// #endregion listRateLimitKeys

/** listRateLimitNames lists the names of the limits that have state, for an admin page. */
export const listRateLimitNames = query({
  args: { paginationOpts: paginationOptsValidator },
  returns: paginationResultValidator(v.object({ name: v.string() })),
  handler: async (ctx, { paginationOpts }) => {
    await requireAdmin(ctx);
    return await rateLimiter.listNames(ctx, { paginationOpts });
  },
});

// #region rateLimitMetrics
/**
 * rateLimitMetrics returns what one of the app's limits decided each minute over [from, to) (ms):
 * requests and tokens admitted, reserved and refused, and the `topKeys` keys refused most. Only
 * limits with `metrics: true` (in limits.ts: `apiKeyRequests`, `llmTokens`) record anything.
 */
export const rateLimitMetrics = query({
  args: { name: v.string(), from: v.number(), to: v.number(), topKeys: v.optional(v.number()) },
  returns: metricsResult,
  handler: async (ctx, { name, from, to, topKeys }) => {
    await requireAdmin(ctx);
    if (!isLimitName(name)) throw new ConvexError(`no rate limit is named ${name}`);
    return await rateLimiter.metrics(ctx, name, { from, to, ...(topKeys === undefined ? {} : { topKeys }) });
  },
});
// #endregion rateLimitMetrics

// #region foldRateLimitMetrics
/**
 * foldRateLimitMetrics sums the metric events recorded since its last run into per-minute
 * summaries, and deletes summaries older than a week. crons.ts runs it every minute.
 */
export const foldRateLimitMetrics = internalMutation({
  args: {},
  returns: v.null(),
  handler: async (ctx) => {
    await rateLimiter.foldMetrics(ctx);
    return null;
  },
});
// #endregion foldRateLimitMetrics
