// The shapes that cross the component boundary. Types are inferred from these validators, so the
// validator is the single source of truth.
import { v, type Infer } from "convex/values";
import { addFieldsToValidator, literals, partial } from "convex-helpers/validators";

/**
 * How a limit's consumption is written. `"transactionally"` (the default): the decision reads the
 * limit's rows in the caller's transaction and writes them there, exact, but every request on a
 * hot key reads and writes the same rows, so concurrent requests conflict and are retried.
 * `"asynchronously"`: the decision reads a stale snapshot (no conflicts) while the limit is far
 * from empty, and records what it takes with inserts only; a background applier folds the takes
 * into the rows. Near the limit it decides on the current state, exactly. Use it for hot keys
 * (hundreds of requests per second on one key); see docs/hot-limits.md.
 */
const applyUpdates = v.optional(literals("transactionally", "asynchronously"));

const commonConfigFields = {
  /** Tokens added per `period`. Must be finite and > 0. */
  rate: v.number(),
  /** The period in ms over which `rate` tokens are added. Must be finite and ≥ 1 ms. */
  period: v.number(),
  /** The most tokens that can accumulate. Defaults to `rate`. 0 means "reserve only". */
  capacity: v.optional(v.number()),
  /** The most tokens that may be reserved ahead (the deepest debt). Defaults to unlimited. */
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
});

/**
 * A sliding window: at most `rate` tokens in any window of `period` ms, with no burst at the seam
 * between two windows. It counts what was taken in the current aligned window and in the previous
 * one, and weights the previous window's count by how much of it the sliding window still
 * overlaps (the two-window approximation: two numbers per key, like the other kinds). The error
 * bound and how it was measured against an exact log are in docs/reference.md ("Sliding window").
 *
 * Pro: "N per W" with no seam burst, and the tokens come back gradually, not all at a boundary.
 * Con: an approximation: traffic crafted to bunch at the end of one window and spread over the
 * next can pass more than `rate` in some window of `period` (always fewer than `2 * rate`; no
 * aligned window ever holds more than `rate`; measured in `npm run bench -- --only sliding`). The
 * previous window's weighted count is used exactly: for whole counts that decides as rounding it
 * up would, and rounding it down would let the adversarial case reach `2 * rate`.
 * No reservations: `maxReserved` and `reserve` are refused (use a token bucket for them), and
 * `capacity`, if given, must equal `rate`.
 */
export const slidingWindowValidator = v.object({
  kind: v.literal("sliding window"),
  ...commonConfigFields,
  /**
   * The instant (UTC ms) the two counting windows are aligned to. Only its phase matters, and only
   * to the approximation (where its error can fall); without it each name and key gets a stable,
   * hash-derived phase.
   */
  start: v.optional(v.number()),
});

/** One rate limit's configuration: a token bucket, a fixed window or a sliding window. */
export const configValidator = v.union(tokenBucketValidator, fixedWindowValidator, slidingWindowValidator);

/** The kind of a limit, as stored on its rows: one of the config validator's kinds. */
export const kindValidator = v.union(
  tokenBucketValidator.fields.kind,
  fixedWindowValidator.fields.kind,
  slidingWindowValidator.fields.kind,
);

/** KINDS lists every kind of limit, in the order of {@link configValidator}'s members. */
export const KINDS: readonly Infer<typeof kindValidator>[] = kindValidator.members.map((m) => m.value);

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
  config: configValidator,
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

/** What `lib.rateLimit` and `lib.checkRateLimit` return: `details` only when asked for. */
export const rateLimitResult = addFieldsToValidator(rateLimitReturns, { details: v.optional(rateLimitDetails) });

/** The fields of a take: `count` tokens (negative: given back) from `shard` at `ts` (ms). */
export const takeFields = {
  /** The shard the tokens were taken from, under the layout of the config they were taken under. */
  shard: v.number(),
  /** Tokens taken (negative: given back, by a credit or a take balanced over two shards). */
  count: v.number(),
  /** When the tokens were taken (ms). */
  ts: v.number(),
  /**
   * The config the take was decided under, as stored: it counts under those terms (see
   * `settle`). Absent on a take just decided, which is under the request's config.
   */
  config: v.optional(configValidator),
};

