// Waiting until allowed, RateLimiter's methods that queue work behind a limit instead of refusing
// it: `runWhenAllowed` (schedule the work at the first allowed instant), `cancelRun`, and
// `waitUntilAllowed` (an action sleeps until its turn). RateLimiter extends this class.
import { createFunctionHandle, getFunctionName, type FunctionReference, type OptionalRestArgs } from "convex/server";
import { ConvexError } from "convex/values";
import type { LimitConfig } from "../shared/shapes/concurrency-validators.js";
import { invalid } from "../shared/validation/validate.js";
import { validateOptionTypes, windowConfig } from "../shared/validation/validate-config.js";
import type { RateLimitConfig, RateLimitError } from "../shared/shapes/validators.js";
import {
  DEFAULT_ACTION_MAX_WAIT,
  DEFAULT_MAX_WAIT,
  MAX_ACTION_MAX_WAIT,
  MAX_MAX_WAIT,
  validateMaxWait,
  type CancelResult,
  type RunResult,
  type WaitArgs,
  type WaitCallResult,
} from "../shared/flow/wait.js";
import { LeaseMethods } from "./leases.js";
import type { ConfigOption, NamesOf, RateLimitName, RateLimits } from "./names.js";
import { withIp } from "./request-key.js";
import { configFor, generated } from "./resolve.js";
import type { ActionCtx, RunMutationCtx, RunQueryCtx } from "./types.js";

/** A function `runWhenAllowed` can schedule: a mutation or an action, public or internal. */
export type SchedulableFunction = FunctionReference<"mutation" | "action", "public" | "internal">;

/**
 * The options of {@link WaitMethods.runWhenAllowed} and {@link WaitMethods.waitUntilAllowed}.
 */
export type WaitOptions = {
  /** Whose bucket: e.g. a user ID. Default: the global one. */
  key?: string;
  /** Tokens the work takes, > 0, and at most what a full limit holds. Default 1. */
  count?: number;
  /** The tier the key belongs to, for its overrides (see `RateLimiter.setOverride`). Default: none. */
  tier?: string;
  /**
   * The address (IPv4 or IPv6) a limit with `networks: true` matches against its network entries
   * (allow and deny lists, see `RateLimiter.setOverride`), as `limit` does. Default: the request's
   * own (`ctx.meta.getRequestMetadata().ip`) in mutations and actions; none in queries and
   * scheduled runs, where no network entry applies. A malformed address is an `InvalidRateLimit`
   * error naming `ip`.
   */
  ip?: string;
  /**
   * The longest the work may wait (ms). When the first allowed instant is further away, nothing is
   * taken and the call returns `{ ok: false, retryAfter }`. `runWhenAllowed`: default one day
   * (`DEFAULT_MAX_WAIT`), at most 30 days (`MAX_MAX_WAIT`); `waitUntilAllowed`: default one minute
   * (`DEFAULT_ACTION_MAX_WAIT`), at most 9 minutes (`MAX_ACTION_MAX_WAIT`, inside an action's
   * 10-minute limit).
   */
  maxWait?: number;
  /** Throw a `RateLimited` `ConvexError` instead of returning `{ ok: false, retryAfter }`. Default false. */
  throws?: boolean;
};

/** The options of `check` with `wait: true`: {@link WaitOptions}, asking when work would run. */
export type WaitCheckOptions = WaitOptions & { wait: true };

/** What `check` with `wait: true` returns: when work queued now would run, or when it could be queued. */
export type WaitCheckResult = { ok: true; runAt: number } | { ok: false; retryAfter: number };

