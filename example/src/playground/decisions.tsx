// The Playground's log of decisions, shared by the offline simulation and the live deployment.
import { formatDuration, formatTokens } from "../monitor/format.js";
import { describe, describeShards, type Entry } from "./entries.js";

export { describe, marksOf, outcomeOf, type Entry, type Outcome } from "./entries.js";

/**
 * DecisionLog lists the requests fired, newest first, with what the limiter decided, and, when the
 * limit is sharded, the shards each decision used.
 */
export function DecisionLog({ entries, origin }: { entries: readonly Entry[]; origin: number }) {
  const admitted = entries.filter((e) => e.outcome.kind === "admitted" || e.outcome.kind === "reserved").length;
  const refused = entries.filter((e) => e.outcome.kind === "refused").length;
  const showShards = entries.some((e) => e.sharded === true && e.shards !== undefined);
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
                {showShards && <th scope="col">shards</th>}
                <th scope="col">tokens after</th>
              </tr>
            </thead>
            <tbody>
              {[...entries].reverse().map((e) => (
                <tr key={e.id} data-outcome={e.outcome.kind} className={`outcome-${e.outcome.kind}`}>
                  <td>{e.id}</td>
                  <td>{formatDuration(e.t - origin)}</td>
                  <td>
                    {formatTokens(e.count)}
                    {e.reserve ? " (reserve)" : ""}
                  </td>
                  <td className="decision">{describe(e.outcome, e.t)}</td>
                  {showShards && (
                    <td data-testid="decision-shards" data-shards={e.shards?.join(" ") ?? ""}>
                      {e.sharded === true && e.shards !== undefined ? describeShards(e.shards) : "–"}
                    </td>
                  )}
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
