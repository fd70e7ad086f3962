// RateLimiter, the typed client: it names limits, resolves their configs and calls the component,
// then executes what the component's verdict says (return, or throw). It decides nothing itself.
import type { GenericDataModel } from "convex/server";
import { ConvexError } from "convex/values";
import { validateLimits, windowConfig } from "../shared/validation/validate-config.js";
import type { CheckedRequests, ConcurrencyNamesOf, ConfigOption, LimitName, NamesOf, RateLimitName, RateLimits } from "./names.js";
import type { RateLimitConfig, RateLimitDetails } from "../shared/shapes/validators.js";
import type { CalendarConfig } from "../shared/shapes/calendar-validators.js";
import type { LimitAllResult } from "../shared/shapes/limit-all-validators.js";
import type { LeaseValue, LimitConfig } from "../shared/shapes/concurrency-validators.js";
import { acquireRequest, anyConfigFor, configFor, generated, request, requestAll } from "./resolve.js";
import { hookAPI, leaseHookAPI, type HookAPIOf } from "./hook-api.js";
import { type WaitCheckOptions, type WaitCheckResult } from "./waiting.js";
import { OperatingMethods } from "./operating.js";
import { exactFor, noteAsyncTake } from "./transaction-takes.js";
import { requestIp, requestKey, withIp, type RequestKeyOptions, type RequestMetadataCtx } from "./request-key.js";
import type { GetValueOptions, GetValueResult, HookOptions, InstalledComponent, LimitAllOptions } from "./types.js";
import type { LimitAllRequest, RequestOptions, RequestResult, ResetsOf, RunMutationCtx, RunQueryCtx } from "./types.js";

/**
 * RateLimiter limits how often things happen in a Convex app, using the rate limiter component.
 *
 * ```ts
 * const rateLimiter = new RateLimiter(components.rateLimiter, {
 *   sendMessage: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
 *   freeTrialSignUp: { kind: "fixed window", rate: 100, period: HOUR },
 * });
 * await rateLimiter.limit(ctx, "sendMessage", { key: userId, throws: true });
 * ```
 *
 * Names given here are type-checked at every call; any other name needs an inline `config`.
 * Every config is validated here, so a malformed one fails when the module loads.
 */
export class RateLimiter<Limits extends Record<string, LimitConfig> = Record<never, never>> extends OperatingMethods<Limits> {
  /**
   * @param component The installed component: `components.rateLimiter`.
   * @param limits The named limits and their configs.
   */
  constructor(component: InstalledComponent, limits?: Limits) {
    super(component, limits);
    validateLimits(limits);
  }

  /**
   * requestKey makes a key from who is calling, for anonymous traffic (sign-in, sign-up, password
   * reset) that a bot can't shed the way it sheds a session ID. It reads the request's metadata
   * (`ctx.meta.getRequestMetadata()`, in mutations and actions; a nested call sees its parent's)
   * and returns a string usable wherever a `key` goes, composable (`` `${userId}:${ipKey}` ``):
   *
   * ```ts
   * const key = await rateLimiter.requestKey(ctx, { by: "ip" });
   * await rateLimiter.limit(ctx, "signIn", { key, throws: true });
   * ```
   *
   * `by` is `"ip"` (IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 in its RFC 5952 form grouped by
   * `ipv6Prefix`, default /64, so `"2001:db8:1:2::/64"`), `"userAgent"` or `"ip+userAgent"`. A
   * request without an address (scheduled functions, crons, server-to-server) or user agent is an
   * `InvalidRateLimit` error naming `request.ip` or `request.userAgent`, unless `fallback` gives
   * the key for it. With `hash: { secret }`, the key is a keyed hash (HMAC-SHA-256) of it instead,
   * so no address is stored (see {@link RequestKeyOptions}, and docs/guide.md, "Limiting by
   * address").
   */
  async requestKey(ctx: RequestMetadataCtx, options: RequestKeyOptions): Promise<string> {
    return await requestKey(ctx, options);
  }

