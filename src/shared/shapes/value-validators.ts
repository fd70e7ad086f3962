// The shapes `getValue` takes and returns (and which config decided a request), as Convex
// validators; the types come from them. Split from validators.ts, which they build on.
import { v, type Infer } from "convex/values";
import { literals } from "convex-helpers/validators";
import { heatValidator } from "./heat-validators.js";
import { configArgValidator, configValidator } from "./validators.js";

/** The arguments of `lib.getValue`. */
export const getValueArgs = {
  /** The name of the limit. Must be non-empty. */
  name: v.string(),
  /** Which bucket of the limit; omit it for the global one. */
  key: v.optional(v.string()),
  /** How many shard rows to read (a sharded limit). Defaults to 1; at most `shards` are read. */
  sampleShards: v.optional(v.number()),
  /**
   * Also return `total`, the whole limit's tokens. Default false: the result has exactly the
   * shape `@convex-dev/rate-limiter` returns.
   */
  details: v.optional(v.boolean()),
  /** The tier the key belongs to, for its overrides: see `rateLimitArgs.tier`. Default: none. */
  tier: v.optional(v.string()),
  /** The address matched against network entries: see `rateLimitArgs.ip`. Default: none. */
  ip: v.optional(v.string()),
  /**
   * With `details`: the time (ms, > 0) the mutations that take from this limit run, from its read
   * to their commit, for the `heat` report's rule. Default 25 ms (`DEFAULT_MUTATION_MS`).
   */
  mutationMs: v.optional(v.number()),
  /**
   * Also return `runAt`: when work of one token queued now (`runWhenAllowed`) would run. Default
   * false. An `InvalidRateLimit` error for a limit that can't wait (see `validateWaitConfig`).
   */
  wait: v.optional(v.boolean()),
  config: configArgValidator,
};

/**
 * Which config decided a request: the named config (`"config"`), or an override of the key or of
 * the request's tier (see `resolveOverride`). `getValue` reports it when an override decided, and
 * metric events record it.
 */
export const decidedByValidator = literals("config", "key", "network", "tier");
export type DecidedBy = Infer<typeof decidedByValidator>;

/**
 * The result of `getValue`, exactly as `@convex-dev/rate-limiter` returns it: one shard's `value`
 * at `ts`, and that shard's share of the config (`shards: 1`, `capacity` and, for a fixed window,
 * `start` filled in), so that `calculateRateLimit(value, config, t)` is exactly what that shard
 * would answer at `t`. For an unsharded limit the shard is 0 and `config` is the whole limit's.
 */
export const getValueReturns = v.object({
  value: v.number(),
  ts: v.number(),
  shard: v.number(),
  config: configValidator,
  /** A sliding window's previous-window count (see `State`); absent for the other kinds. */
  prev: v.optional(v.number()),
  /** An exact sliding window's log of what the shard took in its last window (see `State`). */
  log: v.optional(v.bytes()),
  /**
   * Set when an override decided: `"key"`, `"network"` or `"tier"`; `config` is then the
   * override's (absent: the named config is in force).
   */
  by: v.optional(decidedByValidator),
  /** A calendar quota's only: the instant (UTC ms) the shard's period ends (see `calendarValidator`). */
  resetsAt: v.optional(v.number()),
  /**
   * Set when a network entry applied (`by: "network"`, or `blockedBy: "network"`): the entry's
   * network, canonical CIDR, the longest prefix holding the address.
   */
  network: v.optional(v.string()),
  /** Set when a network entry's `{ allow: true }` exempts the request: never limited, whatever `value` says. */
  allowed: v.optional(v.literal(true)),
  /**
   * Set while the key is blocked (an override's `blockedUntil`) or locked out (`lockout`): every
   * request is refused until this instant (UTC ms), whatever `value` says.
   */
  blockedUntil: v.optional(v.number()),
  /**
   * With `blockedUntil`: what refuses the key, an override's block (of the key's own, `"key"`,
   * its network's, `"network"`, or its tier's, `"tier"`) or a lockout (`"lockout"`); the later one
   * when both are in force.
   */
  blockedBy: v.optional(literals("key", "network", "tier", "lockout")),
});

/** The whole limit's tokens, as `getValue` returns them with `details: true`. */
export const getValueTotal = v.object({
  /** Tokens available across the whole limit at `ts` (estimated from the shards read unless `exact`). */
  value: v.number(),
  /** The whole limit's capacity. */
  capacity: v.number(),
  /** Whether every shard was read, so `value` is exact. */
  exact: v.boolean(),
});

/**
 * The result of `getValue` with `details: true`: {@link getValueReturns} plus `total`, and `heat`
 * (see `heatValidator`) when a transactional limit's rows read hold write stamps.
 */
export const getValueReturnsWithDetails = v.object({ ...getValueReturns.fields, total: getValueTotal, heat: v.optional(heatValidator) });

/**
 * What `getValue` adds with `wait: true`: `runAt`, the instant (UTC ms, whole) work of one token
 * queued now by `runWhenAllowed` would run, behind the key's queued work, exactly as
 * `check(ctx, name, { wait: true })` answers; absent when it would be refused (a block,
 * `maxReserved` reached, or more than 30 days away).
 */
export const getValueRunAt = { runAt: v.optional(v.number()) };

/** What `lib.getValue` returns: `total` and `heat` only when asked for, `runAt` only with `wait`. */
export const getValueResult = v.object({ ...getValueReturns.fields, total: v.optional(getValueTotal), heat: v.optional(heatValidator), ...getValueRunAt });

export type GetValueReturns = Infer<typeof getValueReturns>;
export type GetValueReturnsWithDetails = Infer<typeof getValueReturnsWithDetails>;
export type GetValueResult = Infer<typeof getValueResult>;
const getValueArgsObject = v.object(getValueArgs);
export type GetValueArgs = Infer<typeof getValueArgsObject>;
