// The typed client: what apps import. `RateLimiter` (rate-limiter.ts) names limits, resolves their
// configs and calls the component; the decisions themselves happen in the component.
export { RateLimiter } from "./rate-limiter.js";
export { isInvalidRateLimitError, isRateLimitError } from "./errors.js";
export type { ActionCtx, CleanupResult, HookOptions, InstalledComponent, LimitAllOptions, LimitAllRequest, MutationCtx, QueryCtx } from "./types.js";
export { DAY, HOUR, MINUTE, SECOND, WEEK } from "../shared/kinds/algebra.js";
export { calculateRateLimit, decideRateLimit } from "../shared/kinds/predict.js";
export type { CalculatedRateLimit } from "../shared/kinds/predict.js";
export type { State as RateLimitState } from "../shared/kinds/algebra.js";
export { calendarWindow } from "../shared/validation/validate-config.js";
export type { RateLimitDecision } from "../shared/kinds/predict.js";
/** An exact sliding window's log: what its row took in its last window (see ../shared/window-log.ts). */
export { MAX_EXACT_RATE, MAX_LOG_BYTES, MAX_LOG_ENTRIES, windowLog } from "../shared/kinds/window-log.js";
export type { Entry as WindowLogEntry } from "../shared/kinds/window-log.js";
/** Convex validators for configs and results, for apps that pass them through their own functions. */
export { acquireResult, concurrencyValidator, extendResult, leaseValueResult } from "../shared/shapes/concurrency-validators.js";
export { getValueReturns, getValueReturnsWithDetails } from "../shared/shapes/value-validators.js";
export { calendarValidator } from "../shared/shapes/calendar-validators.js";
export {
  configValidator,
  KINDS,
  rateLimitDetails,
  rateLimitReturns,
  rateLimitReturnsWithDetails,
} from "../shared/shapes/validators.js";
export type {
  AcquireResult,
  ConcurrencyConfig,
  ExtendResult,
  HookLeaseValue,
  LeaseValue,
  LimitConfig,
} from "../shared/shapes/concurrency-validators.js";
export type { LimitAllResult } from "../shared/shapes/limit-all-validators.js";
export type { CalendarConfig } from "../shared/shapes/calendar-validators.js";
export type {
  RateLimitAllError,
  GetValueReturns,
  GetValueReturnsWithDetails,
  InvalidRateLimitError,
  RateLimitArgs,
  RateLimitConfig,
  RateLimitDetails,
  RateLimitError,
  RateLimitReturns,
  RateLimitReturnsWithDetails,
} from "../shared/shapes/validators.js";
export type { ComponentApi } from "../component/_generated/component.js";
/** Overrides (limits as data): see {@link RateLimiter.setOverride}; validators for apps that pass them through their own functions. */
export type { CalendarOverrideConfig, Override, OverrideConfig, OverrideRecord, OverrideTarget } from "./overrides.js";
export { overrideEntryValidator, overrideRecord, overrideTarget, overrideValidator } from "../shared/shapes/override-validators.js";
/** Keys from the request (see {@link RateLimiter.requestKey}) and the canonical forms of addresses and networks. */
export type { RequestKeyBy, RequestKeyOptions, RequestMetadataCtx } from "./request-key.js";
export { MAX_USER_AGENT_LENGTH } from "./request-key.js";
export { DEFAULT_IPV6_PREFIX } from "../shared/overrides/address.js";
/** A key of a limit as `RateLimiter.listKeys` reports it, and its validator (see src/shared/admin/idle.ts). */
export type { KeyStatus } from "../shared/admin/idle.js";
export { keyStatusValidator } from "../shared/admin/idle.js";

/** Metrics (see {@link RateLimiter.metrics}): the result of `metrics`, of `foldMetrics`, and their parts. */
export type { FoldResult, MetricBucket, MetricCounts, MetricOutcome, MetricTopKey, MetricsResult } from "../shared/metrics/metrics.js";
export { METRICS_BUCKET_MS, metricsResult } from "../shared/metrics/metrics.js";
export { DEFAULT_MUTATION_MS, heatOf, heatOfMetrics, maxWritesPerShard, planFor, shardsFor } from "../shared/metrics/heat.js";
export type { Heat, SizingPlan } from "../shared/metrics/heat.js";
export { heatValidator } from "../shared/shapes/heat-validators.js";
/** HTTP: rate-limit header fields and a 429 response for httpActions (see ./http.ts). */
export { concurrencyHeaders, QUOTA_EXCEEDED_PROBLEM_TYPE, rateLimitHeaders, tooManyRequests } from "./http.js";
export type { RateLimitConfigSource, RateLimitHeaders, RefusedWithDetails, TooManyRequestsOptions } from "./http.js";
/** Jitter: a bounded random delay added to `retryAfter` (see ../shared/jitter.ts). */
export { DEFAULT_MAX_JITTER_MS, withJitter } from "../shared/flow/jitter.js";
export type { JitterOptions } from "../shared/flow/jitter.js";

/** Waiting until allowed (see {@link RateLimiter.runWhenAllowed}): options, results and the bounds on `maxWait`. */
export type { SchedulableFunction, WaitOptions } from "./waiting.js";
export type { CancelResult, RunResult } from "../shared/flow/wait.js";
export { cancelResult, DEFAULT_ACTION_MAX_WAIT, DEFAULT_MAX_WAIT, MAX_ACTION_MAX_WAIT, MAX_MAX_WAIT, runResult } from "../shared/flow/wait.js";

import { RateLimiter } from "./rate-limiter.js";
export default RateLimiter;
