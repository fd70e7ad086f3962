// The types of the client's calls: the ctx each needs, the options each takes for a limit named in
// the constructor or not (so a misspelled name fails to compile), and what each returns.
import type { FunctionReturnType, GenericActionCtx, GenericDataModel, GenericMutationCtx, GenericQueryCtx } from "convex/server";
import type { ComponentApi } from "../component/_generated/component.js";
import type { CalendarConfig } from "../shared/shapes/calendar-validators.js";
import type {
  GetValueReturns,
  GetValueReturnsWithDetails,
  RateLimitAllError,
  RateLimitArgs,
  RateLimitConfig,
  RateLimitDetails,
  RateLimitReturns,
  RateLimitReturnsWithDetails,
} from "../shared/shapes/validators.js";

/**
 * The installed component as the client takes it: `components.rateLimiter`. `admin`, `metrics`, `leases`, `overrides`, `runs`,
 * and `lib.limitAll`/`lib.checkAll`/`lib.credit`, may be missing from an app's generated API made
 * for `@convex-dev/rate-limiter`, until codegen runs again; only the methods that call them need
 * them.
 */
export type InstalledComponent = Omit<ComponentApi, "admin" | "lib" | "metrics" | "leases" | "overrides" | "runs"> & {
  lib: Omit<ComponentApi["lib"], "limitAll" | "checkAll" | "credit"> &
    Partial<Pick<ComponentApi["lib"], "limitAll" | "checkAll" | "credit">>;
  admin?: ComponentApi["admin"];
  metrics?: ComponentApi["metrics"];
  leases?: ComponentApi["leases"];
  overrides?: ComponentApi["overrides"];
  runs?: ComponentApi["runs"];
};

/** What one transaction of `RateLimiter.cleanup` did: rows and keys read and deleted, and whether it's done. */
export type CleanupResult = FunctionReturnType<ComponentApi["admin"]["cleanup"]>;

/** The part of a query's `ctx` the client needs. */
export type QueryCtx = Pick<GenericQueryCtx<GenericDataModel>, "runQuery">;
/** The part of a mutation's `ctx` the client needs. */
export type MutationCtx = Pick<GenericMutationCtx<GenericDataModel>, "runQuery" | "runMutation">;
/** The part of an action's `ctx` the client needs. */
export type ActionCtx = Pick<GenericActionCtx<GenericDataModel>, "runQuery" | "runMutation" | "runAction">;
/** Any ctx that can run a query: a query's, a mutation's or an action's. */
export type RunQueryCtx = QueryCtx | MutationCtx | ActionCtx;
/** Any ctx that can run a mutation: a mutation's or an action's. */
export type RunMutationCtx = MutationCtx | ActionCtx;

/** Options of a request, for a limit named in the constructor (its config is known). */
export type RequestOptions = Omit<RateLimitArgs, "name" | "config" | "raiseInCaller">;

/** Options of `getValue`, for a limit named in the constructor. */
export type GetValueOptions = {
  key?: string;
  sampleShards?: number;
  details?: boolean;
  /** The tier the key belongs to, for its overrides (see `RequestOptions.tier`). */
  tier?: string;
  /**
   * The address matched against the limit's network entries (`networks: true`). Default: the
   * request's own in mutations and actions; in a query, none (queries can't read it), so no
   * network entry applies unless it is given.
   */
  ip?: string;
  /**
   * With `details`: how long (ms) the mutations that take from this limit run, from the limit's
   * read to their commit, for the `heat` report (see `RateLimiter.getValue`). Default 25.
   */
  mutationMs?: number;
  /**
   * Also return `runAt`: the instant (UTC ms) work of one token queued now by `runWhenAllowed`
   * would run, behind the key's queued work, as `check(ctx, name, { wait: true })` says; absent
   * when it would be refused (a block, `maxReserved`, or more than 30 days away). Default false.
   * An `InvalidRateLimit` error for a limit that can't wait.
   */
  wait?: boolean;
};

