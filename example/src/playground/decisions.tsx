// The Playground's log of decisions, shared by the offline simulation and the live deployment.
import type { RateLimitReturns } from "convex-rate-limiter";
import { formatSeconds, formatTokens } from "../monitor/Chart.js";
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
      return `reserved: runs in ${formatSeconds(outcome.runAt - t)}`;
    case "refused":
      return `refused: retry in ${formatSeconds(outcome.retryAt - t)}`;
    case "invalid":
      return `error: ${outcome.message}`;
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(never)}`);
    }
  }
}

/** The chart marks for log entries (errors took nothing and are not drawn). */
export function marksOf(entries: readonly Entry[], origin: number): Mark[] {
  const marks: Mark[] = [];
  for (const e of entries) {
    if (e.outcome.kind === "invalid") continue;
    marks.push({
      id: e.id,
      t: e.t,
      outcome: e.outcome.kind,
      v: e.after,
      label: `#${e.id} at ${formatSeconds(e.t - origin)}, count ${formatTokens(e.count)}: ${describe(e.outcome, e.t)}`,
    });
  }
  return marks;
}

/** DecisionLog lists the requests fired, newest first, with what the limiter decided. */
export function DecisionLog({ entries, origin }: { entries: readonly Entry[]; origin: number }) {
  const admitted = entries.filter((e) => e.outcome.kind === "admitted" || e.outcome.kind === "reserved").length;
  const refused = entries.filter((e) => e.outcome.kind === "refused").length;
  return (
    <div className="log">
      <p className="log-summary" role="status" data-testid="decision-summary">
        {entries.length === 0
          ? "No requests yet."
          : `${entries.length} request${entries.length === 1 ? "" : "s"}: ${admitted} admitted or reserved, ${refused} refused.`}
      </p>
      {entries.length > 0 && (
        <div className="log-scroll">
          <table data-testid="decision-log">
            <caption className="visually-hidden">Decisions, newest first</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">time</th>
                <th scope="col">count</th>
                <th scope="col">decision</th>
                <th scope="col">tokens after</th>
              </tr>
            </thead>
            <tbody>
              {[...entries].reverse().map((e) => (
                <tr key={e.id} data-outcome={e.outcome.kind} className={`outcome-${e.outcome.kind}`}>
                  <td>{e.id}</td>
                  <td>{formatSeconds(e.t - origin)}</td>
                  <td>
                    {formatTokens(e.count)}
                    {e.reserve ? " (reserve)" : ""}
                  </td>
                  <td>{describe(e.outcome, e.t)}</td>
                  <td>{e.after === undefined ? "…" : formatTokens(e.after)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
