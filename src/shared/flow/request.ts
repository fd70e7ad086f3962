// Deciding one request: which shards to read, the result, and the exact writes that apply it.
import { evaluate, exactWait, paramsOf, startOf, windowIndex } from "../kinds/algebra.js";
import { calendarIn } from "../shards/layout.js";
import { shedPlan } from "../shards/overload.js";
import { planRequest, type Plan } from "../shards/plan.js";
import type { KeyFlow, RowOp } from "../shapes/rows.js";
import { blockedWait, inForce, type InForce } from "../overrides/overrides.js";
import type { Override } from "../shapes/override-validators.js";
import { validateCount, validateCountValue, validateNameAndKey, validateTier, validateWaitConfig } from "../validation/validate.js";
import { checkConfig } from "../validation/validate-config.js";
import { outcomeOf, type DecisionEvent } from "../metrics/metrics.js";
import { isAsync, recordsMetrics, type DecidedBy, type RateLimitArgs, type RateLimitConfig, type RateLimitDetails, type RateLimitError, type RateLimitResult, type RateLimitReturns } from "../shapes/validators.js";
import { migrated, newView, readOf, shardOf, type View } from "./view.js";
import { opsOf } from "./writes.js";
import { fullAfter, scaledTotal } from "./details.js";
import { math } from "../core/math.js";

/**
 * How a call that is rate limited throws (`throws: true`, and the work can't run now): the
 * `RateLimited` error's data, and whether the component returns it for the caller to throw
 * (`inCaller`) instead of throwing it itself. A throw inside the component rolls back everything
 * the component wrote in that call; returned, it keeps the call's metric event when the caller
 * catches the error. So when the caller says it throws a returned error (`raiseInCaller`), a
 * refusal that records a metric event (and writes nothing else) is thrown by the caller; anything
 * that took tokens (a reservation) is thrown by the component.
 */
export type Raise<E> = { error: E; inCaller: boolean };

/**
 * What a decision does when executed: the result to return, the metric event to record with it,
 * and the error to throw.
 */
export type Executed = {
  result: RateLimitResult;
  /** The metric event to record with it, if the limit records metrics (a peek records none). */
  event?: DecisionEvent;
  /** Set when the call throws `RateLimited`; see {@link Raise}. */
  raise?: Raise<RateLimitError>;
};

/**
 * What a request's flow decided, executed as it stands by the component: the result to return,
 * the exact writes that apply it, the metric event to record, the error to throw, and, for an
 * asynchronous limit decided on a stale snapshot, whether it stands there and the refusal it may
 * shed instead (`staleVerdict` in overload.ts picks, given the snapshot's lag).
 */
export type RequestOutcome<Id> = Executed & {
  plan: Plan;
  /** The writes that apply the decision; none when it throws. */
  ops: RowOp<Id>[];
  /**
   * Whether the decision may stand on a stale snapshot (asynchronous mode): it admits, and every
   * shard it used keeps at least {@link ASYNC_MARGIN} of its capacity, a margin for consumption
   * the snapshot may not show yet.
   */
  safeOnStale: boolean;
  /**
   * Asynchronous mode: the refusal to execute instead when the decision doesn't stand on a stale
   * snapshot but others are taking from the key (see `shedPlan`); unset when it must then be
   * decided again on the current state.
   */
  shed?: Executed;
  /** Set when a dry-run limit would have refused or made the work wait: that wait (ms). */
  wouldRefuse?: { retryAfter: number };
};

/**
 * ASYNC_MARGIN is the fraction of each shard's capacity that a decision on a stale snapshot must
 * leave untouched (asynchronous mode): takes committed after the snapshot, which it can't see, are
 * covered by it. Closer to the limit than that, the decision is made again on the current state,
 * exactly. See docs/hot-limits.md, "Asynchronous mode", for the bound it gives.
 */
export const ASYNC_MARGIN = 0.25;


/** Whether `plan` admits and leaves every shard it used at least {@link ASYNC_MARGIN} of its capacity. */
function keepsMargin<Id>(view: View<Id>, plan: Plan): boolean {
  if (!plan.ok) return false;
  return plan.shards.every((shard) => {
    const read = readOf(view, shard);
    const after = plan.writes.find((w) => w.shard === shard)?.state.value ?? evaluate(read.state, read.p, view.now).value;
    return after >= ASYNC_MARGIN * read.p.capacity;
  });
}

/** The result a plan returns to the caller: exactly `@convex-dev/rate-limiter`'s shape. */
export function resultOf(plan: Plan): RateLimitReturns {
  return plan.ok
    ? plan.retryAfter === undefined
      ? { ok: true }
      : { ok: true, retryAfter: plan.retryAfter }
    : { ok: false, retryAfter: plan.retryAfter };
}


/**
 * The details of a decision (see `rateLimitDetails`): the shards it used, and the tokens left and
 * the wait until full over the shards the view read, scaled to the whole limit unless it read
 * every shard.
 */