  /**
   * limit decides a request and, when it's allowed, takes its tokens. Call it from a mutation
   * (or an action) before doing the work: when the caller's mutation throws later, the tokens
   * are given back with the rest of the transaction.
   *
   * Options (all optional for a named limit): `key` (whose bucket; default the global one),
   * `count` (tokens, default 1; 0 peeks), `reserve` (take tokens not there yet and run the work
   * after `retryAfter`; default false; a sliding window can't reserve: an `InvalidRateLimit`
   * error), `throws` (throw a `RateLimited` `ConvexError` instead of returning `ok: false`, and
   * with `reserve` whenever the work would have to wait; default false),
   * `details` (also return which shards were used, the tokens remaining and when the limit is
   * full again, e.g. for HTTP headers; default false), `exact` (decide an asynchronous limit on
   * the current state, never on a stale snapshot; default false, and set here by itself for every
   * call on a key after the first take from it in the same mutation, which a stale snapshot
   * can't see), `config` (required for names not given to the constructor).
   *
   * @returns `{ ok: true }` to go ahead now; `{ ok: true, retryAfter }` when tokens were reserved
   * and the work should run in `retryAfter` ms; `{ ok: false, retryAfter }` when refused, where
   * retrying after exactly `retryAfter` ms (a whole number) succeeds if nothing else consumed
   * tokens meanwhile. By default exactly the shape `@convex-dev/rate-limiter` returns; with
   * `details: true`, also `details` (see {@link RateLimitDetails}).
   */
  async limit<Name extends string = NamesOf<RateLimits<Limits>>, O extends RequestOptions = RequestOptions, C extends RateLimitConfig | CalendarConfig = never>(
    ctx: RunMutationCtx,
    name: RateLimitName<Limits, Name, C>,
    options?: O & ConfigOption<RateLimits<Limits>, Name, C>,
  ): Promise<RequestResult<O> & ResetsOf<Limits, Name, C>> {
    const args = await withIp(ctx, request(this.limits, name, options));
    // From the second take on an asynchronous key in one transaction, decide exactly (see
    // transaction-takes.ts); a peek too, since it must see those takes.
    if (exactFor(ctx, args)) args.exact = true;
    if (args.throws) args.raiseInCaller = true;
    const result = await ctx.runMutation(this.component.lib.rateLimit, args);
    // The component returns a refusal's error instead of throwing when that keeps the call's metric event.
    if (!result.ok && result.error) throw new ConvexError(result.error);
    if (result.ok) noteAsyncTake(ctx, args);
    return result as RequestResult<O> & ResetsOf<Limits, Name, C>;
  }

  /**
   * check decides a request exactly as {@link limit} would at this instant, without taking any
   * tokens (for a sharded limit: as `limit` would with the same shards drawn; each call draws its
   * own). Use it in queries, or before several `limit` calls that must succeed together.
   * Takes the same options and returns the same result as `limit`.
   *
   * For a concurrency limit it decides as {@link acquire} would, holding nothing: `{ ok: true }`,
   * or `{ ok: false, retryAfter }`; it takes `key` and `throws` only.
   *
   * With `wait: true` it says when work would run if queued now: it decides as
   * {@link runWhenAllowed} would at this instant, behind the work queued on the key, taking
   * nothing, and returns `{ ok: true, runAt }` (UTC ms) or `{ ok: false, retryAfter }` past
   * `maxWait` (default a day). It takes `runWhenAllowed`'s options (`key`, `count`, `tier`,
   * `maxWait`, `throws`).
   */
  async check<Name extends string = NamesOf<Limits>, O extends RequestOptions | WaitCheckOptions = RequestOptions, C extends RateLimitConfig | CalendarConfig = never>(
    ctx: RunQueryCtx,
    name: LimitName<Limits, Name, C>,
    options?: O & ConfigOption<Limits, Name, C>,
  ): Promise<O extends { wait: true } ? WaitCheckResult : RequestResult<O> & ResetsOf<Limits, Name, C>> {
    type Result = O extends { wait: true } ? WaitCheckResult : RequestResult<O> & ResetsOf<Limits, Name, C>;
    if (options && "wait" in options && options.wait === true) {
      const { wait: _wait, ...rest } = options as WaitCheckOptions;
      return (await this.checkWait(ctx, name, rest)) as Result;
    }
    const config = anyConfigFor(this.limits, name, options);
    if (config.kind === "concurrency") {
      const result = await ctx.runQuery(generated(this.component.leases).check, acquireRequest(name, config, options, ["key", "throws"]));
      return result as Result;
    }
    const result = await ctx.runQuery(this.component.lib.checkRateLimit, await withIp(ctx, request(this.limits, name, options as RequestOptions)));
    return result as Result;
  }

