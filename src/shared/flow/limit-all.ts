// `limitAll`: merging a call's requests by key, and combining their results into one answer.
import type { Raise, RequestOutcome } from "./request.js";
import type { DecisionEvent } from "../metrics/metrics.js";
import { keyIdOf, type RowOp } from "../shapes/rows.js";
import { invalid, validateCountValue } from "../validation/validate.js";
import { validateConfigShape } from "../validation/validate-config.js";
import type { LimitAllArgs, LimitAllResult } from "../shapes/limit-all-validators.js";
import type { RateLimitAllError, RateLimitArgs, RateLimitConfig, RateLimitResult } from "../shapes/validators.js";
import { math } from "../core/math.js";

/**
 * mergeRequests groups a `limitAll` call's requests by name and key: the same name and key twice is
 * one request with the counts summed (default 1 each), decided once. Returns the merged requests
 * and, for each original request, the index of its merged one. Two configs for the same name and
 * key are an `InvalidRateLimit` error (field `requests`): they can't both be the limit.
 */
export function mergeRequests(
  args: Pick<LimitAllArgs, "requests" | "reserve" | "details" | "ip">,
): { merged: RateLimitArgs[]; of: number[] } {
  const merged: RateLimitArgs[] = [];
  const byKey = new Map<string, number>();
  const of = args.requests.map((r) => {
    // Each count on its own, before any sum: a negative count is an error, not a credit.
    if (r.count !== undefined) validateCountValue(r.count, r.name);
    // Each config's own fields before configs are compared, so a field of another kind is named.
    validateConfigShape(r.config);
    const id = keyIdOf(r);
    const at = byKey.get(id);
    if (at === undefined) {
      byKey.set(id, merged.length);
      merged.push({
        name: r.name,
        ...(r.key === undefined ? {} : { key: r.key }),
        count: r.count ?? 1,
        ...(r.tier === undefined ? {} : { tier: r.tier }),
        config: r.config,
        ...(args.reserve === undefined ? {} : { reserve: args.reserve }),
        ...(args.details === undefined ? {} : { details: args.details }),
        ...(args.ip === undefined ? {} : { ip: args.ip }),
      });
      return merged.length - 1;
    }
    const into = merged[at]!;
    if (!sameConfig(into.config, r.config)) {
      throw invalid("requests", r.name, "names the same limit and key twice with different configs");
    }
    if (into.tier !== r.tier) throw invalid("requests", r.name, "names the same limit and key twice with different tiers");
    into.count = (into.count ?? 1) + (r.count ?? 1);
    return at;
  });
  return { merged, of };
}

/** Whether two configs are the same, field by field, whatever order their fields were written in. */
function sameConfig(a: RateLimitConfig, b: RateLimitConfig): boolean {
  const fields = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...fields].every((f) => (a as Record<string, unknown>)[f] === (b as Record<string, unknown>)[f]);
}

/**
 * combineResults decides a `limitAll` call from each merged request's own result: ok when all are
 * ok; when refused, `retryAfter` is the latest of the refusals' (each request's acceptance only
 * improves with time, so that is when all succeed together); when all are ok but some reserve,
 * the latest wait, when every reservation is repaid. `waiting` lists the merged requests that
 * refused (or, when ok, would make the work wait).
 */
export function combineResults(
  results: readonly RateLimitResult[],
  of: readonly number[],
): { result: LimitAllResult; waiting: number[] } {
  const ok = results.every((r) => r.ok);
  const waiting = results.flatMap((r, i) => ((ok ? r.retryAfter !== undefined : !r.ok) ? [i] : []));
  const retryAfter = waiting.length === 0 ? undefined : math.max(...waiting.map((i) => results[i]!.retryAfter!));
  const each = of.map((i) => results[i]!);
  const result: LimitAllResult = ok
    ? retryAfter === undefined
      ? { ok: true, results: each }
      : { ok: true, retryAfter, results: each }
    : { ok: false, retryAfter: retryAfter!, results: each };
  return { result, waiting };
}

/**
 * What a `limitAll` call decided, executed as it stands by the component: the result, each merged
 * request's writes (all of them when every limit admits, else none), the metric events to record
 * and the error to throw (see `Raise`).
 */
export type LimitAllOutcome<Id> = {
  result: LimitAllResult;
  writes: { request: RateLimitArgs; ops: RowOp<Id>[] }[];
  events: { request: RateLimitArgs; event: DecisionEvent }[];
  raise?: Raise<RateLimitAllError>;
  /** The merged requests a dry run would have refused or made wait, with that wait (ms). */
  wouldRefuse: { request: RateLimitArgs; retryAfter: number }[];
};

/**
 * limitAllOutcome decides a `limitAll` call from its merged requests' own outcomes (each decided
 * with `throws: false`; see `mergeRequests`). Takes all or nothing: the writes are every request's
 * when all admit, else none. Metrics: when all admit each limit records what it decided; otherwise
 * a limit that refused records a refusal and one that would have admitted records nothing, since
 * nothing was taken from it (as when an app skips a second limit after the first refuses). With
 * `throws`, a call that can't run now throws `RateLimited` naming every limit that refused (or, when
 * ok, would make the work wait).
 */
export function limitAllOutcome<Id>(
  args: Pick<LimitAllArgs, "throws" | "raiseInCaller">,
  merged: readonly RateLimitArgs[],
  outcomes: readonly RequestOutcome<Id>[],
  of: readonly number[],
): LimitAllOutcome<Id> {
  const { result, waiting } = combineResults(outcomes.map((o) => o.result), of);
  const writes = result.ok ? outcomes.map((o, i) => ({ request: merged[i]!, ops: o.ops })) : [];
  const events = outcomes.flatMap((o, i) =>
    o.event && (result.ok || !o.plan.ok) ? [{ request: merged[i]!, event: o.event }] : [],
  );
  const wouldRefuse = outcomes.flatMap((o, i) => (o.wouldRefuse ? [{ request: merged[i]!, ...o.wouldRefuse }] : []));
  if (!(args.throws && result.retryAfter !== undefined)) return { result, writes, events, wouldRefuse };
  const names = waiting.map((i) => merged[i]!.name);
  const error: RateLimitAllError = { kind: "RateLimited", name: names[0]!, retryAfter: result.retryAfter, names };
  const takes = writes.some((w) => w.ops.length > 0);
  // Thrown by the caller only when that keeps metric events and takes nothing (see `Raise`).
  return { result, writes: [], events, wouldRefuse, raise: { error, inCaller: args.raiseInCaller === true && events.length > 0 && !takes } };
}
