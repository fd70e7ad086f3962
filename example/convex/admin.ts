// Rate-limit administration: a daily clean-up of idle keys and a fold of metrics every minute
// (crons.ts runs both), listings of limit names and keys, and metrics, for an admin page; and
// limits as data: overrides and blocks of a limit for one key, one network or one tier, and
// users' plans. The
// component's functions are reachable only through the app, so these functions are the only way
// in, and each checks that the caller is an admin.
// #region adminImports
import { paginationOptsValidator, paginationResultValidator } from "convex/server";
import { ConvexError, v } from "convex/values";
import {
  DEFAULT_MUTATION_MS,
  getValueReturns,
  keyStatusValidator,
  metricsResult,
  overrideEntryValidator,
  overrideRecord,
  overrideTarget,
  type OverrideConfig,
  type OverrideTarget,
  type RateLimitConfig,
} from "convex-rate-limiter";
import { internalMutation, mutation, query, type QueryCtx } from "./_generated/server.js";
import { rateLimiter } from "./limits.js";
import { planValidator } from "./plans.js";
// #endregion adminImports

// #region adminAuth
/**
 * The signed-in emails allowed to see and change rate-limit state. A toy: a real app keeps roles
 * in its own tables, or in its auth provider's claims.
 */
export const ADMIN_EMAILS: readonly string[] = ["admin@example.com"];

/** Throws a `ConvexError` unless the caller is signed in with an admin email. */
async function requireAdmin(ctx: QueryCtx): Promise<void> {
  const identity = await ctx.auth.getUserIdentity();
  if (identity === null) throw new ConvexError("sign in to see or change rate limits");
  if (identity.email === undefined || !ADMIN_EMAILS.includes(identity.email)) {
    throw new ConvexError("only admins may see or change rate limits");
  }
}

/** The names of the rate limits in limits.ts (not the concurrency limit, which has no keys to list). */
type Limits = NonNullable<typeof rateLimiter.limits>;
type LimitName = { [K in keyof Limits]: Limits[K] extends { kind: "concurrency" } ? never : K }[keyof Limits];
function isLimitName(name: string): name is LimitName {
  const limits: Record<string, { kind: string }> | undefined = rateLimiter.limits;
  return limits !== undefined && Object.hasOwn(limits, name) && limits[name]?.kind !== "concurrency";
}

/**
 * Throws a `ConvexError` unless the caller is an admin ({@link requireAdmin}) and `name` names one
 * of those limits; returns the name, typed as one of them.
 */
