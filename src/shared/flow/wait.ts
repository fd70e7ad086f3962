// Waiting until allowed: deciding a request by a reservation taken now, and the first instant
// its work may run (`runAt`), in the order requests were accepted, within a bound on the wait.
// Pure: the component answers the reads and executes the verdict (src/component/runs.ts).
import { v, type Infer } from "convex/values";
import { DAY, MINUTE } from "../kinds/algebra.js";
import { inForce } from "../overrides/overrides.js";
import { decideUnder } from "./request.js";
import type { DecisionEvent } from "../metrics/metrics.js";
import type { KeyFlow, RowOp } from "../shapes/rows.js";
import { invalid, validateCountValue, validateNameAndKey, validateTier, validateWaitConfig } from "../validation/validate.js";
import { checkConfig } from "../validation/validate-config.js";
import { configArgValidator, type RateLimitArgs } from "../shapes/validators.js";
import { math } from "../core/math.js";

/** How long `runWhenAllowed` lets work wait by default (ms): one day. */
export const DEFAULT_MAX_WAIT = DAY;
/** The longest `maxWait` `runWhenAllowed` accepts (ms): 30 days. */
export const MAX_MAX_WAIT = 30 * DAY;
/** How long `waitUntilAllowed` waits by default (ms): one minute. */
export const DEFAULT_ACTION_MAX_WAIT = MINUTE;
/**
 * The longest `maxWait` `waitUntilAllowed` accepts (ms): 9 minutes, so the action that sleeps
 * still has time to do its work inside Convex's 10-minute limit on an action.
 */
export const MAX_ACTION_MAX_WAIT = 9 * MINUTE;

/**
 * validateMaxWait checks a `maxWait` (ms): a finite number from 0 to `most`. Throws an
 * `InvalidRateLimit` `ConvexError` naming `maxWait`.
 */
export function validateMaxWait(maxWait: number, most: number): void {
  if (!(Number.isFinite(maxWait) && maxWait >= 0 && maxWait <= most)) {
    throw invalid("maxWait", maxWait, `must be a finite number of ms from 0 to ${most}`);
  }
}

/** The arguments of `runs.runWhenAllowed`: a request, its bound on the wait, and the work. */
export const waitArgs = {
  /** The name of the limit. */
  name: v.string(),
  /** Which bucket of the limit; omit it for the global one. */
  key: v.optional(v.string()),
  /** Tokens the work takes, > 0. Default 1. */
  count: v.optional(v.number()),
  /** The tier the key belongs to, for its overrides (see `rateLimitArgs.tier`). */
  tier: v.optional(v.string()),
  /** The address a limit with `networks: true` matches against its network entries (see `rateLimitArgs.ip`). */
  ip: v.optional(v.string()),
  /** The longest the work may wait (ms), from 0 to {@link MAX_MAX_WAIT}. */
  maxWait: v.number(),
  config: configArgValidator,
  /** A function handle (`createFunctionHandle`) of the work to schedule; none to only take a place (`waitUntilAllowed`). */
  fn: v.optional(v.string()),
  /** The work's arguments. */
  fnArgs: v.optional(v.any()),
};
const waitArgsObject = v.object(waitArgs);
export type WaitArgs = Infer<typeof waitArgsObject>;

/**
 * The result of `runWhenAllowed`: `ok: true` with `runAt`, the instant (UTC ms, whole) the work
 * is scheduled for, and `id`, the run's id for `cancelRun`; or `ok: false` with `retryAfter`, the
 * whole ms after which the same request, with no other traffic, would wait no longer than
 * `maxWait`.
 */
export const runResult = v.union(
  v.object({ ok: v.literal(true), runAt: v.number(), id: v.string() }),
  v.object({ ok: v.literal(false), retryAfter: v.number() }),
);
export type RunResult = Infer<typeof runResult>;

/** What `runs.runWhenAllowed` returns: {@link runResult}, with no `id` when there was no work to schedule. */
export const waitCallResult = v.union(
  v.object({ ok: v.literal(true), runAt: v.number(), id: v.optional(v.string()) }),
  v.object({ ok: v.literal(false), retryAfter: v.number() }),
);
export type WaitCallResult = Infer<typeof waitCallResult>;

/**
 * What `cancelRun` did: `cancelled: true` with the tokens `credited` back (by the credit rules:
 * never above the capacity), or `cancelled: false` with the run's `state`: `"inProgress"`,
 * `"success"` or `"failed"` (it started; its tokens stay counted), `"canceled"` (cancelled
 * before, by this or by the scheduler), or `"unknown"` (no such run).
 */
export const cancelResult = v.union(
  v.object({ cancelled: v.literal(true), credited: v.number() }),
  v.object({ cancelled: v.literal(false), state: v.union(v.literal("inProgress"), v.literal("success"), v.literal("failed"), v.literal("canceled"), v.literal("unknown")) }),
);
export type CancelResult = Infer<typeof cancelResult>;

/**
 * What a wait's flow decided: the result (without the run's id, which scheduling gives), the
 * writes that take the reservation (none when refused), the metric event, the shards the tokens
 * came from (for a credit on cancel), and a dry run's would-be wait.
 */