  /**
   * limitAll decides several limits at once (per user, per team and global, say) and takes from
   * all of them or none: nothing is taken unless every limit admits, so a request never spends one
   * limit's tokens and is then refused by another. One component call, one transaction.
   *
   * Each request names a limit (type-checked like `limit`'s; any other name needs its own
   * `config`) with an optional `key` and `count` (default 1). The same name and key twice is one
   * request with the counts summed. Options: `reserve` (in every limit), `throws` (a `RateLimited`
   * `ConvexError` whose data also lists `names`, every limit that refused), `details` (each
   * result's `details`). Asynchronous limits are decided on the current state, exactly.
   *
   * @returns `{ ok, retryAfter, results }`: `ok` when every limit admitted (and all were taken
   * from); when refused, `retryAfter` is the least whole ms after which all of them could succeed
   * together with no other traffic, not just the first refusal's; when reserved, when every
   * reservation is repaid. `results` holds each request's own answer, in order.
   */
  async limitAll<const R extends readonly { name: string }[]>(
    ctx: RunMutationCtx,
    requests: CheckedRequests<RateLimits<Limits>, R>,
    options: LimitAllOptions = {},
  ): Promise<LimitAllResult> {
    const args = await allWithIp(ctx, { ...requestAll(this.limits, requests as readonly LimitAllRequest<RateLimits<Limits>>[], options), ...(options.throws ? { raiseInCaller: true } : {}) });
    const { error, ...result } = await ctx.runMutation(generated(this.component.lib.limitAll), args);
    if (error) throw new ConvexError(error);
    // Decided exactly, but a later `limit` on one of these keys must see what this took.
    if (result.ok) for (const r of args.requests) noteAsyncTake(ctx, r);
    return result;
  }

  /**
   * checkAll decides several limits at once exactly as {@link limitAll} would at this instant,
   * without taking anything. Use it in queries. Takes the same requests and options.
   */
  async checkAll<const R extends readonly { name: string }[]>(
    ctx: RunQueryCtx,
    requests: CheckedRequests<RateLimits<Limits>, R>,
    options: LimitAllOptions = {},
  ): Promise<LimitAllResult> {
    return ctx.runQuery(generated(this.component.lib.checkAll), await allWithIp(ctx, requestAll(this.limits, requests as readonly LimitAllRequest<RateLimits<Limits>>[], options)));
  }

