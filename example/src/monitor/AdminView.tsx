// The Monitor's admin view: one of the app's limits at a time, its keys a page at a time (each with
// its tokens now and when it is full again, and a mark on a key blocked now), its overrides a page at a time (a key's, a
// network's or a tier's terms, a block until an instant, or a network's allow) with a form to
// block a key or a network for some minutes, or allow a network, and a button to remove each,
// and, for limits with metrics, a chart of the requests admitted, reserved and
// refused per minute with the keys refused most. It shows what the app's admin queries
// (example/convex/admin.ts) return and calls its admin mutations through `onBlock`/`onRemove`;
// LiveAdmin and OfflineAdmin fetch it and run them.
import type { KeyStatus, MetricsResult, OverrideRecord, OverrideTarget } from "convex-rate-limiter";
import { isInvalidRateLimitError } from "convex-rate-limiter";
import { ConvexError } from "convex/values";
import { useState, type FormEvent, type ReactNode } from "react";
import {
  blockRequest,
  blocksInForce,
  heatLine,
  keyCells,
  minuteSeries,
  overrideCells,
  utcLabel,
  type BlockForm,
  type BlockRequest,
} from "./admin.js";
import { MetricsChart } from "./MetricsChart.js";
import "./admin.css";

/** Where a paginated listing stands, as `usePaginatedQuery` reports it. */
export type PageStatus = "LoadingFirstPage" | "CanLoadMore" | "LoadingMore" | "Exhausted";

/** A paginated listing: what `usePaginatedQuery` returns, or an offline stand-in. */
export type Pages<T> = { results: readonly T[]; status: PageStatus; loadMore: (numItems: number) => void };

/** A paginated listing of keys. */
export type KeyPages = Pages<KeyStatus>;

/** A paginated listing of overrides. */
export type OverridePages = Pages<OverrideRecord>;

/** The arguments of `admin.setRateLimitOverride` for a block the form asks for. */
export type BlockArgs = Extract<BlockRequest, { ok: true }>["args"];

/** How many rows each further page asks for. */
export const PAGE_SIZE = 3;

export type AdminViewProps = {
  /** The limits to choose from: the app's named limits, and whether each records metrics. */
  limits: readonly { name: string; metrics: boolean }[];
  name: string;
  onName: (name: string) => void;
  keys: KeyPages;
  /** The limit's overrides and blocks: keys' first, then tiers'. */
  overrides: OverridePages;
  /** The instant (ms) blocks are measured from: whether one is in force, and where a new one ends. */
  now: number;
  /** Puts a block in force (`admin.setRateLimitOverride`); rejects with the server's error. */
  onBlock: (args: BlockArgs) => Promise<void>;
  /** Removes an override (`admin.removeRateLimitOverride`); rejects with the server's error. */
  onRemove: (args: { name: string; target: OverrideTarget }) => Promise<void>;
  /** The limit's metrics over the chart's span; undefined while loading or without metrics. */
  metrics: MetricsResult | undefined;
  /** Shown under the heading: where the data comes from, and any controls. */
  children?: ReactNode;
};

/** AdminView renders the admin panel for the limit `name`. */
export function AdminView({ limits, name, onName, keys, overrides, now, onBlock, onRemove, metrics, children }: AdminViewProps) {
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
          <KeyTable keys={keys} blocks={blocksInForce(overrides.results, now)} now={now} />
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
      <h3>Overrides</h3>
      <Overrides key={name} name={name} overrides={overrides} now={now} onBlock={onBlock} onRemove={onRemove} />
    </section>
  );
}

/** Loads the next page of a listing, as long as there is one. */
function LoadMore({ pages, what }: { pages: Pages<unknown>; what: string }) {
  if (pages.status !== "CanLoadMore" && pages.status !== "LoadingMore") return null;
  return (
    <button type="button" className="secondary" onClick={() => pages.loadMore(PAGE_SIZE)} disabled={pages.status === "LoadingMore"}>
      {pages.status === "LoadingMore" ? "Loading…" : `Load more ${what}`}
    </button>
  );
}

/** The keys' table; `blocks` (from the overrides listed) marks each key blocked at `now`. */
function KeyTable({ keys, blocks, now }: { keys: KeyPages; blocks: ReadonlyMap<string | undefined, number>; now: number }) {
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
              const until = blocks.get(k.key);
              const cells = keyCells(k, until === undefined ? undefined : { until, now });
              return (
                <tr key={cells.key} data-blocked={cells.blocked !== undefined}>
                  <td>
                    <code>{cells.key}</code>
                    {cells.blocked !== undefined && (
                      <>
                        {" "}
                        <span className="admin-blocked" data-testid="admin-key-blocked">
                          {cells.blocked}
                        </span>
                      </>
                    )}
                  </td>
                  <td>{cells.tokens}</td>
                  <td>{cells.full}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <LoadMore pages={keys} what="keys" />
    </>
  );
}

/** What the admin view says when a mutation failed: the server's reason, as readable as it comes. */
export function failure(error: unknown): string {
  if (isInvalidRateLimitError(error)) return error.data.message;
  if (error instanceof ConvexError && typeof error.data === "string") return error.data;
  return error instanceof Error ? error.message : String(error);
}

const EMPTY_BLOCK: BlockForm = { key: "", minutes: "5", note: "" };

type OverridesProps = Pick<AdminViewProps, "name" | "overrides" | "now" | "onBlock" | "onRemove">;

