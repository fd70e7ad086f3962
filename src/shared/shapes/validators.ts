// The shapes that cross the component boundary. Types are inferred from these validators, so the
// validator is the single source of truth.
import { v, type Infer } from "convex/values";
import { addFieldsToValidator, literals, partial } from "convex-helpers/validators";
import { rateLimitErrorValidator } from "./error-validators.js";

export { invalidRateLimitErrorValidator, rateLimitAllErrorValidator, rateLimitErrorValidator } from "./error-validators.js";
export type { InvalidRateLimitError, RateLimitAllError, RateLimitError } from "./error-validators.js";
export type { DecidedBy, GetValueArgs, GetValueResult, GetValueReturns, GetValueReturnsWithDetails } from "./value-validators.js";

/**
 * How a limit's consumption is written. `"transactionally"` (the default): the decision reads the
 * limit's rows in the caller's transaction and writes them there, exact, but every request on a
 * hot key reads and writes the same rows, so concurrent requests conflict and are retried.
 * `"asynchronously"`: the decision reads a stale snapshot (no conflicts) while the limit is far
 * from empty, and records what it takes with inserts only; a background applier folds the takes
 * into the rows. Near the limit it decides on the current state, exactly. Use it for hot keys
 * (hundreds of requests per second on one key); see docs/hot-limits.md.
 */
export const applyUpdates = v.optional(literals("transactionally", "asynchronously"));

export const commonConfigFields = {
  /** Tokens added per `period`. Must be finite and > 0. */
  rate: v.number(),
  /** The period in ms over which `rate` tokens are added. Must be finite and ≥ 1 ms. */
  period: v.number(),
  /** The most tokens that can accumulate. Defaults to `rate`. 0 means "reserve only". */
  capacity: v.optional(v.number()),
  /**
   * The most tokens that may be reserved ahead (the deepest debt). Defaults to unlimited. After a
   * config change a debt carried over counts in the new config's tokens (the work behind it keeps
   * its schedule): lowering the rate shrinks it, so more may be reserved behind that work.
   */
  maxReserved: v.optional(v.number()),
  /** How many rows the limit is spread over, to avoid write contention. Defaults to 1. */
  shards: v.optional(v.number()),
  applyUpdates,
  /**
   * Runs the limit as a dry run (shadow mode): it decides and keeps its state as if enforced, but
   * always admits; each request it would have refused is logged as one JSON line
   * (`{"event":"rateLimit.dryRun",...}`) instead. Default false. Use it to roll out a new limit and
   * see whom it would refuse before enforcing it.
   */
  dryRun: v.optional(v.boolean()),
  /**
   * Records metrics for this limit: each `limit` call (and each of its limits in a `limitAll`)
   * inserts one event, admitted, refused or reserved with the tokens asked for, and a fold
   * (`RateLimiter.foldMetrics`, from the app's cron) sums the events into per-minute summaries per
   * limit name, plus per key the refusals that rank the top offenders. Read them with
   * `RateLimiter.metrics`. Default false. Cost: one document inserted per call, no reads, and no
   * conflicts (inserts of new documents never conflict). Queries (`check`, `getValue`) record
   * nothing, and a call that throws (`throws: true`, or the caller's mutation failing) rolls its
   * event back with it; see docs/reference.md ("Metrics"). Use it on the limits you watch.
   */
  metrics: v.optional(v.boolean()),
  /**
   * Locks a key out once it runs dry: the admitted take that leaves the key with less than one
   * token locks it for `lockout` ms, and every request until then is refused, `retryAfter` running
   * to the lock's end (a refusal during the lock doesn't extend it). Default: no lockout. For
   * brute-force defence, e.g. 10 failed sign-ins an hour (`rate: 10, period: HOUR`), then locked
   * for a day (`lockout: DAY`). The lock is written with that take, so it commits with it (a
   * refusal writes nothing). It needs one shard, written transactionally.
   */
  lockout: v.optional(v.number()),
  /**
   * Opts the limit in to allow and deny lists by network: overrides whose target is a CIDR network
   * (`RateLimiter.setOverride(ctx, name, { network: "203.0.113.0/24" }, ...)`), matched against
   * the address each request comes from (the request's own, or `ip`). Default false: the limit
   * pays no read for network entries, and setting one is an `InvalidRateLimit` error naming this
   * field. Cost: one indexed read per request that carries an address, whatever the list's size.
   * An override keeps the named config's (like `shards`).
   */
  networks: v.optional(v.boolean()),
};

