// The what-if simulation behind the offline Playground: requests at simulated instants, decided
// with the shared `calculateRateLimit` alone, as one row holding the whole limit. Pure: replaying
// the same requests under another config answers "what if the limit were…?".
import { calculateRateLimit, isInvalidRateLimitError, type RateLimitConfig } from "convex-rate-limiter";
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
  const cur = calculateRateLimit(state, config, t, 0);
  const unchanged = (outcome: Outcome) => ({
    decision: { request, outcome, before: cur.value, after: cur.value },
    next: state,
  });
  // As the server does: a count of 0 peeks (ok while nothing is owed); reserving may go into debt
  // down to -maxReserved; otherwise the tokens must be there now.
  const floor = reserve && count > 0 ? -(config.maxReserved ?? Infinity) : 0;
  const left = cur.value - count;
  if (left >= floor) {
    if (count === 0) return unchanged({ kind: "admitted" });
    const next = { value: left, ts: cur.ts };
    const outcome: Outcome =
      left >= 0 ? { kind: "admitted" } : { kind: "reserved", runAt: t + (calculateRateLimit(next, config, t, 0).retryAfter ?? 0) };
    return { decision: { request, outcome, before: cur.value, after: left }, next };
  }
  try {
    // Refused: wait until the value reaches `need`, the count less what may be reserved. A
    // negative need (already in debt) is the wait until the value shifted up by -need reaches 0.
    const need = count + floor;
    const retryAfter =
      need >= 0
        ? calculateRateLimit(state, config, t, need).retryAfter
        : calculateRateLimit({ value: cur.value - need, ts: cur.ts }, config, t, 0).retryAfter;
    return unchanged({ kind: "refused", retryAt: t + (retryAfter ?? 0) });
  } catch (error) {
    if (isInvalidRateLimitError(error)) return unchanged({ kind: "invalid", message: error.data.message });
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