function Overrides({ name, overrides, now, onBlock, onRemove }: OverridesProps) {
  const [form, setForm] = useState<BlockForm>(EMPTY_BLOCK);
  /** What the last change said: done, or why not. */
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | undefined>(undefined);
  const [sending, setSending] = useState(false);

  const change = async (work: () => Promise<void>, done: string) => {
    setSending(true);
    try {
      await work();
      setOutcome({ ok: true, text: done });
      return true;
    } catch (error) {
      setOutcome({ ok: false, text: failure(error) });
      return false;
    } finally {
      setSending(false);
    }
  };
  const block = async (e: FormEvent) => {
    e.preventDefault();
    const request = blockRequest(name, form, now);
    if (!request.ok) {
      setOutcome({ ok: false, text: request.reason });
      return;
    }
    const { target, override } = request.args;
    const what = "network" in target ? `network ${target.network}` : target.key;
    const done = "allow" in override ? `Allowed ${what} of ${name}: never limited.` : `Blocked ${what} of ${name} until ${utcLabel(override.blockedUntil, now)}.`;
    // The form keeps what it blocks (a key or a network) for the next one.
    if (await change(() => onBlock(request.args), done)) setForm({ ...EMPTY_BLOCK, scope: form.scope ?? "key" });
  };
  const remove = (target: OverrideTarget, label: string) =>
    void change(() => onRemove({ name, target }), `Removed the override of ${label} of ${name}.`);

  return (
    <>
      {overrides.status === "LoadingFirstPage" ? (
        <p className="muted">Loading…</p>
      ) : overrides.results.length === 0 ? (
        <p className="muted" data-testid="admin-no-overrides">
          No overrides: every key and tier of <code>{name}</code> is under its named config.
        </p>
      ) : (
        // Five columns: on a phone each override is a card of its cells (admin.css), so nothing
        // scrolls sideways; the labels name the cells the hidden header would.
        <div className="admin-scroll">
          <table className="admin-keys admin-overrides" data-testid="admin-overrides">
            <thead>
              <tr>
                <th scope="col">target</th>
                <th scope="col">override</th>
                <th scope="col">note</th>
                <th scope="col">set at</th>
                <th scope="col">
                  <span className="visually-hidden">remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {overrides.results.map((r) => {
                const cells = overrideCells(r, now);
                const label = `${cells.scope} ${cells.target}`;
                return (
                  <tr key={cells.id} data-blocking={cells.blocking}>
                    <td>
                      <span className="muted">{cells.scope}</span> <code>{cells.target}</code>
                    </td>
                    <td>{cells.terms}</td>
                    <td data-label="note">{cells.note}</td>
                    <td data-label="set at">{cells.set}</td>
                    <td>
                      <button
                        type="button"
                        className="secondary"
                        onClick={() => remove(r.target, label)}
                        disabled={sending}
                        aria-label={`Remove the override of ${label}`}
                      >
                        Remove
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <LoadMore pages={overrides} what="overrides" />
      <form className="actions admin-block" aria-label="Block a key" onSubmit={(e) => void block(e)}>
        <label className="inline-field">
          <span>Block</span>
          <select
            value={form.scope ?? "key"}
            aria-label="What to block"
            onChange={(e) => setForm({ ...form, scope: e.target.value === "network" || e.target.value === "allow" ? e.target.value : "key" })}
            data-testid="admin-block-scope"
          >
            <option value="key">key</option>
            <option value="network">network (CIDR)</option>
            <option value="allow">allow a network (never limited)</option>
          </select>
          <input
            className="admin-block-key"
            value={form.key}
            aria-label={form.scope === "network" ? "Block network" : form.scope === "allow" ? "Allow network" : "Block key"}
            placeholder={form.scope === "network" || form.scope === "allow" ? "203.0.113.0/24" : "key-a"}
            autoComplete="off"
            onChange={(e) => setForm({ ...form, key: e.target.value })}
            data-testid="admin-block-key"
          />
        </label>
        <label className="inline-field">
          <span>for</span>
          <input
            type="number"
            min="0"
            step="any"
            value={form.minutes}
            // An allow-list entry lasts until removed.
            disabled={form.scope === "allow"}
            aria-label="Block for (minutes)"
            onChange={(e) => setForm({ ...form, minutes: e.target.value })}
            data-testid="admin-block-minutes"
          />
          <span>min</span>
        </label>
        <label className="inline-field">
          <span>Note</span>
          <input
            className="admin-block-note"
            value={form.note}
            autoComplete="off"
            onChange={(e) => setForm({ ...form, note: e.target.value })}
            data-testid="admin-block-note"
          />
        </label>
        <button type="submit" disabled={sending}>
          {form.scope === "allow" ? "Allow" : "Block"}
        </button>
      </form>
      {outcome !== undefined && (
        <p role="status" className={outcome.ok ? "muted" : "form-error"} data-testid="admin-override-status">
          {outcome.text}
        </p>
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
        {metrics.unfolded > 0 ? ` (${metrics.unfolded} not folded yet)` : ""}; <strong>{total.overridden}</strong> decided
        under an override, <strong>{total.blocked}</strong> refused by a block or lockout.
      </p>
      <MetricsChart series={minuteSeries(metrics)} />
      {metrics.heat !== undefined && (
        <p className={metrics.heat.hot ? "readout admin-hot" : "readout"} data-testid="admin-heat">
          {heatLine(metrics.heat)}
        </p>
      )}
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