/** A take recorded but not yet applied to its row (asynchronous mode); see {@link takeFields}. */
export const takeValidator = v.object(takeFields);

/**
 * The fields of a take recorded for the applier (asynchronous mode): the table `pendingTakes`
 * stores them (plus its commit-time cursor) and the applier's batches carry them (plus the id).
 */
export const pendingTakeFields = {
  name: v.string(),
  key: v.optional(v.string()),
  ...takeFields,
  /** The config the take was decided under; the applier evaluates the rows with it. */
  config: configValidator,
};

/**
 * The state a row stores: `value` tokens available at `ts` (ms), negative while reserved ahead;
 * a sliding window also stores `prev`, the tokens taken in the aligned window before the one
 * containing `ts`. Token bucket: `ts` is when `value` was evaluated; fixed window: the start of
 * its window.
 */
export const rowStateFields = {
  value: v.number(),
  ts: v.number(),
  prev: v.optional(v.number()),
};

/**
 * `h`: the fingerprint (`termsHash`) of the terms a row was written under (`configTerms`: kind,
 * rate, period, capacity, shard count and start), which stands for the layout fields below and
 * which `rateLimitTerms` maps back to the terms once per limit name. One letter: it is read and
 * written on every call.
 */
export const rowFingerprintFields = { h: v.number() };

/**
 * The layout and terms a row is written under, so a change of config is recognised and carried
 * over without granting tokens: the shard count, the kind (`ts` means something else for each),
 * the shard's own `rate`, `period` (ms) and `capacity`, and `terms`, the whole limit's terms (see
 * `shardParams`), so a change that leaves this shard's own share as it was still shows. Rows
 * written by this package's earlier versions record them; rows it writes now store `h` instead.
 */
export const rowLayoutFields = {
  shards: v.number(),
  kind: kindValidator,
  rate: v.number(),
  period: v.number(),
  capacity: v.number(),
  terms: v.string(),
};

/**
 * What a flow writes to a row: its state and the fingerprint of the terms it was written under
 * (`h`), a dozen bytes where the terms in full took about a hundred and twenty.
 */
export const rowFieldsValidator = v.object({ ...rowStateFields, ...rowFingerprintFields });

/**
 * A stored row of one name and key: its shard (0 when unsharded), its state and, when recorded,
 * its layout. Rows written by `@convex-dev/rate-limiter` have no layout fields.
 */
export const storedRowFields = { shard: v.number(), ...rowStateFields, ...partial(rowFingerprintFields), ...partial(rowLayoutFields) };
const storedRowValidator = v.object(storedRowFields);

/**
 * A limit's whole terms as rows fingerprint them (`termsHash`): one document per limit name and
 * fingerprint, written with the first row of a key under those terms and read only when a row's
 * fingerprint isn't the current config's (after a config change), to carry it over exactly.
 */
export const termsFields = {
  name: v.string(),
  /** The fingerprint rows store, `termsHash(terms)`. */
  hash: v.number(),
  /** The whole limit's terms: `[kind, rate, period, capacity, shards, phase]` as JSON. */
  terms: v.string(),
};

const rowLayoutValidator = v.object(rowLayoutFields);
export type RowLayout = Infer<typeof rowLayoutValidator>;
export type Take = Infer<typeof takeValidator>;
export type RowFields = Infer<typeof rowFieldsValidator>;
export type StoredRow = Infer<typeof storedRowValidator>;

/** The arguments of `lib.credit`. */
export const creditArgs = {
  name: v.string(),
  key: v.optional(v.string()),
  /** Tokens to give back, > 0. */
  count: v.number(),
  /** The shards to credit: the `details.shards` of the `limit` result the tokens came from. */
  shards: v.optional(v.array(v.number())),
  config: configValidator,
};
const creditArgsObject = v.object(creditArgs);
export type CreditArgs = Infer<typeof creditArgsObject>;

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
  config: configValidator,
};

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