export type WaitOutcome<Id> = {
  result: { ok: true; runAt: number } | { ok: false; retryAfter: number };
  ops: RowOp<Id>[];
  event?: DecisionEvent;
  shards: number[];
  wouldRefuse?: { retryAfter: number };
};

/**
 * checkWait checks what a wait adds to a request before anything is read: `maxWait` (from 0 to
 * {@link MAX_MAX_WAIT}), a `count` > 0 (work that takes no tokens needs no limit), and a named
 * config of a kind that can wait (see `validateWaitConfig`).
 */
export function checkWait(args: Pick<WaitArgs, "maxWait" | "count" | "config">): void {
  validateMaxWait(args.maxWait, MAX_MAX_WAIT);
  const count = args.count ?? 1;
  validateCountValue(count);
  if (!(count > 0)) throw invalid("count", count, "must be > 0: work that takes no tokens needs no limit");
  validateWaitConfig(args.config);
}

/**
 * waitFlow decides a request that waits until allowed, at `now`: it reserves the tokens at once
 * (so later requests queue behind it) under what is in force for the key, and says when the work
 * may first run: `runAt`, the first whole-ms instant the reservation is repaid, and never before
 * `queuedUntil`, the latest `runAt` of the key's work queued before (so work runs in the order it
 * was accepted). When that is more than `maxWait` ms away, or the limit refuses (a block, or
 * `maxReserved` reached), it refuses, writing nothing. A dry run admits at once, reserving as it
 * would, and reports its would-be wait. The count must be one a full limit admits without
 * reserving (else the work could never run within the limit): an `InvalidRateLimit` error. An
 * accepted request's metric event says how long its work waits (`waited`, ms).
 */
export function* waitFlow<Id>(args: WaitArgs, now: number, random: () => number, queuedUntil?: number): KeyFlow<Id, WaitOutcome<Id>> {
  validateNameAndKey(args.name, args.key);
  checkConfig(args.config);
  if (args.tier !== undefined) validateTier(args.tier);
  checkWait(args);
  const count = args.count ?? 1;
  const request: RateLimitArgs = { name: args.name, config: args.config, count };
  if (args.key !== undefined) request.key = args.key;
  if (args.tier !== undefined) request.tier = args.tier;
  if (args.ip !== undefined) request.ip = args.ip;
  return yield* inForce(request, now, random, function* (resolved, own, draw): KeyFlow<Id, WaitOutcome<Id>> {
    const decided = yield* decideUnder<Id>(request, resolved, own, now, draw, { notBefore: queuedUntil });
    const shards = decided.plan.shards;
    const { event } = decided;
    if (!decided.result.ok) return refused(decided.result.retryAfter, event, shards);
    const allowed = now + (decided.result.retryAfter ?? 0);
    const runAt = math.max(allowed, queuedUntil ?? allowed);
    const wait = runAt - now;
    if (wait > args.maxWait) return refused(math.max(1, math.ceil(wait - args.maxWait)), event && { ...event, outcome: "refused" }, shards);
    const outcome: WaitOutcome<Id> = { result: { ok: true, runAt }, ops: decided.ops, shards };
    if (event) outcome.event = { ...event, waited: wait };
    if (decided.wouldRefuse) outcome.wouldRefuse = decided.wouldRefuse;
    return outcome;
  });
}

/**
 * runAtFlow says when work of one token queued at `now` would run (`getValue` with `wait: true`):
 * the `runAt` `waitFlow` gives it with the longest `maxWait` ({@link MAX_MAX_WAIT}), behind
 * `queuedUntil`, the key's latest queued work; or undefined when it would be refused (a block,
 * `maxReserved` reached, or more than {@link MAX_MAX_WAIT} away). Reads as `waitFlow` does, and
 * throws as it does for a limit that can't wait.
 */
export function* runAtFlow<Id>(
  args: Pick<WaitArgs, "name" | "key" | "tier" | "ip" | "config">,
  now: number,
  random: () => number,
  queuedUntil?: number,
): KeyFlow<Id, number | undefined> {
  const { name, key, tier, ip, config } = args;
  const request: WaitArgs = {
    name,
    config,
    maxWait: MAX_MAX_WAIT,
    ...(key === undefined ? {} : { key }),
    ...(tier === undefined ? {} : { tier }),
    ...(ip === undefined ? {} : { ip }),
  };
  const { result } = yield* waitFlow<Id>(request, now, random, queuedUntil);
  return result.ok ? result.runAt : undefined;
}

/** A refusal: nothing written, and its metric event (as refused) when the limit records them. */
function refused<Id>(retryAfter: number, event: DecisionEvent | undefined, shards: number[]): WaitOutcome<Id> {
  return event ? { result: { ok: false, retryAfter }, ops: [], event, shards } : { result: { ok: false, retryAfter }, ops: [], shards };
}

/**
 * A queued run as the component stores it (table `queuedRuns`): see the schema. `config` is the
 * config it was queued under, used to credit its tokens back on cancel when the caller doesn't
 * give the limit's current one (a name given inline).
 */
export const queuedRunFields = {
  name: v.string(),
  key: v.optional(v.string()),
  count: v.number(),
  tier: v.optional(v.string()),
  shards: v.array(v.number()),
  runAt: v.number(),
  config: configArgValidator,
  job: v.optional(v.id("_scheduled_functions")),
};
