// The Monitor's admin view without a deployment: the example app's own admin queries
// (admin.listRateLimitKeys, admin.listRateLimitOverrides, admin.rateLimitMetrics) and mutations
// (admin.setRateLimitOverride, admin.removeRateLimitOverride) run in the page on convex-test,
// signed in as the offline admin (deployment.ts), on a simulated clock that moves when asked to,
// and a ms when the deployment's commits put its own clock ahead (three calls in one ms), as a
// deployment's does; a block's minutes run on that clock. Traffic
// takes from the app's own limits, one transaction per request: `apiKeyRequests` per API key, as
// its HTTP API does (http.ts; `t.fetch` would let the page run mid-call while reading the body),
// and `llmTokens` reservations, as llm.request does; waiting runs the cron's metrics fold.
// First: deployment.ts prepares the page (runtime.ts) before any module defining functions loads.
import { Deployment, nowOf, OFFLINE_ADMIN, type Test } from "./deployment.js";
import type { MetricsResult } from "convex-rate-limiter";
import type { PaginationResult } from "convex/server";
import { useCallback, useEffect, useMemo, useState } from "react";
import { api, internal } from "../../convex/_generated/api.js";
import { rateLimiter } from "../../convex/limits.js";
import { adminLimits, chartSpan } from "../monitor/admin.js";
import { AdminView, PAGE_SIZE, type Pages } from "../monitor/AdminView.js";
import { formatDuration } from "../monitor/format.js";

/** The simulated clock's start: 2025-01-01 09:00 UTC. */
const START = Date.UTC(2025, 0, 1, 9);
/** The API keys traffic can come from. */
const API_KEYS = ["key-a", "key-b", "key-c", "key-d"] as const;
/** The limit the API buttons take from: the view opens on it, so their first click shows. */
const API_LIMIT = "apiKeyRequests";
/** The limit "Reserve LLM tokens" takes from. */
const LLM_LIMIT = "llmTokens";
/** Tokens one LLM request reserves. */
const LLM_TOKENS = 30_000;
/** Minutes the chart shows. */
const MINUTES = 10;

/**
 * useOfflinePages pages through a listing as `usePaginatedQuery` does: the first page of
 * `PAGE_SIZE`, one more per `loadMore`, every page loaded asked again whenever `fetchPage` changes
 * (new traffic, or the clock moved), so the results stay current.
 */
function useOfflinePages<T>(fetchPage: ((cursor: string | null, numItems: number) => Promise<PaginationResult<T>>) | undefined): Pages<T> {
  const [pages, setPages] = useState(1);
  const [state, setState] = useState<{ results: T[]; done: boolean } | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  useEffect(() => setPages(1), [fetchPage === undefined]);
  useEffect(() => {
    if (fetchPage === undefined) return;
    let current = true;
    setLoading(true);
    void (async () => {
      const results: T[] = [];
      let cursor: string | null = null;
      let done = false;
      for (let i = 0; i < pages && !done; i++) {
        const page: PaginationResult<T> = await fetchPage(cursor, PAGE_SIZE);
        results.push(...page.page);
        done = page.isDone;
        cursor = page.continueCursor;
      }
      if (!current) return;
      setState({ results, done });
      setLoading(false);
    })();
    return () => {
      current = false;
    };
  }, [fetchPage, pages]);
  return {
    results: state?.results ?? [],
    status: state === undefined ? "LoadingFirstPage" : loading && state.results.length > 0 ? "LoadingMore" : state.done ? "Exhausted" : "CanLoadMore",
    loadMore: () => setPages((n) => n + 1),
  };
}