/**
 * A token bucket: tokens refill continuously at `rate / period` per ms, up to `capacity`.
 *
 * Pro: smooth; a burst of up to `capacity` is allowed, then requests are spaced evenly.
 * Con: a steady stream of requests sees a refusal roughly every `period / rate` ms, which can
 * be harder to explain to users than "N per hour".
 */
export const tokenBucketValidator = v.object({
  kind: v.literal("token bucket"),
  ...commonConfigFields,
  /** Token buckets have no phase; accepted as `null` for compatibility. */
  start: v.optional(v.null()),
});

/**
 * A fixed window: `rate` tokens are granted at each window boundary, up to `capacity`.
 * Windows are `period` ms long and aligned to `start` (UTC ms); without `start`, each name and
 * key gets its own stable, hash-derived phase, so keys don't all refill at the same instant.
 *
 * Pro: easy to explain ("100 per hour"), cheap to reason about for quotas.
 * Con: up to `capacity` requests can pass just before a boundary and `rate` more just after.
 */
export const fixedWindowValidator = v.object({
  kind: v.literal("fixed window"),
  ...commonConfigFields,
  /** The instant (UTC ms) windows are aligned to. Only its phase matters. */
  start: v.optional(v.number()),
  /** A calendar quota's periods, on the fixed window it runs as (`calendarWindow`; write `kind: "calendar"`). */
  calendar: v.optional(v.object({ period: literals("day", "week", "month"), timeZone: v.string(), anchor: v.number() })),
});

/**
 * A sliding window: at most `rate` tokens in any window of `period` ms, with no burst at the seam
 * between two windows; the tokens come back one by one, `period` ms after each was taken.
 *
 * Exact (the default, `exact` unset or true): each row keeps a log of what it took in its last
 * window, so in any window of `period` ms (any half-open interval that long) the limit admits at
 * most `rate` tokens, per shard and in all. Its cost is bounded whatever the rate: a row's log
 * keeps at most 32 entries and 112 bytes, entries merging into later ones past that (which may
 * refuse a little early, never admit more), and the row is read and written whole on each call,
 * under twice a token bucket's bytes (measured in `npm run bench -- --only bytes`). Any rate.
 *
 * Approximate (`exact: false`): two numbers per key, like the other kinds. It counts what was taken
 * in the current aligned window and in the previous one, and weights the previous window's count
 * by how much of it the sliding window still overlaps. Traffic crafted to bunch at the end of one
 * window and spread over the next can pass more than `rate` in some window of `period` (always
 * fewer than `2 * rate`; no aligned window ever holds more than `rate`). Use it above the exact
 * window's cap, or on hot keys where the log's bytes matter more than the bound.
 *
 * No reservations: `maxReserved` and `reserve` are refused (use a token bucket for them), and
 * `capacity`, if given, must equal `rate`.
 */
export const slidingWindowValidator = v.object({
  kind: v.literal("sliding window"),
  ...commonConfigFields,
  /**
   * Whether the window is exact (a log per row: never more than `rate` in any window of `period`)
   * or the two-window approximation (`false`: two numbers per row, fewer than `2 * rate` in any
   * window). Default true. See {@link slidingWindowValidator}.
   */
  exact: v.optional(v.boolean()),
  /**
   * The instant (UTC ms) the approximate window's two counting windows are aligned to. Only its
   * phase matters, and only to the approximation (where its error can fall); without it each name
   * and key gets a stable, hash-derived phase. An exact window has no phase: it is refused there.
   */
  start: v.optional(v.number()),
});