/** WaitMethods are `RateLimiter`'s methods that wait until a limit allows the work, in order. */
export class WaitMethods<Limits extends Record<string, LimitConfig>> extends LeaseMethods<Limits> {
  /**
   * runWhenAllowed schedules `fn(args)` at the first instant limit `name` allows it, instead of
   * refusing it: it takes the tokens at once, as a reservation, in the caller's transaction (so
   * requests after it queue behind it, and a mutation that throws later takes it back), and
   * schedules the work at `runAt`, the first whole ms at which the reservation is repaid. Work on
   * one key is scheduled in the order it was accepted (each `runAt` at or after the previous
   * one's), and never before it is allowed: over any window, the instants the runs are scheduled
   * for respect the limit as admissions at those instants would. Use it for work that must happen
   * but not faster than a provider allows (emails, LLM calls, webhooks); use `limit` for a person
   * waiting on an answer. Deciding in a short transaction and running the work later also keeps
   * the limited transaction short (docs/guide.md, "Waiting until allowed", has the figures).
   *
   * Token buckets, fixed windows (one shard) and exact sliding windows (one shard, written
   * transactionally) can wait; an approximate sliding window, a concurrency limit or a count a
   * full limit can't hold is an `InvalidRateLimit` error naming the field. A block (an
   * override's `blockedUntil`, on the key, its tier or a network holding `ip`) refuses. `maxReserved` still bounds the reservations. A dry-run limit schedules the work at
   * once and logs the wait it would have imposed. A run that starts keeps its tokens, whether it
   * succeeds or fails: the work was attempted.
   *
   * @param fn A mutation or action reference (`internal.emails.send`); `args` are its arguments.
   * @returns `{ ok: true, runAt, id }` (`runAt` UTC ms; `id` for {@link cancelRun}), or
   * `{ ok: false, retryAfter }` when the wait would pass `maxWait` (default one day) or the limit
   * refuses: nothing was taken, and the same call `retryAfter` ms later, with no other traffic,
   * would be accepted. With `throws`, that refusal is a `RateLimited` `ConvexError` instead.
   */
  async runWhenAllowed<F extends SchedulableFunction, Name extends string = NamesOf<RateLimits<Limits>>, C extends RateLimitConfig = never>(
    ctx: RunMutationCtx,
    name: RateLimitName<Limits, Name, C>,
    options: WaitOptions & ConfigOption<RateLimits<Limits>, Name, C>,
    fn: F,
    ...args: OptionalRestArgs<F>
  ): Promise<RunResult> {
    const request = await this.waitRequest(ctx, name, options, DEFAULT_MAX_WAIT, MAX_MAX_WAIT);
    const fnArgs: unknown = args[0] ?? {};
    if (typeof fnArgs !== "object" || fnArgs === null || Array.isArray(fnArgs)) throw invalid("args", fnArgs, "must be the function's arguments, an object");
    const handle = await createFunctionHandle(referenceOf(fn));
    const result = await ctx.runMutation(generated(this.component.runs).runWhenAllowed, { ...request, fn: handle, fnArgs });
    // Options may be undefined from JavaScript, which the types don't stop.
    return okOrThrow(name, result, options?.throws) as RunResult;
  }

  /**
   * cancelRun cancels a run {@link runWhenAllowed} scheduled, if it hasn't started, and gives its
   * tokens back by the credit rules (never above the capacity; see {@link RateLimiter.credit}),
   * exactly once, and no more than keeps the key's other queued runs within the limit at their
   * own instants (a sharded limit gives nothing back while other runs are queued): a second call,
   * or a call for a run that started or finished, changes nothing.
   * Work queued after it keeps its `runAt`. The limit's config is the one named in this
   * RateLimiter, or the one the run was queued under for a name given inline. When that config's
   * terms changed since the run was queued, it gives back at most the key's debt (never tokens to
   * spend at once): the change carried the debt over in the new terms' tokens, where the run's own
   * tokens can't be told apart.
   *
   * @param id The `id` `runWhenAllowed` returned.
   * @returns `{ cancelled: true, credited }`, or `{ cancelled: false, state }` saying why not:
   * `"inProgress"`, `"success"` or `"failed"` (it started; its tokens stay counted), `"canceled"`
   * (cancelled already) or `"unknown"`. A run whose key was reset, or cleared by `clearAll`, since
   * it was queued is cancelled with `credited: 0`: the reset already gave the key its tokens. A
   * string that is no run's id is an `InvalidRateLimit` error.
   */
  async cancelRun(ctx: RunMutationCtx, id: string): Promise<CancelResult> {
    if (typeof id !== "string") throw invalid("id", id, "must be the id runWhenAllowed returned");
    const configs: Record<string, RateLimitConfig> = {};
    for (const [name, config] of Object.entries(this.limits ?? {})) if (config.kind !== "concurrency") configs[name] = windowConfig(config);
    return await ctx.runMutation(generated(this.component.runs).cancelRun, { id, configs });
  }

