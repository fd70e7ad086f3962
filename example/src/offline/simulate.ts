// The what-if simulation behind the offline Playground: requests at simulated instants, decided
// with the shared `calculateRateLimit` alone, as one row holding the whole limit. Pure: replaying
// the same requests under another config answers "what if the limit were…?".
import { calculateRateLimit, decideRateLimit, isInvalidRateLimitError, type RateLimitConfig } from "convex-rate-limiter";
import type { RowState, Segment } from "../monitor/model.js";
import { wholeConfig } from "../playground/config.js";
import type { Outcome } from "../playground/decisions.js";

/** A request fired at simulated instant `t` (ms). */
export type SimRequest = { id: number; t: number; count: number; reserve: boolean };

/** One request and its decision; `before` and `after` are the tokens available around it. */
export type SimDecision = { request: SimRequest; outcome: Outcome; before: number; after: number };

/** The decisions, and the states the row went through (for the chart). */
export type Simulation = { decisions: SimDecision[]; segments: Segment[] };

/** Decides one request against `state` at its instant; returns the decision and the new state. */
function decide(
  config: RateLimitConfig,
  state: RowState | null,
  request: SimRequest,
): { decision: SimDecision; next: RowState | null } {
  const { t, count, reserve } = request;
  const before = calculateRateLimit(state, config, t, 0).value;
  try {
    // The library's own request-level decision: what the server decides for one row.
    const d = decideRateLimit(state, config, { now: t, count, reserve });
    if (!d.ok) {
      return { decision: { request, outcome: { kind: "refused", retryAt: t + d.retryAfter }, before, after: before }, next: state };
    }
    const outcome: Outcome = d.retryAfter === undefined ? { kind: "admitted" } : { kind: "reserved", runAt: t + d.retryAfter };
    const next = count === 0 ? state : { value: d.value, ts: d.ts };
    return { decision: { request, outcome, before, after: d.value }, next };
  } catch (error) {
    if (isInvalidRateLimitError(error)) {
      return { decision: { request, outcome: { kind: "invalid", message: error.data.message }, before, after: before }, next: state };
    }
    throw error;
  }
}

/**
 * Replays `requests` (in order of time) against a fresh limit. A sharded config is simulated as
 * its whole: shards change which rows hold the tokens, not how many there are, though on a server
 * a request reading two low shards can be refused a little before the whole runs out.
 */
export function simulate(config: RateLimitConfig, requests: readonly SimRequest[]): Simulation {
  const whole = wholeConfig(config);
  let state: RowState | null = null;
  const decisions: SimDecision[] = [];
  const segments: Segment[] = [];
  for (const request of requests) {
    const { decision, next } = decide(whole, state, request);
    decisions.push(decision);
    if (next !== state) segments.push({ from: request.t, state: next });
    state = next;
  }
  return { decisions, segments };
}
