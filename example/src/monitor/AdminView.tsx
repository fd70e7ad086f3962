// The Monitor's admin view: one of the app's limits at a time, its keys a page at a time (each with
// its tokens now and when it is full again) and, for limits with metrics, a chart of the requests
// admitted, reserved and refused per minute with the keys refused most. It shows what the app's
// admin queries (example/convex/admin.ts) return; LiveAdmin and OfflineAdmin fetch it.
import type { KeyStatus, MetricsResult } from "convex-rate-limiter";
import type { ReactNode } from "react";
import { keyCells, minuteSeries } from "./admin.js";
import { MetricsChart } from "./MetricsChart.js";
import "./admin.css";

/** Where a paginated listing stands, as `usePaginatedQuery` reports it. */
export type PageStatus = "LoadingFirstPage" | "CanLoadMore" | "LoadingMore" | "Exhausted";

/** A paginated listing of keys: what `usePaginatedQuery` returns, or an offline stand-in. */
export type KeyPages = { results: readonly KeyStatus[]; status: PageStatus; loadMore: (numItems: number) => void };

/** How many rows each further page asks for. */
export const PAGE_SIZE = 3;

export type AdminViewProps = {
  /** The limits to choose from: the app's named limits, and whether each records metrics. */
  limits: readonly { name: string; metrics: boolean }[];
  name: string;
  onName: (name: string) => void;
  keys: KeyPages;
  /** The limit's metrics over the chart's span; undefined while loading or without metrics. */
  metrics: MetricsResult | undefined;
  /** Shown under the heading: where the data comes from, and any controls. */
  children?: ReactNode;
};

/** AdminView renders the admin panel for the limit `name`. */
export function AdminView({ limits, name, onName, keys, metrics, children }: AdminViewProps) {
  const withMetrics = limits.find((l) => l.name === name)?.metrics ?? false;
  return (
    <section className="panel admin" aria-labelledby="admin-heading" data-testid="admin-view">
      <h2 id="admin-heading">Monitor: admin view</h2>
      {children}
      <label className="inline-field admin-limit">
        <span>Limit</span>
        <select value={name} onChange={(e) => onName(e.target.value)} data-testid="admin-limit">
          {limits.map((l) => (
            <option key={l.name} value={l.name}>
              {l.name}
              {l.metrics ? " (metrics)" : ""}
            </option>
          ))}
        </select>
      </label>
      <div className="admin-grid">
        <div>
          <h3>Keys</h3>
          <KeyTable keys={keys} />
        </div>
        <div>
          <h3>Requests per minute</h3>
          {!withMetrics ? (
            <p className="muted">
              Metrics are off for <code>{name}</code>: give it <code>metrics: true</code> in limits.ts to chart it.
            </p>
          ) : metrics === undefined ? (
            <p className="muted">Loading…</p>
          ) : (
            <Metrics metrics={metrics} />
          )}
        </div>
      </div>
    </section>
  );
}

function KeyTable({ keys }: { keys: KeyPages }) {
  if (keys.status === "LoadingFirstPage") return <p className="muted">Loading…</p>;
  return (
    <>
      {keys.results.length === 0 ? (
        <p className="muted" data-testid="admin-no-keys">
          No key has state: every key is full.
        </p>
      ) : (
        <table className="admin-keys" data-testid="admin-keys">
          <thead>
            <tr>
              <th scope="col">key</th>
              <th scope="col">tokens now</th>
              <th scope="col">full again</th>
            </tr>
          </thead>
          <tbody>
            {keys.results.map((k) => {
              const cells = keyCells(k);
              return (
                <tr key={cells.key}>
                  <td>
                    <code>{cells.key}</code>
                  </td>
                  <td>{cells.tokens}</td>
                  <td>{cells.full}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {(keys.status === "CanLoadMore" || keys.status === "LoadingMore") && (
        <button type="button" className="secondary" onClick={() => keys.loadMore(PAGE_SIZE)} disabled={keys.status === "LoadingMore"}>
          {keys.status === "LoadingMore" ? "Loading…" : "Load more keys"}
        </button>
      )}
    </>
  );
}

function Metrics({ metrics }: { metrics: MetricsResult }) {
  const { total } = metrics;
  return (
    <>
      <p className="readout" data-testid="admin-totals">
        <strong>{total.admitted}</strong> admitted, <strong>{total.reserved}</strong> reserved,{" "}
        <strong>{total.refused}</strong> refused in the last {minuteSeries(metrics).length} minutes
        {metrics.unfolded > 0 ? ` (${metrics.unfolded} not folded yet)` : ""}.
      </p>
      <MetricsChart series={minuteSeries(metrics)} />
      {metrics.top.length > 0 && (
        <>
          <h4>Refused most</h4>
          <ol className="admin-top" data-testid="admin-top">
            {metrics.top.map((t) => (
              <li key={t.key ?? ""}>
                <code>{t.key ?? "(global)"}</code>: {t.refused} refused ({t.refusedTokens} {t.refusedTokens === 1 ? "token" : "tokens"})
              </li>
            ))}
          </ol>
        </>
      )}
    </>
  );
}