  /**
   * waitUntilAllowed, in an action, takes its place in line for limit `name` (a reservation, in
   * the same order as {@link runWhenAllowed}'s work), then sleeps until the limit allows it, once,
   * with no polling. Then do the work. Use it where the work must run in the action itself (a
   * call to a provider with the action's own state); prefer `runWhenAllowed` otherwise: an action
   * that sleeps holds its slot of the deployment's action concurrency for the whole wait.
   *
   * Options as `runWhenAllowed`'s, but `maxWait` defaults to one minute and is at most 9 minutes.
   * The tokens stay taken if the action then fails: the work was attempted. It takes an action's
   * `ctx` only (one with `runAction`): a mutation can't sleep, so passing a mutation's `ctx` is a
   * compile error; from a mutation, use `runWhenAllowed`.
   *
   * @returns `{ ok: true, waited }` (the ms it slept, 0 when its turn had come) once the work may run, or `{ ok: false,
   * retryAfter }` at once when the wait would pass `maxWait` (nothing taken); with `throws`, a
   * `RateLimited` `ConvexError` instead.
   */
  async waitUntilAllowed<Name extends string = NamesOf<RateLimits<Limits>>, C extends RateLimitConfig = never>(
    ctx: ActionCtx,
    name: RateLimitName<Limits, Name, C>,
    options?: WaitOptions & ConfigOption<RateLimits<Limits>, Name, C>,
  ): Promise<{ ok: true; waited: number } | { ok: false; retryAfter: number }> {
    const request = await this.waitRequest(ctx, name, options, DEFAULT_ACTION_MAX_WAIT, MAX_ACTION_MAX_WAIT);
    const result = await ctx.runMutation(generated(this.component.runs).runWhenAllowed, request);
    const decided = okOrThrow(name, result, options?.throws);
    if (!decided.ok) return decided;
    const wait = Math.max(0, decided.runAt - Date.now());
    // One timer to the instant the reservation is repaid: nothing reads the limit meanwhile.
    if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait));
    return { ok: true, waited: wait };
  }

  /** `check` with `wait: true` (see `RateLimiter.check`): runWhenAllowed's decision now, taking nothing. */
  protected async checkWait(ctx: RunQueryCtx, name: string, options: WaitOptions & { config?: unknown }): Promise<WaitCheckResult> {
    const request = await this.waitRequest(ctx, name, options, DEFAULT_MAX_WAIT, MAX_MAX_WAIT);
    const result = await ctx.runQuery(generated(this.component.runs).checkRun, request);
    const decided = okOrThrow(name, result, options?.throws);
    return decided.ok ? { ok: true, runAt: decided.runAt } : decided;
  }

  /**
   * The component's arguments for a wait on `name`, checked here first (`maxWait` from 0 to
   * `most`), with the request's own address for a limit with network entries (see `withIp`).
   */
  private async waitRequest(
    ctx: object,
    name: string,
    options: (WaitOptions & { config?: unknown }) | undefined,
    byDefault: number,
    most: number,
  ): Promise<Omit<WaitArgs, "fn" | "fnArgs">> {
    validateOptionTypes(options);
    const { key, count, tier, ip, maxWait = byDefault } = options ?? {};
    if (this.limits?.[name]?.kind === "concurrency") {
      throw invalid(
        "name",
        name,
        "is a concurrency limit, which can't wait here: a slot is free when work ends, which no schedule knows; acquire it in the work itself and retry after its retryAfter",
      );
    }
    validateMaxWait(maxWait, most);
    return await withIp(ctx, {
      name,
      config: configFor(this.limits, name, options),
      maxWait,
      ...(key === undefined ? {} : { key }),
      ...(count === undefined ? {} : { count }),
      ...(tier === undefined ? {} : { tier }),
      ...(ip === undefined ? {} : { ip }),
    });
  }
}

/** `fn` as a function reference, or an `InvalidRateLimit` error naming `fn`. */
function referenceOf(fn: unknown): SchedulableFunction {
  // Generated references are proxies (objects); a bare string or a plain object is no reference.
  if ((typeof fn === "object" || typeof fn === "function") && fn !== null) {
    try {
      getFunctionName(fn as SchedulableFunction);
      return fn as SchedulableFunction;
    } catch {
      // Not a reference: the error below names it.
    }
  }
  throw invalid("fn", typeof fn === "function" ? "a function" : typeof fn === "object" && fn !== null ? "an object" : fn, "must be a function reference to a mutation or action, e.g. internal.emails.send");
}

/** The component's result as the caller gets it: a refusal thrown as `RateLimited` with `throws`. */
function okOrThrow(name: string, result: WaitCallResult, throws: boolean | undefined): WaitCallResult {
  if (!result.ok && throws) throw new ConvexError<RateLimitError>({ kind: "RateLimited", name, retryAfter: result.retryAfter });
  return result;
}
