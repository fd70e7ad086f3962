// The Monitor's admin view against the deployment: the app's admin queries through
// `usePaginatedQuery` (admin.listRateLimitKeys, admin.listRateLimitOverrides) and `useQuery`
// (admin.rateLimitMetrics), and its override mutations through `useMutation`
// (admin.setRateLimitOverride, admin.removeRateLimitOverride); a block's minutes run from this
// browser's clock. They answer only a caller signed in with an admin email (admin.ts); anyone else
// sees why.
import { useMutation, usePaginatedQuery, useQuery } from "convex/react";
import { Component, useMemo, useState, type ReactNode } from "react";
import { api } from "../../convex/_generated/api.js";
import { rateLimiter } from "../../convex/limits.js";
import { adminLimits, chartSpan } from "../monitor/admin.js";
import { AdminView, PAGE_SIZE } from "../monitor/AdminView.js";
import { useNow } from "../useNow.js";

/** Minutes the chart shows. */
const MINUTES = 10;

/** Shows `fallback` instead of its children once they throw (a query refused, say). */
class Refused extends Component<{ children: ReactNode; fallback: (error: unknown) => ReactNode }, { error: unknown }> {
  override state = { error: undefined as unknown };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  override render() {
    return this.state.error === undefined ? this.props.children : this.props.fallback(this.state.error);
  }
}

function Live({ name, onName }: { name: string; onName: (name: string) => void }) {
  const limits = useMemo(() => adminLimits(rateLimiter.limits ?? {}), []);
  const withMetrics = limits.find((l) => l.name === name)?.metrics ?? false;
  // The span moves once a minute, so the query isn't asked again every second.
  const now = useNow(5000);
  const span = chartSpan(now, MINUTES);
  const keys = usePaginatedQuery(api.admin.listRateLimitKeys, { name }, { initialNumItems: PAGE_SIZE });
  const overrides = usePaginatedQuery(api.admin.listRateLimitOverrides, { name }, { initialNumItems: PAGE_SIZE });
  const metrics = useQuery(api.admin.rateLimitMetrics, withMetrics ? { name, ...span, topKeys: 5 } : "skip");
  const setOverride = useMutation(api.admin.setRateLimitOverride);
  const removeOverride = useMutation(api.admin.removeRateLimitOverride);
  return (
    <AdminView
      limits={limits}
      name={name}
      onName={onName}
      keys={keys}
      overrides={overrides}
      now={now}
      // The listing is reactive: it shows a change once the mutation is done, with nothing to refresh.
      onBlock={async (args) => {
        await setOverride(args);
      }}
      onRemove={async (args) => {
        await removeOverride(args);
      }}
      metrics={metrics}
    >
      <p className="panel-note">
        Live: the deployment&apos;s <code>admin.listRateLimitKeys</code>, <code>admin.listRateLimitOverrides</code>{" "}
        and <code>admin.rateLimitMetrics</code>, and its override mutations, for admins only; the metrics are folded by
        the app&apos;s cron every minute.
      </p>
    </AdminView>
  );
}

export function LiveAdmin() {
  const [name, setName] = useState(() => adminLimits(rateLimiter.limits ?? {})[0]?.name ?? "");
  return (
    <Refused
      key={name}
      fallback={(error) => (
        <section className="panel admin" aria-labelledby="admin-heading" data-testid="admin-view">
          <h2 id="admin-heading">Monitor: admin view</h2>
          <p className="panel-note" role="status">
            The admin queries refused: {error instanceof Error ? error.message : String(error)}. They answer only a
            caller signed in with one of <code>ADMIN_EMAILS</code> (example/convex/admin.ts); this example has no sign-in,
            so run it offline to see the view.
          </p>
        </section>
      )}
    >
      <Live name={name} onName={setName} />
    </Refused>
  );
}
