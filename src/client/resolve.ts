// Resolving a call's limit: a name given to the constructor, or an inline config; its options
// checked before Convex's validators; and the arguments each component function takes.
import { invalid } from "../shared/validation/validate.js";
import { validateCalendar, validateCalendarShape, validateOptionTypes, windowConfig } from "../shared/validation/validate-config.js";
import type { ConcurrencyConfig, LimitConfig } from "../shared/shapes/concurrency-validators.js";
import type { RateLimitArgs, RateLimitConfig } from "../shared/shapes/validators.js";
import type { CalendarConfig } from "../shared/shapes/calendar-validators.js";
import type { LimitAllOptions, LimitAllRequest, RequestOptions } from "./types.js";

/** The limits a `RateLimiter` was constructed with, by name. */
type Limits = Record<string, LimitConfig>;

/** A component function an app generated for `@convex-dev/rate-limiter` lacks, or an error saying so. */
export function generated<F>(fn: F | undefined): F {
  if (fn === undefined) {
    throw invalid(
      "component",
      "components.rateLimiter",
      "lacks this function: it was generated for @convex-dev/rate-limiter; run `npx convex codegen` again",
    );
  }
  return fn;
}


/** The config of a rate limit: an `InvalidRateLimit` error for a concurrency limit's name. */
export function configFor(limits: Limits | undefined, name: string, options: object | undefined): RateLimitConfig {
  const config = anyConfigFor(limits, name, options);
  if (config.kind === "concurrency") {
    // Reachable only by bypassing the types (e.g. from JavaScript).
    throw invalid("name", name, "is a concurrency limit: use acquire, release and extend (or check, getValue and reset)");
  }
  // A calendar quota reaches the component as the fixed window it runs as, its own fields checked
  // first (an inline one was not checked by the constructor), so errors name them.
  if (config.kind === "calendar") {
    validateCalendarShape(config);
    validateCalendar(config);
  }
  return windowConfig(config);
}

/**
 * The config of request `i` of a `limitAll`/`checkAll`: a concurrency limit there is an
 * `InvalidRateLimit` error naming `requests[i].name`. Its slot isn't a token: take it with
 * `acquire` in the same mutation, where a throw rolls back both (see docs/guide.md).
 */
export function rateConfigAt(limits: Limits | undefined, i: number, request: LimitAllRequest<Limits>): RateLimitConfig {
  if (limits?.[request.name]?.kind === "concurrency" && !("config" in request && request.config !== undefined)) {
    throw invalid(
      `requests[${i}].name`,
      request.name,
      "is a concurrency limit: limitAll and checkAll take rate limits only; acquire its slot in the same mutation (a throw rolls back both)",
    );
  }
  return configFor(limits, request.name, request);
}

export function anyConfigFor(limits: Limits | undefined, name: string, options: object | undefined): LimitConfig {
  validateOptionTypes(options);
  const inline = options && "config" in options ? (options.config as RateLimitConfig | CalendarConfig) : undefined;
  const config = inline ?? limits?.[name];
  if (!config) {
    // Reachable only by bypassing the types (e.g. from JavaScript).
    throw invalid("name", name, "no such limit; name it in the RateLimiter or pass a config");
  }
  return config;
}

/** The config of a concurrency limit: an `InvalidRateLimit` error for a rate limit's name. */
export function concurrencyConfigFor(limits: Limits | undefined, name: string, options: object | undefined): ConcurrencyConfig {
  const config = anyConfigFor(limits, name, options);
  if (config.kind !== "concurrency") {
    // Reachable only by bypassing the types (e.g. from JavaScript).
    throw invalid("name", name, `is a ${config.kind} limit, not a concurrency limit: use limit`);
  }
  return config;
}

/**
 * The arguments of a `leases.*` call for concurrency limit `name`: `key` and `throws` from the
 * options, each only where `allowed`; any other option is an `InvalidRateLimit` error naming it.
 */
export function acquireRequest(name: string, config: ConcurrencyConfig, options: object | undefined, allowed: readonly string[]) {
  const { key, throws, ...rest } = (options ?? {}) as { key?: string; throws?: boolean };
  for (const [option, value] of Object.entries({ key, throws, ...rest })) {
    if (value !== undefined && !allowed.includes(option)) {
      throw invalid(option, value, `is not an option of a concurrency limit here (it takes ${allowed.join(" and ")})`);
    }
  }
  return { name, config, ...(key === undefined ? {} : { key }), ...(throws === undefined ? {} : { throws }) };
}

export function requestAll(limits: Limits | undefined, requests: readonly LimitAllRequest<Limits>[], options: LimitAllOptions) {
  return {
    requests: requests.map((r, i) => ({
      name: r.name,
      config: rateConfigAt(limits, i, r),
      ...(r.key === undefined ? {} : { key: r.key }),
      ...(r.count === undefined ? {} : { count: r.count }),
      ...(r.tier === undefined ? {} : { tier: r.tier }),
    })),
    ...options,
  };
}

export function request(limits: Limits | undefined, name: string, options: (RequestOptions & { config?: unknown }) | undefined): RateLimitArgs {
  const { config: _inline, ...rest } = options ?? {};
  return { ...rest, name, config: configFor(limits, name, options) };
}