/** The result of `getValue` with `details: true`: {@link getValueReturns} plus `total`. */
export const getValueReturnsWithDetails = v.object({ ...getValueReturns.fields, total: getValueTotal });

/** What `lib.getValue` returns: `total` only when asked for. */
export const getValueResult = v.object({ ...getValueReturns.fields, total: v.optional(getValueTotal) });

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
export type GetValueReturns = Infer<typeof getValueReturns>;
export type GetValueReturnsWithDetails = Infer<typeof getValueReturnsWithDetails>;
export type GetValueResult = Infer<typeof getValueResult>;
const rateLimitArgsObject = v.object(rateLimitArgs);
export type RateLimitArgs = Infer<typeof rateLimitArgsObject>;
const getValueArgsObject = v.object(getValueArgs);
export type GetValueArgs = Infer<typeof getValueArgsObject>;
const hookQueryArgsObject = v.object(hookQueryArgs);
/** The arguments of `hookAPI`'s `getRateLimit` query; see {@link hookQueryArgs}. */
export type HookQueryArgs = Infer<typeof hookQueryArgsObject>;

/** The data of the `ConvexError` thrown for a refused request when `throws: true`. */
export const rateLimitErrorValidator = v.object({
  kind: v.literal("RateLimited"),
  /** The name of the limit that refused. */
  name: v.string(),
  /** Whole ms after which the same request succeeds if nothing else takes tokens meanwhile. */
  retryAfter: v.number(),
});

/**
 * The data of the `RateLimited` `ConvexError` that `limitAll`/`checkAll` throw with `throws`: a
 * `RateLimitError` (`name` is the first limit that refused, `retryAfter` when all succeed
 * together), plus `names`, every limit that refused (or would make reserved work wait).
 */
export const rateLimitAllErrorValidator = v.object({
  ...rateLimitErrorValidator.fields,
  names: v.array(v.string()),
});

/** One limit of a `limitAll` or `checkAll` call. */
export const limitAllItem = v.object({
  /** The name of the limit. */
  name: v.string(),
  /** Which bucket of the limit; omit it for the global one. */
  key: v.optional(v.string()),
  /** Tokens to take from this limit. Default 1; 0 peeks. */
  count: v.optional(v.number()),
  config: configValidator,
});

/** The arguments of `lib.limitAll` and `lib.checkAll`. */
export const limitAllArgs = {
  /** The limits to take from, all or none. The same name and key twice is one request, counts summed. */
  requests: v.array(limitAllItem),
  /** Reserve in every limit (see `rateLimitArgs.reserve`). Default false. */
  reserve: v.optional(v.boolean()),
  /** Throw `RateLimited` naming every limit that refused (or would make reserved work wait). Default false. */
  throws: v.optional(v.boolean()),
  /** Return each limit's `details` in `results`. Default false. */
  details: v.optional(v.boolean()),  /** With `throws`: the caller throws the returned `error` itself (see `rateLimitArgs.raiseInCaller`). */
  raiseInCaller: v.optional(v.boolean()),
};

/**
 * The result of `limitAll` and `checkAll`: `ok` when every limit admits (and then all were taken
 * from); `retryAfter` is when they all could succeed together with no other traffic (refused), or
 * when every reservation is repaid (reserved); `results` holds each limit's own answer, in order.
 */
export const limitAllResult = v.union(
  v.object({ ok: v.literal(true), retryAfter: v.optional(v.number()), results: v.array(rateLimitResult) }),
  v.object({ ok: v.literal(false), retryAfter: v.number(), results: v.array(rateLimitResult) }),
);
export type RateLimitError = Infer<typeof rateLimitErrorValidator>;
export type RateLimitAllError = Infer<typeof rateLimitAllErrorValidator>;
export type LimitAllItem = Infer<typeof limitAllItem>;
const limitAllArgsObject = v.object(limitAllArgs);
export type LimitAllArgs = Infer<typeof limitAllArgsObject>;
export type LimitAllResult = Infer<typeof limitAllResult>;

