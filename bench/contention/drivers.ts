// The limiters under test as the engine drives them: ours (ours.ts) or upstream's (upstream.ts), in
// transactional or asynchronous mode (with its applier loop, applier.ts), and ours with
// `metrics: true` (metrics.ts). Each is a {@link Driver} over one store.
import type { RateLimitConfig } from "../../src/shared/shapes/validators.js";
import { MAX_STALENESS_MS } from "../../src/shared/shards/overload.js";
import { APPLY_BATCH } from "../../src/component/applier.js";
import { FOLD_BATCH, FOLD_SETTLE_MS } from "../../src/component/metrics.js";
import { applierLoop } from "./applier.js";
import type { Driver } from "./engine.js";
import { oursFold, withMetricEvent } from "./metrics.js";
import { oursApplyBatch, oursAsynchronous, oursTransactional, requestArgs } from "./ours.js";
import type { Store } from "./store.js";
import { upstreamApplyBatch, upstreamAsynchronous, upstreamConfig, upstreamTransactional } from "./upstream.js";

/** upstream's `worker.BATCH_SIZE`: the most pending updates its worker applies per batch. */
export const UPSTREAM_BATCH = 1024;
/** The limit's name: one global key, no key argument. */
const NAME = "global";

/**
 * driverOf is `impl`'s limit `config` over `store`, its decisions drawing from `decide`: a request's
 * attempt, and in asynchronous mode (`config.applyUpdates`) its applier.
 */
export function driverOf(impl: "ours" | "upstream", store: Store, config: RateLimitConfig, decide: () => number): Driver {
  const async = config.applyUpdates === "asynchronously";
  if (impl === "ours") {
    const args = requestArgs(NAME, config);
    return !async
      ? { request: (now) => oursTransactional(store, args, now, decide) }
      : {
          request: (now, lag) => oursAsynchronous(store, args, now, lag, MAX_STALENESS_MS, decide),
          applier: applierLoop(store, APPLY_BATCH, oursApplyBatch(store, { name: NAME, config })),
        };
  }
  const up = upstreamConfig(config);
  const args = { name: NAME, config: up, count: 1 };
  return !async
    ? { request: (now) => upstreamTransactional(store, args, now, decide) }
    : {
        request: (now, lag) => upstreamAsynchronous(store, args, now, lag, decide),
        applier: applierLoop(store, UPSTREAM_BATCH, upstreamApplyBatch(store, up)),
      };
}

/**
 * withMetrics is our `driver` with `metrics: true`: every request also inserts a metric event,
 * and the fold runs (each of its commits adds the events it folded to `folded`).
 */
export function withMetrics(driver: Driver, store: Store, folded: { events: number }): Driver {
  const request = driver.request;
  return {
    ...driver,
    request: async (now, lag) => withMetricEvent(await request(now, lag)),
    fold: (now) => oursFold(store, now, FOLD_BATCH, FOLD_SETTLE_MS, folded),
  };
}