  /**
   * credit gives `count` tokens back to a limit's key: the unused part of an estimate reserved
   * up front (LLM tokens), or a request that failed downstream. The rule: a credit never lifts a
   * shard above its capacity, so crediting what you took can't create a token (the key ends where
   * it would be had those tokens never been taken, or lower). Credit only what you took: the
   * limiter can't tell. Options: `key` (default the global bucket), `count` (tokens, > 0;
   * required), `shards` (pass `result.details.shards` from a `limit(..., { details: true })` to
   * credit the shards the tokens came from; required on a sharded limit, since a credit to another
   * shard could outlast the take once the shard it came from refills), `config` (for
   * names not given to the constructor). A negative `count` passed to `limit` stays an error:
   * credits are explicit.
   *
   * @returns the tokens actually credited (less than `count` when shards were already full).
   */
  async credit<Name extends string = NamesOf<RateLimits<Limits>>, C extends RateLimitConfig | CalendarConfig = never>(
    ctx: RunMutationCtx,
    name: RateLimitName<Limits, Name, C>,
    options: { key?: string; count: number; shards?: readonly number[]; tier?: string; ip?: string } & ConfigOption<RateLimits<Limits>, Name, C>,
  ): Promise<{ credited: number }> {
    const { key, count, shards, tier, ip } = options;
    const args = await withIp(ctx, {
      name,
      count,
      config: configFor(this.limits, name, options),
      ...(key === undefined ? {} : { key }),
      ...(shards === undefined ? {} : { shards: [...shards] }),
      ...(tier === undefined ? {} : { tier }),
      ...(ip === undefined ? {} : { ip }),
    });
    return ctx.runMutation(generated(this.component.lib.credit), args);
  }

  /**
   * reset removes a limit's state for one key (every shard): the next request finds it full.
   * E.g. after a successful login, reset the failed-logins limit. Work queued for the key by
   * `runWhenAllowed` still runs when it was scheduled to (it was accepted; the reset only makes
   * the key full), but its tokens are gone with the key's state: `cancelRun` of it afterwards
   * cancels the job and credits nothing back. The name must be one given to
   * the constructor, or come with an inline `config` (only used to check the name). For a
   * concurrency limit it removes every lease of the key, held or not: every slot is free at once
   * (a holder's later `release` is harmless).
   */
  async reset<Name extends string = NamesOf<Limits>, C extends RateLimitConfig | CalendarConfig = never>(
    ctx: RunMutationCtx,
    name: LimitName<Limits, Name, C>,
    options?: { key?: string } & ConfigOption<Limits, Name, C>,
  ): Promise<void> {
    const key = options?.key;
    if (this.limits?.[name]?.kind === "concurrency") {
      await ctx.runMutation(generated(this.component.leases).reset, { name, ...(key === undefined ? {} : { key }) });
      return;
    }
    // The config lets a key with its own override keep it, its rows written full (see resetOps).
    await ctx.runMutation(this.component.lib.resetRateLimit, {
      name,
      ...(key === undefined ? {} : { key }),
      config: configFor(this.limits, name, options),
    });
  }

  /**
   * getValue reads a limit's state without taking tokens: `{ value, ts, shard, config }` of one
   * shard (the emptiest of `sampleShards` read, default 1), evaluated now (`ts` in ms), where
   * `config` is that shard's share (`shards: 1`), so `calculateRateLimit(value, config, t)`
   * predicts it: exactly the shape `@convex-dev/rate-limiter` returns. With `details: true`, also
   * `total`, the whole limit's tokens, and for a transactional limit `heat`: how many writes a
   * second its shards take, estimated from the rows read, against the sizing rule for mutations of
   * `mutationMs` ms (default 25), `hot` when over it with the shards or mode the rule recommends
   * (docs/hot-limits.md, "Is my limit too hot?"). It writes nothing. Read every shard
   * (`sampleShards: shards`) for a promise that holds whichever shards a request then draws, and
   * for a steadier heat estimate. With `wait: true`, also `runAt`: when work of one token queued now
   * (`runWhenAllowed`) would run (UTC ms), exactly as `check(ctx, name, { wait: true })` says.
   *
   * For a concurrency limit it returns `{ inFlight, capacity, ts, earliestExpiry? }` (see
   * {@link LeaseValue}): the leases unexpired now, and when the first of them frees itself (UTC
   * ms). It takes `key` only.
   */
  async getValue<Name extends string = NamesOf<Limits>, O extends GetValueOptions = GetValueOptions, C extends RateLimitConfig | CalendarConfig = never>(
    ctx: RunQueryCtx,
    name: LimitName<Limits, Name, C>,
    options?: O & ConfigOption<Limits, Name, C>,
  ): Promise<Name extends ConcurrencyNamesOf<Limits> ? LeaseValue : GetValueResult<O> & ResetsOf<Limits, Name, C>> {
    const { key, sampleShards, details, tier, ip, mutationMs, wait } = options ?? {};
    const config = anyConfigFor(this.limits, name, options);
    if (config.kind === "concurrency") {
      const { throws: _never, ...args } = acquireRequest(name, config, options, ["key"]);
      return (await ctx.runQuery(generated(this.component.leases).getValue, args)) as Name extends ConcurrencyNamesOf<Limits> ? LeaseValue : GetValueResult<O> & ResetsOf<Limits, Name, C>;
    }
    const args = await withIp(ctx, {
      name,
      config: configFor(this.limits, name, options),
      ...(key === undefined ? {} : { key }),
      ...(sampleShards === undefined ? {} : { sampleShards }),
      ...(details === undefined ? {} : { details }),
      ...(tier === undefined ? {} : { tier }),
      ...(ip === undefined ? {} : { ip }),
      ...(mutationMs === undefined ? {} : { mutationMs }),
      ...(wait === undefined ? {} : { wait }),
    });
    const result = await ctx.runQuery(this.component.lib.getValue, args);
    return result as Name extends ConcurrencyNamesOf<Limits> ? LeaseValue : GetValueResult<O> & ResetsOf<Limits, Name, C>;
  }