/** One rate limit's configuration: a token bucket, a fixed window or a sliding window. */
export const configValidator = v.union(tokenBucketValidator, fixedWindowValidator, slidingWindowValidator);

/**
 * The kind of a limit's rows, as the algebra evaluates them: one of the config validator's kinds,
 * or `"exact sliding window"`, a sliding window with `exact` (its rows keep a log; see
 * `window-log.ts`). Rows of this package's earlier versions record one of the first three.
 */
export const kindValidator = v.union(
  tokenBucketValidator.fields.kind,
  fixedWindowValidator.fields.kind,
  slidingWindowValidator.fields.kind,
  v.literal("exact sliding window"),
);

/**
 * isAsync reports whether a config records its consumption for the applier instead of writing
 * its rows (`applyUpdates: "asynchronously"`).
 */
export function isAsync(config: RateLimitConfig): boolean {
  return config.applyUpdates === "asynchronously";
}

/**
 * recordsMetrics reports whether a limit's config (any kind, concurrency too) records metrics
 * (`metrics: true`).
 */
export function recordsMetrics(config: { metrics?: boolean | undefined }): boolean {
  return config.metrics === true;
}

/**
 * kindOf returns the kind of a config's rows, as the algebra evaluates them: the config's kind,
 * except a sliding window without `exact: false`, whose rows keep a log: `"exact sliding window"`.
 */
export function kindOf(config: RateLimitConfig): Infer<typeof kindValidator> {
  return config.kind === "sliding window" && config.exact !== false ? "exact sliding window" : config.kind;
}

/** KINDS lists every kind of limit a config names, in the order of {@link configValidator}'s members. */
export const KINDS: readonly RateLimitConfig["kind"][] = configValidator.members.map((m) => m.fields.kind.value);

const configArg = v.object({
  ...commonConfigFields,
  kind: v.string(),
  applyUpdates: v.optional(v.string()),
  exact: v.optional(v.boolean()),
  start: v.optional(v.union(v.number(), v.null())),
  calendar: fixedWindowValidator.fields.calendar,
});
/**
 * The config as the component's functions take it: one object with every kind's fields (`start` a
 * number or null), where {@link configValidator} is a union of three, and `kind` and
 * `applyUpdates` as strings, where it lists their values. Convex checks a union member by member
 * on every call, and convex-test also serialises and parses each function's validators on every
 * call, a node at a time: the unions made a `limit` call's validation cost more than its decision.
 * The flows check each kind's own fields and values first (`checkConfig`), with errors that name
 * the field (and suggest the kind meant), so the type the handlers see is the union's.
 */
export const configArgValidator = configArg as unknown as typeof configValidator;