/**
 * LimitAllRequest is one limit of a `limitAll`/`checkAll` call: a limit named in the constructor
 * (its config is known), or any other name with its own `config`. `key` defaults to the global
 * bucket, `count` to 1 token.
 */
export type LimitAllRequest<Limits> =
  | { [N in keyof Limits & string]: { name: N; key?: string; count?: number; tier?: string; config?: RateLimitConfig } }[keyof Limits & string]
  | { name: string; key?: string; count?: number; tier?: string; config: RateLimitConfig };

/** LimitAllOptions are the options of `limitAll` and `checkAll`; every one defaults to false. */
export type LimitAllOptions = {
  /**
   * Reserve in every limit: take tokens not there yet and run the work after `retryAfter` ms (an
   * `InvalidRateLimit` error when any of them is a sliding window, which can't reserve).
   */
  reserve?: boolean;
  /** Throw a `RateLimited` `ConvexError` (data: {@link RateLimitAllError}) instead of `ok: false`. */
  throws?: boolean;
  /** Return each result's `details` (see {@link RateLimitDetails}). */
  details?: boolean;
  /**
   * The address the limits with `networks: true` match against their network entries. Default:
   * the request's own in mutations and actions (in a query, none).
   */
  ip?: string;
};

/** What `limit` and `check` return for options `O`: with `details` exactly when asked for. */
export type RequestResult<O> = O extends { details: true } ? RateLimitReturnsWithDetails : RateLimitReturns;

/** The config of limit `Name`: the constructor's, or the inline `C`. */
type ConfigOf<Limits, Name extends string, C> = Name extends keyof Limits ? Limits[Name] : C;

/**
 * ResetsOf is what a calendar quota's results add to `limit`, `check` and `getValue`'s:
 * `resetsAt`, the instant (UTC ms) its current period ends (absent while an override of another
 * kind is in force for the key); for every other limit nothing, so their results keep exactly
 * `@convex-dev/rate-limiter`'s shape.
 */
export type ResetsOf<Limits, Name extends string, C> = [ConfigOf<Limits, Name, C>] extends [never]
  ? unknown
  : [ConfigOf<Limits, Name, C>] extends [CalendarConfig]
    ? { resetsAt?: number }
    : unknown;

/** What `getValue` returns for options `O`: with `total` exactly when asked for, and `runAt` with `wait: true`. */
export type GetValueResult<O> = (O extends { details: true } ? GetValueReturnsWithDetails : GetValueReturns) & (O extends { wait: true } ? { runAt?: number } : unknown);

/** Options of {@link RateLimiter.hookAPI}. */
export type HookOptions<DataModel extends GenericDataModel> = {
  /**
   * The key of the limit the query reports on. The server decides it: a fixed string, or a
   * function of the query's `ctx` (e.g. the signed-in user) and the key the client sent. Without
   * a function, a key sent by the client is refused. Default: no key (the global limit).
   */
  key?: string | ((ctx: GenericQueryCtx<DataModel>, keyFromClient?: string) => string | Promise<string>);
  /**
   * How many shard rows the query reads (a sharded limit). Default: every shard, so the shard it
   * reports is the emptiest and its promise holds whichever shards a request draws (a query's
   * reads cause no write conflicts; it only re-runs when a shard changes). A client's
   * `sampleShards` overrides it.
   */
  sampleShards?: number;
  /**
   * The tier the key belongs to, so the hook reports the config in force for it (see
   * `RateLimiter.setOverride`): a fixed tier, or a function of the query's `ctx` and the key
   * chosen (e.g. the signed-in user's plan). Clients can't choose it. Default: no tier.
   */
  tier?: string | ((ctx: GenericQueryCtx<DataModel>, key: string | undefined) => string | undefined | Promise<string | undefined>);
  /**
   * Lets clients choose `name` and `config` (e.g. a playground). Default false: a client that
   * sends either is refused, so no one can read another limit's state or substitute a config.
   */
  allowClientConfig?: boolean;
};