/**
 * What `lib.rateLimit` returns: its result and, when the call is rate limited with `throws` and
 * the limit records metrics, the `RateLimited` error for the caller to throw (`RateLimiter` does),
 * so the call's metric event is kept when the caller catches it (see `Raise` in request.ts).
 */
export const rateLimitCallResult = addFieldsToValidator(rateLimitReturns, {
  details: v.optional(rateLimitDetails),
  error: v.optional(rateLimitErrorValidator),
});
export type RateLimitCallResult = Infer<typeof rateLimitCallResult>;

/** What `lib.limitAll` returns: its result and, as for {@link rateLimitCallResult}, an error to throw. */
export const limitAllCallResult = addFieldsToValidator(limitAllResult, { error: v.optional(rateLimitAllErrorValidator) });
export type LimitAllCallResult = Infer<typeof limitAllCallResult>;

/** The data of the `ConvexError` thrown for a malformed config or request. */
export const invalidRateLimitErrorValidator = v.object({
  kind: v.literal("InvalidRateLimit"),
  /** The field at fault, e.g. `"config.rate"` or `"count"`. */
  field: v.string(),
  /** The offending value, as a string so NaN and ±Infinity survive serialization. */
  value: v.string(),
  /** `field = value: what is wrong`, readable as it stands. */
  message: v.string(),
});
export type InvalidRateLimitError = Infer<typeof invalidRateLimitErrorValidator>;

/**
 * A concurrency limit: at most `capacity` leases held at once per key ("in flight"), each holding
 * its slot until it is released or `lease` ms pass since it was acquired or last extended. A
 * lease past its time stops counting at once (in-flight means unexpired), so a holder that
 * crashes frees its slot at its expiry with no job running; clean-up later deletes what is left.
 * Acquired with `RateLimiter.acquire`, given back with `release`; see docs/guide.md
 * ("Concurrency limits").
 *
 * Pro: bounds work running at once (LLM generations, exports, slow providers), which a rate
 * can't: a rate bounds how often work starts, whatever it costs to run.
 * Con: each acquire reads the key's live leases (up to `capacity` documents), and every acquire,
 * release or extend on one key conflicts with acquires on it running at the same time; no
 * shards (a slot count split over shards would refuse while another shard has room).
 */
export const concurrencyValidator = v.object({
  kind: v.literal("concurrency"),
  /**
   * The most leases held at once per key: a whole number from 1 to 1000. Named as the other kinds
   * name the most they hold at once; headers and `getValue` report it as `capacity` too.
   */
  capacity: v.number(),
  /**
   * How long a lease holds its slot (ms) unless released first, counted from its acquire or its
   * last extend: the safety net for a holder that crashes. Finite, ≥ 1 ms.
   */
  lease: v.number(),
  /**
   * Record each acquire's outcome (admitted or refused, one slot) as a metric event, like a rate
   * limit's `metrics`: one insert per acquire, no read. Default false.
   */
  metrics: v.optional(v.boolean()),
});
export type ConcurrencyConfig = Infer<typeof concurrencyValidator>;

/** Any limit the `RateLimiter` constructor takes: a rate limit or a concurrency limit. */
export type LimitConfig = RateLimitConfig | ConcurrencyConfig;

/** The arguments of `leases.acquire` and `leases.check`. */
export const acquireArgs = {
  /** The name of the limit. Must be non-empty. */
  name: v.string(),
  /** Whose slots: e.g. a user ID. Omit it for one global limit. */
  key: v.optional(v.string()),
  /** Throw a `RateLimited` `ConvexError` instead of returning `{ ok: false }`. Default false. */
  throws: v.optional(v.boolean()),
  /** With `throws`: the caller throws the returned `error` itself (see `rateLimitArgs.raiseInCaller`). */
  raiseInCaller: v.optional(v.boolean()),
  config: concurrencyValidator,
};
const acquireArgsObject = v.object(acquireArgs);
export type AcquireArgs = Infer<typeof acquireArgsObject>;