async function adminLimit(ctx: QueryCtx, name: string): Promise<LimitName> {
  await requireAdmin(ctx);
  if (!isLimitName(name)) throw new ConvexError(`no rate limit is named ${name}`);
  return name;
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
    const limit = await adminLimit(ctx, name);
    return await rateLimiter.listKeys(ctx, limit, { paginationOpts });
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
 * limits with `metrics: true` (in limits.ts: `apiKeyRequests`, `llmTokens`) record anything. A
 * transactional limit's `heat` says whether its busiest minute ran hotter than the sizing rule
 * allows for mutations of `mutationMs` ms (default 25: this app's mutations are short).
 */
export const rateLimitMetrics = query({
  args: { name: v.string(), from: v.number(), to: v.number(), topKeys: v.optional(v.number()), mutationMs: v.optional(v.number()) },
  returns: metricsResult,
  handler: async (ctx, { name, from, to, topKeys, mutationMs }) => {
    const limit = await adminLimit(ctx, name);
    return await rateLimiter.metrics(ctx, limit, { from, to, ...(topKeys === undefined ? {} : { topKeys }), mutationMs: mutationMs ?? DEFAULT_MUTATION_MS });
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

// #region adminOverrides

/**
 * listRateLimitOverrides lists the overrides and blocks of one of the app's limits, a page at a
 * time (`usePaginatedQuery`): keys' first, then networks', then tiers'; `scope` lists only one.
 */
export const listRateLimitOverrides = query({
  args: {
    name: v.string(),
    scope: v.optional(v.union(v.literal("key"), v.literal("network"), v.literal("tier"))),
    paginationOpts: paginationOptsValidator,
  },
  returns: paginationResultValidator(overrideRecord),
  handler: async (ctx, { name, scope, paginationOpts }) => {
    const limit = await adminLimit(ctx, name);
    return await rateLimiter.listOverrides(ctx, limit, { paginationOpts, ...(scope === undefined ? {} : { scope }) });
  },
});

/**
 * setRateLimitOverride puts an override in force for one key, one network (CIDR, on a limit with
 * `networks: true`: `signInsPerAddress`) or one tier of one of the app's limits: other terms
 * (`{ config }`), a block until an instant (`{ blockedUntil }`, UTC ms; a deny-list entry) or,
 * for a network, `{ allow: true }` (an allow-list entry). It grants no tokens: the key's next
 * request carries its state over. Bad input is an `InvalidRateLimit` `ConvexError` naming the
 * field (`override.config.rate`, `target.network`, say), and writes nothing.
 */
export const setRateLimitOverride = mutation({
  args: { name: v.string(), target: overrideTarget, override: overrideEntryValidator, note: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, { name, target, override, note }) => {
    const limit = await adminLimit(ctx, name);
    await rateLimiter.setOverride(ctx, limit, target, override, note === undefined ? {} : { note });
    return null;
  },
});

/** removeRateLimitOverride takes an override or block away; returns whether there was one. */
export const removeRateLimitOverride = mutation({
  args: { name: v.string(), target: overrideTarget },
  returns: v.boolean(),
  handler: async (ctx, { name, target }) => {
    const limit = await adminLimit(ctx, name);
    return await rateLimiter.removeOverride(ctx, limit, target);
  },
});
// #endregion adminOverrides

/**
 * rateLimitValue reads one key of one of the app's limits (pass the key's `tier`, if it has one,
 * and the `ip` its requests come from, for a limit with network entries): its tokens now, the
 * config in force, which override decided (`by`: "key", "network" or "tier"; absent for the named
 * config; `network`, the entry that applied) and `blockedUntil` while it is blocked or locked out.
 */
export const rateLimitValue = query({
  args: { name: v.string(), key: v.optional(v.string()), tier: v.optional(v.string()), ip: v.optional(v.string()) },
  returns: getValueReturns,
  handler: async (ctx, { name, key, tier, ip }) => {
    const limit = await adminLimit(ctx, name);
    return await rateLimiter.getValue(ctx, limit, { key, tier, ip });
  },
});

// #region plans
/** How many times the named `llmRequests` allowance (limits.ts) the "pro" plan gets. */
export const PRO_MULTIPLIER = 10;

/**
 * proConfig returns the "pro" tier's terms for `llmRequests`: the named config's, with
 * {@link PRO_MULTIPLIER} times its rate and capacity. An override's config replaces the named
 * one's terms whole, so the others (`maxReserved`: none) are copied; its shards, mode, dry run and
 * metrics are always the named config's.
 */
export function proConfig(): OverrideConfig {
  const named: RateLimitConfig | undefined = rateLimiter.limits?.llmRequests;
  if (named?.kind !== "token bucket") throw new Error("limits.ts: llmRequests is expected to be a token bucket");
  const { shards: _shards, applyUpdates: _mode, dryRun: _dryRun, metrics: _metrics, ...terms } = named;
  return { ...terms, rate: named.rate * PRO_MULTIPLIER, capacity: (named.capacity ?? named.rate) * PRO_MULTIPLIER };
}

// #region seedPlanOverrides
/**
 * seedPlanOverrides puts the plans' terms in force: the "pro" tier of `llmRequests` gets
 * {@link proConfig}. Run it once after deploying (`npx convex run admin:seedPlanOverrides`), and
 * again after changing `llmRequests`; `setRateLimitOverride` changes it from an admin page.
 */
export const seedPlanOverrides = internalMutation({
  args: {},
  returns: v.null(),
  handler: async (ctx) => {
    await rateLimiter.setOverride(ctx, "llmRequests", { tier: "pro" }, { config: proConfig() }, { note: `pro plan: ${PRO_MULTIPLIER}x` });
    return null;
  },
});
// #endregion seedPlanOverrides

/**
 * setPlan puts `user` (a `tokenIdentifier`) on `plan`. The user's next LLM request names the tier
 * ("pro", or none for free), and is decided under it from the tokens the user holds: a change of
 * plan never grants tokens, and a downgrade keeps no more than the free capacity.
 */
export const setPlan = mutation({
  args: { user: v.string(), plan: planValidator },
  returns: v.null(),
  handler: async (ctx, { user, plan }) => {
    await requireAdmin(ctx);
    const row = await ctx.db
      .query("plans")
      .withIndex("user", (q) => q.eq("user", user))
      .unique();
    if (row === null) await ctx.db.insert("plans", { user, plan });
    else await ctx.db.patch(row._id, { plan });
    return null;
  },
});
// #endregion plans