export function OfflineAdmin() {
  const limits = useMemo(() => adminLimits(rateLimiter.limits ?? {}), []);
  const [name, setName] = useState(API_LIMIT);
  const [app, setApp] = useState<Deployment | undefined>(undefined);
  const [clock, setClock] = useState(START);
  /** Bumped after traffic, so every reading is asked again. */
  const [version, setVersion] = useState(0);
  const [busy, setBusy] = useState(0);
  const [apiKey, setApiKey] = useState<string>(API_KEYS[0]);
  const [metrics, setMetrics] = useState<MetricsResult | undefined>(undefined);
  const withMetrics = limits.find((l) => l.name === name)?.metrics ?? false;

  useEffect(() => {
    let current = true;
    void Deployment.open().then((opened) => {
      if (current) setApp(opened);
    });
    return () => {
      current = false;
    };
  }, []);

  const asAdmin = (t: Test) => t.withIdentity(OFFLINE_ADMIN);
  const fetchPage = useMemo(
    () =>
      app === undefined
        ? undefined
        : (cursor: string | null, numItems: number) =>
            app.call(clock, (t) => asAdmin(t).query(api.admin.listRateLimitKeys, { name, paginationOpts: { numItems, cursor } })),
    // `version` is a dependency only to ask again after traffic at the same instant.
    [app, clock, name, version],
  );
  const keys = useOfflinePages(fetchPage);
  const fetchOverrides = useMemo(
    () =>
      app === undefined
        ? undefined
        : (cursor: string | null, numItems: number) =>
            app.call(clock, (t) => asAdmin(t).query(api.admin.listRateLimitOverrides, { name, paginationOpts: { numItems, cursor } })),
    [app, clock, name, version],
  );
  const overrides = useOfflinePages(fetchOverrides);

  useEffect(() => {
    if (app === undefined || !withMetrics) return;
    let current = true;
    const span = chartSpan(clock, MINUTES);
    void app
      .call(clock, (t) => asAdmin(t).query(api.admin.rateLimitMetrics, { name, ...span, topKeys: 5 }))
      .then((m) => {
        if (current) setMetrics(m);
      });
    return () => {
      current = false;
    };
  }, [app, clock, name, version, withMetrics]);

  /**
   * Moves the clock to the deployment's after traffic: its commits may have put it a ms ahead
   * (three calls in one ms), and every reading is then taken there.
   */
  const catchUp = useCallback(async () => {
    if (app === undefined) return;
    const now = await nowOf(app, clock);
    setClock((c) => Math.max(c, now));
  }, [app, clock]);
  /** Runs `work` at the simulated instant, then asks every reading again. */
  const run = useCallback(
    (work: (t: Test) => Promise<unknown>) => {
      if (app === undefined) return;
      setBusy((n) => n + 1);
      void app
        .call(clock, work)
        .catch((e: unknown) => console.warn(e))
        .then(catchUp)
        .finally(() => {
          setBusy((n) => n - 1);
          setVersion((v) => v + 1);
        });
    },
    [app, clock, catchUp],
  );
  /** Runs an admin mutation at the simulated instant; rejects with its error, for the view to show. */
  const change = async (work: (t: Test) => Promise<unknown>) => {
    if (app === undefined) throw new Error("the in-browser deployment is still starting");
    setBusy((n) => n + 1);
    try {
      await app.call(clock, work);
    } finally {
      await catchUp();
      setBusy((n) => n - 1);
      setVersion((v) => v + 1);
    }
  };
  /** Shows limit `n` (its metrics asked again). */
  const show = (n: string) => {
    if (n === name) return;
    setName(n);
    setMetrics(undefined);
  };
  // Each traffic button shows the limit it takes from, so a click is seen where it lands.
  const callApi = (n: number) => {
    show(API_LIMIT);
    run(async (t) => {
      for (let i = 0; i < n; i++) await t.mutation((ctx) => rateLimiter.limit(ctx, API_LIMIT, { key: apiKey }));
    });
  };
  const reserveLlm = () => {
    show(LLM_LIMIT);
    run((t) => t.mutation((ctx) => rateLimiter.limit(ctx, LLM_LIMIT, { count: LLM_TOKENS, reserve: true })));
  };
  const wait = (ms: number) => {
    if (app === undefined) return;
    const at = clock + ms;
    setBusy((n) => n + 1);
    // The cron folds the metrics every minute; here, once at the new instant.
    void app
      .call(at, (t) => t.mutation(internal.admin.foldRateLimitMetrics, {}))
      .finally(() => {
        setBusy((n) => n - 1);
        setClock(at);
      });
  };

  const ready = app !== undefined;
  return (
    <AdminView
      limits={limits}
      name={name}
      onName={show}
      keys={keys}
      overrides={overrides}
      now={clock}
      onBlock={(args) => change((t) => asAdmin(t).mutation(api.admin.setRateLimitOverride, args))}
      onRemove={(args) => change((t) => asAdmin(t).mutation(api.admin.removeRateLimitOverride, args))}
      metrics={withMetrics ? metrics : undefined}
    >
      <p className="panel-note">
        The app&apos;s admin queries in <code>admin.ts</code>, run in your browser and signed in as{" "}
        <code>{OFFLINE_ADMIN.email}</code>, on a simulated clock. Traffic takes from the app&apos;s own limits, each
        button showing the one it takes from: its HTTP API&apos;s <code>apiKeyRequests</code> (5 a minute per key)
        and its <code>llmTokens</code> budget; waiting runs the cron&apos;s metrics fold. A block lasts its minutes
        on the simulated clock.
      </p>
      <div className="actions" role="group" aria-label="Admin traffic">
        <label className="inline-field">
          <span>API key</span>
          <select value={apiKey} onChange={(e) => setApiKey(e.target.value)} data-testid="admin-api-key">
            {API_KEYS.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => callApi(1)} disabled={!ready}>
          Call the API
        </button>
        <button type="button" onClick={() => callApi(3)} disabled={!ready}>
          Call it 3 times
        </button>
        <button type="button" onClick={reserveLlm} disabled={!ready}>
          Reserve {LLM_TOKENS.toLocaleString("en-US")} LLM tokens
        </button>
        <button type="button" className="secondary" onClick={() => wait(30_000)} disabled={!ready}>
          Wait 30 s
        </button>
        <button type="button" className="secondary" onClick={() => wait(60_000)} disabled={!ready}>
          Wait 1 min
        </button>
      </div>
      <p className="admin-clock" data-busy={busy > 0 || !ready} data-testid="admin-clock">
        Simulated clock: <output>{new Date(clock).toISOString().slice(11, 19)} UTC</output> ({formatDuration(clock - START)} in)
        {!ready && <span className="muted"> (starting the in-browser deployment…)</span>}
      </p>
    </AdminView>
  );
}