/**
 * The result of `acquire`:
 * - `ok: true`: a slot is yours; `lease` is the opaque handle to `release` (or `extend`) it with,
 *   and `expiresAt` (UTC ms) is when it frees itself if neither happens.
 * - `ok: false`: every slot is held; `retryAfter` is the whole ms until enough of the leases held
 *   now expire for one to be free (with `capacity` leases held: the earliest one's expiry), so the
 *   same acquire at that instant succeeds if nothing else acquired and no config changed. A
 *   release frees a slot sooner; the hook and clients may retry then.
 */
export const acquireResult = v.union(
  v.object({ ok: v.literal(true), lease: v.string(), expiresAt: v.number() }),
  v.object({ ok: v.literal(false), retryAfter: v.number() }),
);
export type AcquireResult = Infer<typeof acquireResult>;

/**
 * What `leases.acquire` returns: {@link acquireResult} and, when refused with `throws` and
 * `raiseInCaller`, the `RateLimited` error for the caller to throw (so the refusal's metric event
 * is kept; a throw in the component would roll it back).
 */
export const acquireCallResult = v.union(
  v.object({ ok: v.literal(true), lease: v.string(), expiresAt: v.number() }),
  v.object({ ok: v.literal(false), retryAfter: v.number(), error: v.optional(rateLimitErrorValidator) }),
);
export type AcquireCallResult = Infer<typeof acquireCallResult>;

/** The arguments of `leases.extend`. */
export const extendArgs = {
  /** The handle `acquire` returned. */
  lease: v.string(),
  /** The lease's new length from now (ms): finite, ≥ 1. Defaults to the `lease` it was acquired with. */
  by: v.optional(v.number()),
};

/**
 * The result of `extend`: `ok: true` with the new `expiresAt` (UTC ms; never earlier than it
 * was); `ok: false` when the lease had expired, was released or is unknown: its slot may be
 * someone else's now, so acquire again.
 */
export const extendResult = v.union(
  v.object({ ok: v.literal(true), expiresAt: v.number() }),
  v.object({ ok: v.literal(false) }),
);
export type ExtendResult = Infer<typeof extendResult>;

/**
 * The arguments of `leases.getValue`: a concurrency limit's name, key and config; `expiries` to
 * also return every unexpired lease's expiry (for `useRateLimit`'s prediction).
 */
export const leaseValueArgs = {
  name: v.string(),
  key: v.optional(v.string()),
  config: concurrencyValidator,
  expiries: v.optional(v.boolean()),
};

/**
 * A concurrency limit's state at `ts` (UTC ms, the query's instant): `inFlight` unexpired leases
 * of `capacity`, and `earliestExpiry` (UTC ms), when the first of them frees itself (absent when
 * none is held).
 */
export const leaseValueResult = v.object({
  inFlight: v.number(),
  capacity: v.number(),
  ts: v.number(),
  earliestExpiry: v.optional(v.number()),
  /** With `expiries: true`: every unexpired lease's expiry (UTC ms), earliest first. */
  expiries: v.optional(v.array(v.number())),
});
export type LeaseValue = Infer<typeof leaseValueResult>;

/**
 * What `hookAPI`'s query returns for a concurrency limit: its state with every unexpired lease's
 * expiry (UTC ms, earliest first) and its config, from which `useRateLimit` predicts when a slot
 * is free.
 */
export const hookLeaseValue = v.object({
  inFlight: v.number(),
  capacity: v.number(),
  ts: v.number(),
  earliestExpiry: v.optional(v.number()),
  expiries: v.array(v.number()),
  config: concurrencyValidator,
});
export type HookLeaseValue = Infer<typeof hookLeaseValue>;