  /**
   * hookAPI makes the functions `useRateLimit` needs; export them from a Convex module:
   *
   * ```ts
   * export const { getRateLimit, getServerTime } = rateLimiter.hookAPI("sendMessage", {
   *   key: async (ctx) => (await ctx.auth.getUserIdentity())?.subject ?? "anonymous",
   * });
   * ```
   *
   * `getRateLimit` is a public query returning `getValue`'s result with `total` for the limit and
   * the key the server chooses (see {@link HookOptions}); `getServerTime` is a public mutation returning the
   * server's `Date.now()`, for the hook's clock offset. For a concurrency limit, `getRateLimit`
   * returns its `getValue` (`{ inFlight, capacity, ts, earliestExpiry? }`) with `expiries`, every
   * unexpired lease's expiry, and `config`, so `useRateLimit` can say when a slot frees.
   */
  // The default `Name` is the rate limits' names: with `DataModel` given explicitly, `Name` is not
  // inferred, so a concurrency limit's name needs it spelled out (`hookAPI<DataModel, "jobs">`),
  // and the query's type is then its own, never a union of both.
  hookAPI<DataModel extends GenericDataModel, Name extends string = NamesOf<RateLimits<Limits>>, C extends RateLimitConfig | CalendarConfig = never>(
    name: LimitName<Limits, Name, C>,
    options?: HookOptions<DataModel> & ConfigOption<Limits, Name, C>,
  ): HookAPIOf<DataModel, [Name] extends [ConcurrencyNamesOf<Limits>] ? true : false> {
    type Made = HookAPIOf<DataModel, [Name] extends [ConcurrencyNamesOf<Limits>] ? true : false>;
    const opts = options;
    const config = anyConfigFor(this.limits, name, opts);
    if (config.kind === "concurrency") return leaseHookAPI<DataModel>(generated(this.component.leases), name, config, opts) as Made;
    return hookAPI<DataModel>(this.component, name, windowConfig(config), opts) as Made;
  }
}

/** A `limitAll` call's arguments with the request's own address, when one of its limits matches network entries (see `withIp`). */
async function allWithIp<A extends { ip?: string; requests: readonly { config: { networks?: boolean } }[] }>(ctx: object, args: A): Promise<A> {
  if (args.ip !== undefined || !args.requests.some((r) => r.config.networks === true)) return args;
  const ip = await requestIp(ctx);
  return ip === undefined ? args : { ...args, ip };
}