function detailsOf<Id>(view: View<Id>, plan: Plan): RateLimitDetails {
  const reads = view.migration
    ? view.migration.states.map((_, shard) => migrated(view, shard).read)
    : [...view.rows.values()].map((r) => r.read);
  const after = reads.map((r) => ({
    p: r.p,
    state: plan.writes.find((w) => w.shard === r.shard)?.state ?? evaluate(r.state, r.p, view.now),
  }));
  const sum = after.reduce((total, a) => total + a.state.value, 0);
  const readCapacity = after.reduce((total, a) => total + a.p.capacity, 0);
  const capacity = view.config.capacity ?? view.config.rate;
  const exact = reads.length === view.n;
  const details: RateLimitDetails = {
    shards: plan.shards,
    remaining: scaledTotal(sum, readCapacity, capacity, exact),
    capacity,
    resetAfter: math.max(0, ...after.map((a) => fullAfter(a.state, a.p, view.now))),
    exact,
  };
  if (view.overridden) details.config = view.config;
  return details;
}

/**
 * resetsAtOf returns a calendar quota's `resetsAt` (undefined for every other kind): the instant
 * (UTC ms) the period the shards read stand in ends, the latest of them (a row carried over from
 * other terms may stand in a later period), when they hold their whole allowance again.
 */
export function resetsAtOf<Id>(view: View<Id>): number | undefined {
  if (calendarIn(view.config) === undefined) return undefined;
  const reads = view.migration
    ? view.migration.states.map((_, shard) => migrated(view, shard).read)
    : [...view.rows.values()].map((r) => r.read);
  // No shard read (a request refused before reading): the period containing now.
  if (reads.length === 0) {
    const p = paramsOf(view.config, 0);
    return startOf(windowIndex(view.now, p) + 1, p);
  }
  return math.max(...reads.map((r) => startOf(windowIndex(evaluate(r.state, r.p, view.now).ts, r.p) + 1, r.p)));
}

/**
 * raiseOf returns how a call throws `RateLimited` (see {@link Raise}), or undefined when it
 * doesn't: only when `throws` asks for it and the work can't run now (refused, or with `reserve`
 * reserved for later), so "no throw" means "run now". `writes` says whether the decision takes
 * tokens, `event` whether it records a metric event.
 */
export function raiseOf(
  args: Pick<RateLimitArgs, "name" | "throws" | "raiseInCaller">,
  result: RateLimitReturns,
  writes: boolean,
  event: boolean,
): Raise<RateLimitError> | undefined {
  if (!args.throws || result.retryAfter === undefined) return undefined;
  return { error: { kind: "RateLimited", name: args.name, retryAfter: result.retryAfter }, inCaller: args.raiseInCaller === true && event && !writes && !result.ok };
}

/**
 * The metric event a limit records for a decision (`metrics: true`; a peek records none), with
 * the override whose config decided it (`by`), and whether a block or lockout refused it.
 */
export function eventOf(
  config: RateLimitConfig,
  count: number,
  decided: Pick<Plan, "ok" | "retryAfter">,
  by: DecidedBy,
  blocked: boolean,
): DecisionEvent | undefined {
  if (!(recordsMetrics(config) && count > 0)) return undefined;
  const event: DecisionEvent = { outcome: outcomeOf(decided), count };
  if (by !== "config") event.by = by;
  if (blocked) event.blocked = true;
  return event;
}

/** The result, metric event and error of a shed refusal (a plan that writes nothing). */
function executedOf<Id>(args: RateLimitArgs, config: RateLimitConfig, plan: Plan, count: number, view: View<Id>, by: DecidedBy, blocked: boolean): Executed {
  const result: RateLimitResult = { ...resultOf(plan), ...(args.details ? { details: detailsOf(view, plan) } : {}) };
  const resetsAt = resetsAtOf(view);
  if (resetsAt !== undefined) result.resetsAt = resetsAt;
  const event = eventOf(config, count, plan, by, blocked);
  const raise = raiseOf(args, result, false, event !== undefined);
  return { result, ...(event ? { event } : {}), ...(raise ? { raise } : {}) };
}

/**
 * requestFlow decides a request at `now` and says exactly how to apply it. It validates first
 * (an `InvalidRateLimit` `ConvexError` before any read), then decides under what is in force for
 * the key (its own override, its tier's, or the named config; see `inForce`): it reads one shard
 * and a second only when the first can't serve comfortably (`planRequest`), and returns the whole
 * verdict (see {@link RequestOutcome}). `lib.rateLimit` executes it; `lib.checkRateLimit` returns
 * its result.
 */
export function* requestFlow<Id>(args: RateLimitArgs, now: number, random: () => number): KeyFlow<Id, RequestOutcome<Id>> {
  validateNameAndKey(args.name, args.key);
  checkConfig(args.config);
  if (args.tier !== undefined) validateTier(args.tier);
  validateCountValue(args.count ?? 1, args.name);
  return yield* inForce(args, now, random, (resolved, own, draw) => decideUnder<Id>(args, resolved, own, now, draw));
}