/** The arguments of `lib.rateLimit` and `lib.checkRateLimit`. */
export const rateLimitArgs = {
  /** The name of the limit, e.g. `"sendMessage"`. Must be non-empty. */
  name: v.string(),
  /** Which bucket of the limit: e.g. a user ID. Omit it for one global limit. */
  key: v.optional(v.string()),
  /** How many tokens the request takes. Defaults to 1; 0 is a peek that never writes. */
  count: v.optional(v.number()),
  /**
   * Take the tokens now even if they're not there yet, and run the work after `retryAfter` ms.
   * Default false. Use it to queue work (e.g. LLM calls) instead of refusing it.
   */
  reserve: v.optional(v.boolean()),
  /**
   * Throw a `RateLimited` `ConvexError` instead of returning `{ ok: false }` (with `reserve`:
   * whenever the work would have to wait). Default false.
   */
  throws: v.optional(v.boolean()),
  /**
   * Also return `details`: which shards were used, the tokens remaining and when the limit is full
   * again (see {@link rateLimitDetails}), e.g. for HTTP rate-limit headers. Default false: the
   * result has exactly the shape `@convex-dev/rate-limiter` returns, so apps that declare it in
   * their own `returns` keep validating.
   */
  details: v.optional(v.boolean()),
  /**
   * Decide on the current state even for a limit with `applyUpdates: "asynchronously"`, never on
   * a stale snapshot. Default false. A stale snapshot can't see what the caller's own transaction
   * took earlier, so the client sets it when the same mutation already took from this key
   * asynchronously; an app calling the component's `lib.rateLimit` itself should too.
   */
  exact: v.optional(v.boolean()),
  /**
   * With `throws`: the caller throws the `RateLimited` error itself when the component returns it
   * as `error` (`RateLimiter` does), which it does for a refusal of a limit with `metrics: true`,
   * so the refusal's metric event is kept when the caller catches the error. Default false: the
   * component throws, rolling back everything it wrote in the call.
   */
  raiseInCaller: v.optional(v.boolean()),
  /**
   * The tier the key belongs to, e.g. the user's plan (`"pro"`): an override set for that tier
   * (`RateLimiter.setOverride(ctx, name, { tier }, ...)`) applies, unless the key has its own.
   * Costs one indexed read of the overrides per call; leave it out on limits you don't override
   * by tier. Default: none.
   */
  tier: v.optional(v.string()),
  /**
   * The address (IPv4 or IPv6) a limit with `networks: true` matches against its network entries.
   * `RateLimiter` passes the request's own (`ctx.meta.getRequestMetadata().ip`) in mutations and
   * actions unless the caller gives one. Without it no network entry applies. Default: none.
   */
  ip: v.optional(v.string()),
  config: configArgValidator,
};

/**
 * The details of a decision, returned as `details` when a request asks for them.
 * Sharded limits are estimated from the shards the decision read unless `exact`.
 */
export const rateLimitDetails = v.object({
  /**
   * The shard rows the decision used: those tokens were taken from when ok; when refused, the
   * rows `retryAfter` is computed from.
   */
  shards: v.array(v.number()),
  /** Tokens left across the whole limit after this request (negative while reserved ahead). */
  remaining: v.number(),
  /** The whole limit's capacity. */
  capacity: v.number(),
  /** Whole ms until the limit is full again with no other traffic; 0 when it is full now. */
  resetAfter: v.number(),
  /** Whether every shard was read, so `remaining` and `resetAfter` are exact. */
  exact: v.boolean(),
  /**
   * Set only when an override decided: the config in force (see `RateLimiter.setOverride`), which
   * `rateLimitHeaders` then reports instead of the named one.
   */
  config: v.optional(configValidator),
});

/**
 * The result of `limit` and `check`, exactly as `@convex-dev/rate-limiter` returns it.
 * - `ok: true` without `retryAfter`: go ahead now.
 * - `ok: true` with `retryAfter` (only with `reserve`): the tokens are reserved; run the work
 *   `retryAfter` ms from now.
 * - `ok: false`: refused; the same request with no other traffic succeeds `retryAfter` ms from now.
 *
 * `retryAfter` is a whole number of ms, ≥ 1.
 */
export const rateLimitReturns = v.union(
  v.object({ ok: v.literal(true), retryAfter: v.optional(v.number()) }),
  v.object({ ok: v.literal(false), retryAfter: v.number() }),
);

/** The result of `limit` and `check` with `details: true`: {@link rateLimitReturns} plus `details`. */
export const rateLimitReturnsWithDetails = addFieldsToValidator(rateLimitReturns, { details: rateLimitDetails });

/** `resetsAt`: a calendar quota's only, the instant (UTC ms) its period ends; `retryAfter` runs to it. */
const resetsAtField = { resetsAt: v.optional(v.number()) };

