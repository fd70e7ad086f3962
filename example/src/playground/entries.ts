// The Playground's record of requests and what the limiter answered, shared by the offline
// simulation and the live deployment, and the chart marks drawn for them. Pure.
import type { RateLimitReturns } from "convex-rate-limiter";
import { formatDuration, formatTokens } from "../monitor/format.js";
import type { Mark } from "../monitor/model.js";

/** What the limiter answered a request. Times are instants (ms) on the chart's clock. */
export type Outcome =
  | { kind: "admitted" }
  /** Reserved: the tokens are taken now; the work may run at `runAt`. */
  | { kind: "reserved"; runAt: number }
  /** Refused: the same request, with no other traffic, succeeds at `retryAt`. */
  | { kind: "refused"; retryAt: number }
  /** The request was an error (e.g. a count that can never succeed); nothing was taken. */
  | { kind: "invalid"; message: string };

/** One line of the log: request `id` at instant `t` (ms), and its outcome. */
export type Entry = {
  id: number;
  t: number;
  count: number;
  reserve: boolean;
  outcome: Outcome;
  /** Tokens available right after the decision, when known. */
  after: number | undefined;
  /** Whether the limit was spread over several shards when the request was decided. */
  sharded?: boolean;
  /** The shard rows the decision used, as the component reported them, when known. */
  shards?: readonly number[];
};

/**
 * The outcome a server's `limit` result stands for, for a request answered at instant `t`. Takes
 * `RateLimitReturns` or a looser `{ ok: boolean }` shape (a refusal then always has `retryAfter`).
 */
export function outcomeOf(result: RateLimitReturns | { ok: boolean; retryAfter?: number }, t: number): Outcome {
  if (!result.ok) return { kind: "refused", retryAt: t + (result.retryAfter ?? 0) };
  return result.retryAfter === undefined ? { kind: "admitted" } : { kind: "reserved", runAt: t + result.retryAfter };
}

/** Describes in words the outcome of a request made at instant `t` (ms). */
export function describe(outcome: Outcome, t: number): string {
  switch (outcome.kind) {
    case "admitted":
      return "admitted";
    case "reserved":
      return `reserved: runs in ${formatDuration(outcome.runAt - t)}`;
    case "refused":
      return `refused: retry in ${formatDuration(outcome.retryAt - t)}`;
    case "invalid":
      return `error: ${outcome.message}`;
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(never)}`);
    }
  }
}

/** Names the shards a decision used: "3", "1 and 4", or "all 5 (0–4)" when it read them all. */
export function describeShards(shards: readonly number[]): string {
  if (shards.length <= 2) return shards.join(" and ");
  const sorted = [...shards].sort((a, b) => a - b);
  return `${shards.length}: ${sorted.join(", ")}`;
}

/** The chart marks for log entries (errors took nothing and are not drawn). */
export function marksOf(entries: readonly Entry[], origin: number): Mark[] {
  const marks: Mark[] = [];
  for (const e of entries) {
    if (e.outcome.kind === "invalid") continue;
    const shards = e.sharded && e.shards !== undefined ? `, shards ${describeShards(e.shards)}` : "";
    marks.push({
      id: e.id,
      t: e.t,
      outcome: e.outcome.kind,
      v: e.after,
      label: `#${e.id} at ${formatDuration(e.t - origin)}, count ${formatTokens(e.count)}: ${describe(e.outcome, e.t)}${shards}`,
    });
  }
  return marks;
}