/**
 * Decides a request under what is in force for its key (see {@link requestFlow}). With `wait`
 * (`waitFlow` in wait.ts), it reserves a count a full limit admits at once, of a kind that can
 * wait, no earlier than `wait.notBefore` for an exact sliding window.
 */
export function* decideUnder<Id>(
  args: RateLimitArgs,
  resolved: InForce,
  own: Override | undefined,
  now: number,
  random: () => number,
  wait?: { notBefore?: number | undefined },
): KeyFlow<Id, RequestOutcome<Id>> {
  const { config } = resolved;
  // An override's config is checked as the named one was (the named config may have changed under it).
  if (resolved.by !== "config") checkConfig(config);
  const count = args.count ?? 1;
  const reserve = (args.reserve ?? false) || wait !== undefined;
  try {
    // Work that waits (`wait`) reserves, but only a count a full limit admits at once: the work
    // must run within the limit at its instant.
    if (wait) validateWaitConfig(config);
    validateCount(count, config, reserve && !wait);
  } catch (error) {
    // A count (or reservation) the config in force can't serve may be one the key's own override
    // can: look at the key's first row (which carries it, if any) before refusing. `inForce` runs
    // the flow again under the override it finds; without one, the error stands.
    if (own === undefined) yield { read: "any" };
    throw error;
  }
  const view = newView<Id>({ name: args.name, key: args.key, config }, now, own, resolved.by !== "config");
  const flow = planRequest(view.n, now, count, reserve, random, undefined, !isAsync(config), wait && math.max(now, wait.notBefore ?? now));
  let step = flow.next();
  while (!step.done) step = flow.next((yield* shardOf(view, step.value)).read);
  // A wait that can't be told to the ms is an error, except in a dry run, which admits whatever it would do.
  if (step.value.retryAfter !== undefined && config.dryRun !== true) exactWait(step.value.retryAfter, now, count, config);
  // A network's `{ allow: true }` admits, taking nothing, whatever the state or a lockout says.
  const plan = resolved.allow ? allowed(step.value) : barred(step.value, resolved, view, count);
  const blocked = plan !== step.value && !resolved.allow;
  // A dry run admits, now, what it would refuse or make wait (a refusal writes nothing), and says so.
  const shadow = config.dryRun === true && plan.retryAfter !== undefined;
  // Built field by field, not by spreading: this runs on every call.
  const result: RateLimitResult = shadow ? { ok: true } : resultOf(plan);
  if (args.details) result.details = detailsOf(view, plan);
  const resetsAt = resetsAtOf(view);
  if (resetsAt !== undefined) result.resetsAt = resetsAt;
  const event = eventOf(config, count, plan, resolved.by, blocked);
  // A block or lockout refuses writing nothing, not even a carry-over of rows of other terms.
  const ops = blocked || resolved.allow ? [] : opsOf(view, plan, count);
  const raise = raiseOf(args, result, ops.length > 0, event !== undefined);
  const outcome: RequestOutcome<Id> = { plan, result, ops: raise ? [] : ops, safeOnStale: isAsync(config) && keepsMargin(view, plan) };
  if (event) outcome.event = event;
  if (raise) outcome.raise = raise;
  // Asynchronous mode: the refusal a stale decision near the limit may shed instead (overload.ts).
  if (isAsync(config)) {
    const shed = shedPlan(plan, plan.shards.map((shard) => readOf(view, shard)), now, {
      count,
      reserve,
      dryRun: config.dryRun === true,
      busy: view.busy,
      shards: view.n,
      margin: ASYNC_MARGIN,
    });
    if (shed) outcome.shed = executedOf(args, config, shed, count, view, resolved.by, blocked);
  }
  if (shadow) outcome.wouldRefuse = { retryAfter: plan.retryAfter! };
  return outcome;
}

/** The plan of a request a network's `{ allow: true }` exempts: admitted now, writing nothing. */
function allowed(plan: Plan): Plan {
  return { ok: true, writes: [], shards: plan.shards };
}

/**
 * barred applies a block and a lockout to a plan. While the key is blocked (an override's
 * `blockedUntil`) or locked out (a row's `u`), the request is refused, writing nothing, until the
 * later of that instant and when the plan itself would succeed. Otherwise, with `lockout`, a plan
 * that takes the key's last whole token (leaving it less than one) locks the key out for
 * `lockout` ms from now: the lock is written with the take, so it commits with the admission (a
 * refusal's write would be rolled back by a mutation that throws it).
 */
function barred<Id>(plan: Plan, resolved: InForce, view: View<Id>, count: number): Plan {
  const until = math.max(resolved.block?.until ?? -Infinity, view.lockedUntil);
  const wait = blockedWait(until, view.now, plan.ok ? undefined : plan.retryAfter);
  if (wait !== undefined) return { ok: false, retryAfter: wait, writes: [], shards: plan.shards };
  const { lockout } = view.config;
  if (lockout !== undefined && plan.ok && count > 0 && plan.writes.some((w) => w.state.value < 1)) view.lockedUntil = view.now + lockout;
  return plan;
}