/** What `lib.rateLimit` and `lib.checkRateLimit` return: `details` only when asked for, `resetsAt` for a calendar quota. */
export const rateLimitResult = addFieldsToValidator(rateLimitReturns, { details: v.optional(rateLimitDetails), ...resetsAtField });

/** The arguments of `lib.credit`. */
export const creditArgs = {
  name: v.string(),
  key: v.optional(v.string()),
  /** Tokens to give back, > 0. */
  count: v.number(),
  /** The shards to credit: the `details.shards` of the `limit` result the tokens came from. */
  shards: v.optional(v.array(v.number())),
  /** The tier the key belongs to, for its overrides: see `rateLimitArgs.tier`. Default: none. */
  tier: v.optional(v.string()),
  /** The address matched against network entries: see `rateLimitArgs.ip`. Default: none. */
  ip: v.optional(v.string()),
  config: configArgValidator,
};
const creditArgsObject = v.object(creditArgs);
export type CreditArgs = Infer<typeof creditArgsObject>;

/**
 * The arguments of the public query `RateLimiter.hookAPI` makes (`getRateLimit`), all optional:
 * what `useRateLimit` may send. The server decides which of them it honours.
 */
export const hookQueryArgs = partial({
  name: v.string(),
  key: v.string(),
  sampleShards: v.number(),
  config: configValidator,
});

export type RateLimitConfig = Infer<typeof configValidator>;
export type TokenBucketConfig = Infer<typeof tokenBucketValidator>;
export type FixedWindowConfig = Infer<typeof fixedWindowValidator>;
export type RateLimitReturns = Infer<typeof rateLimitReturns>;
export type RateLimitDetails = Infer<typeof rateLimitDetails>;
export type RateLimitReturnsWithDetails = Infer<typeof rateLimitReturnsWithDetails>;
export type RateLimitResult = Infer<typeof rateLimitResult>;
const rateLimitArgsObject = v.object(rateLimitArgs);
export type RateLimitArgs = Infer<typeof rateLimitArgsObject>;
const hookQueryArgsObject = v.object(hookQueryArgs);
/** The arguments of `hookAPI`'s `getRateLimit` query; see {@link hookQueryArgs}. */
export type HookQueryArgs = Infer<typeof hookQueryArgsObject>;


/**
 * What `lib.rateLimit` returns: its result and, when the call is refused with `throws` and the
 * limit records metrics, the `RateLimited` error for the caller to throw (`RateLimiter` does),
 * so the call's metric event is kept when the caller catches it (see `Raise` in request.ts).
 */
export const rateLimitCallResult = v.union(
  addFieldsToValidator(rateLimitReturns.members[0], { details: v.optional(rateLimitDetails), ...resetsAtField }),
  addFieldsToValidator(rateLimitReturns.members[1], { details: v.optional(rateLimitDetails), error: v.optional(rateLimitErrorValidator), ...resetsAtField }),
);

/**
 * {@link rateLimitCallResult} as `lib.rateLimit` declares its returns: `ok` and `retryAfter`
 * checked as `@convex-dev/rate-limiter` declares them, `details` and `error` typed but not checked
 * field by field. A function's validators are serialised and parsed on every call (convex-test),
 * and the two nested objects, once per member of the union, made that cost more than the decision
 * (issue 22). The flow builds both from these validators' types, and test/returns.test.ts checks
 * every result against the full {@link rateLimitCallResult}.
 */
export const rateLimitCallReturns = v.union(
  addFieldsToValidator(rateLimitReturns.members[0], { details: v.optional(v.any() as unknown as typeof rateLimitDetails), ...resetsAtField }),
  addFieldsToValidator(rateLimitReturns.members[1], {
    details: v.optional(v.any() as unknown as typeof rateLimitDetails),
    error: v.optional(v.any() as unknown as typeof rateLimitErrorValidator),
    ...resetsAtField,
  }),
);
export type RateLimitCallResult = Infer<typeof rateLimitCallResult>;
