// The React binding: `useRateLimit` watches a limit through the query `hookAPI` makes and predicts
// it locally with the same pure `calculateRateLimit` the server decides with, so a UI can show
// "send again in 12 s" and re-enable itself on time without polling.
import { useConvex, useQuery } from "convex/react";
import { getFunctionName, makeFunctionReference, type FunctionReference } from "convex/server";
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import { stateOf } from "../shared/kinds/algebra.js";
import { calculateRateLimit } from "../shared/kinds/predict.js";
import { predictAcquire } from "../shared/flow/concurrency.js";
import { blockedWait } from "../shared/overrides/overrides.js";
import { invalid } from "../shared/validation/validate.js";
import type { GetValueResult, HookQueryArgs, RateLimitConfig } from "../shared/shapes/validators.js";
import type { HookLeaseValue, LimitConfig } from "../shared/shapes/concurrency-validators.js";

/**
 * GetRateLimitValueQuery is the type of the public query `rateLimiter.hookAPI(...)` returns as
 * `getRateLimit`, once exported from a Convex module: pass `api.yourModule.getRateLimit`.
 * It takes the optional arguments the hook sends and returns one shard's `{ value, ts, shard,
 * config }` (plus `total`), as `RateLimiter.getValue` does; for a concurrency limit,
 * `{ inFlight, capacity, ts, earliestExpiry?, expiries, config }`.
 */
export type GetRateLimitValueQuery = FunctionReference<
  "query",
  "public",
  HookQueryArgs,
  GetValueResult | HookLeaseValue
>;

/**
 * GetServerTimeMutation is the type of the public mutation `rateLimiter.hookAPI(...)` returns as
 * `getServerTime`: no arguments, returns the server's `Date.now()` (ms). Pass
 * `api.yourModule.getServerTime` as `getServerTimeMutation` so the hook can measure the clock offset.
 */
export type GetServerTimeMutation = FunctionReference<
  "mutation",
  "public",
  Record<string, never>,
  number
>;

/** UseRateLimitOptions holds the options of {@link useRateLimit}. Every field is optional. */
export type UseRateLimitOptions = {
  /**
   * The key the client asks for. The server decides: `hookAPI` refuses a key unless it was given
   * a key function, which receives this value. Not sent when omitted.
   */
  key?: string;
  /**
   * How many tokens the action shown by `status` takes. Default 1. Use 0 to show whether the
   * limit is in debt (e.g. a reserve-only limit, whose capacity is 0). Must fit in the capacity
   * of one shard (the whole capacity when unsharded), or the hook throws; see {@link useRateLimit}.
   * For a concurrency limit: 1 (an acquire takes one slot) or 0 (always ok).
   */
  count?: number;
  /**
   * How many shard rows the query reads for a sharded limit; the emptiest is shown. Default: the
   * server's choice (`hookAPI`'s `sampleShards`, else every shard). Not sent when omitted.
   */
  sampleShards?: number;
  /**
   * The `getServerTime` mutation from `hookAPI`. With it the hook measures the offset between the
   * browser's clock and the server's once per mount, so `retryAt` is accurate to about half a round
   * trip. Without it (and until the measurement returns) the hook is conservative: see
   * {@link useRateLimit}. Recommended.
   */
  getServerTimeMutation?: GetServerTimeMutation;
  /**
   * Another limit's name: only for servers that opted in with `hookAPI(name, { allowClientConfig:
   * true })` (e.g. a playground); otherwise the query refuses it. Not sent when omitted.
   */
  name?: string;
  /**
   * A config to evaluate instead of the server's: only where `allowClientConfig` is set, as for
   * `name`. Not sent when omitted.
   */
  config?: RateLimitConfig;
};

/**
 * CheckResult is what `check` reports, in the browser's clock (ms). For a concurrency limit,
 * `value` is the free slots left after taking `count`, `ts` the instant asked about and `shard` 0.
 */
type CheckResult = {
  /** Tokens left after taking `count` at the given instant; negative means not there yet. */
  value: number;
  /** The shard's evaluation time (a token bucket) or window start (a fixed window), client ms. */
  ts: number;
  /** The shard's share of the config, as the server returned it. */
  config: LimitConfig;
  /** The shard the data describes. */
  shard: number;
  /** Whether `count` tokens are there at the given instant. */
  ok: boolean;
  /** When not `ok`: the client time (ms) from which `count` tokens are there with no other traffic. */
  retryAt: number | undefined;
};

/** Status is what `useRateLimit` reports: ok now, or refused until `retryAt` (client ms). */
type Status = { ok: true; retryAt?: undefined } | { ok: false; retryAt: number };

/** The longest delay `setTimeout` honours (2^31 - 1 ms, about 24.8 days); longer ones fire at once. */
const MAX_TIMEOUT = 2 ** 31 - 1;

/** A query result, and the browser's clock when this hook first rendered it. */
type Snapshot = { key: string; data: GetValueResult | HookLeaseValue; at: number };

/**
 * useRateLimit reports whether an action limited by a `RateLimiter` would be allowed now,
 * and from when it will be, without polling: it re-renders by itself at `retryAt`, however far
 * away that is.
 *
 * ```tsx
 * const { status } = useRateLimit(api.messages.getRateLimit, {
 *   getServerTimeMutation: api.messages.getServerTime,
 * });
 * const disabled = status?.ok !== true;
 * ```
 *
 * @param getRateLimitQuery The `getRateLimit` query from `rateLimiter.hookAPI(...)`.
 * @param options See {@link UseRateLimitOptions}; `count` defaults to 1.
 * @returns `status`: `undefined` while loading; `{ ok: true }` when `count` tokens are there now;
 * `{ ok: false, retryAt }` when they aren't, where `retryAt` is the browser-clock instant (ms since
 * the epoch) from which they are, if nothing else takes tokens meanwhile. `status` keeps its
 * identity across renders while it doesn't change, so it is safe as an effect dependency.
 * `check(ts?, count?)`: the prediction at client time `ts` (ms, default now) for `count` tokens
 * (default 0): `{ value, ts, config, shard, ok, retryAt }`, or `undefined` while loading.
 *
 * Clocks: `clientTime + offset = serverTime`. The offset is measured with
 * `getServerTimeMutation`, taking the server's answer as the time halfway through the round trip.
 * While it is unknown (no mutation given, not answered yet, or failed), the hook never runs ahead
 * of the server: it takes the server time to be the data's own `ts` plus the time elapsed on the
 * browser's clock since the data arrived. That is a lower bound (the query ran at or after `ts`),
 * so the hook may report a longer wait than the server would, never a shorter one, and it still
 * flips by itself when the wait is over. The bound is tight when `ts` is recent (a token bucket
 * row just written, or a missing one, whose `ts` is the query's time) and loose when it is old: a
 * row last written long ago, or a fixed window's `ts` (the start of its window), can make the wait
 * shown too long by up to that age. Pass `getServerTimeMutation` for accurate timing.
 *
 * Sharded limits: the query returns one shard (the emptiest of those read; `hookAPI` reads every shard by default), and the prediction is
 * that shard's. A `count` above one shard's capacity, or above the capacity of an unsharded limit,
 * can't be predicted (the server would combine two shards, or refuse the request as impossible), so
 * the hook throws an `InvalidRateLimit` `ConvexError` (field `count`) while rendering, as `useQuery`
 * throws a failing query's error: catch it with an error boundary. `check` throws the same way.
 *
 * Concurrency limits (`hookAPI` of a `kind: "concurrency"` name): `status` says whether an
 * `acquire` would get a slot now, else `retryAt`, when the earliest lease held expires (with more
 * than `capacity` held, the one that leaves a slot free), so a button can wait for a free slot.
 * The prediction is the server's own `decideAcquire` over the leases' expiries, on the server's
 * clock; a release frees a slot sooner, and the query's update then re-renders the hook.
 */
export function useRateLimit(
  getRateLimitQuery: GetRateLimitValueQuery,
  options: UseRateLimitOptions = {},
): {
  status: Status | undefined;
  check: (ts?: number, count?: number) => CheckResult | undefined;
} {
  const { key, count = 1, sampleShards, getServerTimeMutation, name, config } = options;
  const data = useQuery(getRateLimitQuery, {
    // Only what was given is sent: hookAPI refuses a key, name or config it didn't allow.
    ...(name === undefined ? {} : { name }),
    ...(key === undefined ? {} : { key }),
    ...(sampleShards === undefined ? {} : { sampleShards }),
    ...(config === undefined ? {} : { config }),
  });

  const measured = useServerOffset(getServerTimeMutation);

  // The first render of each distinct result records when it arrived. A ref, written during
  // render, because this same render needs it; writing is idempotent for a given result, and
  // keying on the content (not the object) keeps equal results from resetting the clock.
  const seen = useRef<Snapshot | undefined>(undefined);
  let snapshot: Snapshot | undefined;
  if (data !== undefined) {
    const dataKey = JSON.stringify(data);
    if (seen.current?.key !== dataKey) seen.current = { key: dataKey, data, at: Date.now() };
    snapshot = seen.current;
  }

  // Unknown offset: the server's clock is at least `ts` when the data arrived, and advances with ours.
  const offset = snapshot === undefined ? 0 : (measured ?? snapshot.data.ts - snapshot.at);

  const check = useCallback(
    (ts?: number, n: number = 0): CheckResult | undefined => {
      if (snapshot === undefined) return undefined;
      const { data } = snapshot;
      const clientTime = ts ?? Date.now();
      if (isLeaseValue(data)) {
        if (n !== 0 && n !== 1) throw invalid("count", n, "an acquire takes one slot of a concurrency limit: use 1 (or 0)");
        const p = predictAcquire(data.expiries, data.config, clientTime + offset, n);
        return {
          value: p.free - n,
          ts: clientTime,
          config: data.config,
          shard: 0,
          ok: p.ok,
          retryAt: p.ok ? undefined : clientTime + p.retryAfter,
        };
      }
      const rate = data;
      const capacity = rate.config.capacity ?? rate.config.rate;
      if (n > capacity) {
        const whole = rate.total?.capacity;
        throw invalid(
          "count",
          n,
          whole !== undefined && whole > capacity
            ? `useRateLimit predicts one shard, which holds at most ${capacity} of the limit's ${whole}; use a count ≤ ${capacity} or fewer shards`
            : `can never succeed: it exceeds the capacity (${capacity})`,
        );
      }
      const r = calculateRateLimit(stateOf(rate), rate.config, clientTime + offset, n);
      // A block or lockout the server reported refuses every request until it ends, whatever the
      // tokens: decided by the server's own rule (blockedWait).
      const tokens = r.value >= 0 ? undefined : r.retryAfter;
      const blocked = rate.blockedUntil === undefined ? undefined : blockedWait(rate.blockedUntil, clientTime + offset, tokens);
      const wait = blocked ?? tokens;
      return {
        value: r.value,
        ts: r.ts - offset,
        config: rate.config,
        shard: rate.shard,
        ok: r.value >= 0 && blocked === undefined,
        retryAt: wait === undefined ? undefined : clientTime + wait,
      };
    },
    [snapshot, offset],
  );

  const now = check(Date.now(), count);
  const loaded = now !== undefined;
  // `retryAt` is set exactly when not ok, so it alone says which status this is.
  const retryAt = now?.retryAt;
  const status = useMemo(
    (): Status | undefined => (!loaded ? undefined : retryAt === undefined ? { ok: true } : { ok: false, retryAt }),
    [loaded, retryAt],
  );

  useRenderAt(status?.retryAt);

  return useMemo(() => ({ status, check }), [status, check]);
}

/** Whether the hook query's result is a concurrency limit's. */
function isLeaseValue(data: GetValueResult | HookLeaseValue): data is HookLeaseValue {
  return data.config.kind === "concurrency";
}

/**
 * useServerOffset measures the offset between the browser's clock and the deployment's,
 * `serverTime - clientTime` (whole ms), once per client and mutation, calling `mutation` (the
 * `getServerTime` that `hookAPI` makes) and taking its answer as the time halfway through the
 * round trip. Returns `undefined` until measured, when `mutation` is undefined, or if the call
 * failed. `useRateLimit` uses it; use it directly to draw charts or countdowns in server time.
 */
export function useServerOffset(mutation: GetServerTimeMutation | undefined): number | undefined {
  const convex = useConvex();
  const [offset, setOffset] = useState<{ fn: string; value: number } | undefined>(undefined);
  // References from `api` are new objects on each access, so the effect depends on the name
  // and rebuilds the reference from it.
  const fn = mutation === undefined ? undefined : getFunctionName(mutation);
  useEffect(() => {
    if (fn === undefined || convex === undefined) return;
    let live = true;
    const sent = Date.now();
    const ref: GetServerTimeMutation = makeFunctionReference<"mutation", Record<string, never>, number>(fn);
    convex.mutation(ref, {}).then(
      (serverTime) => {
        if (!live || !Number.isFinite(serverTime)) return;
        const received = Date.now();
        setOffset({ fn, value: Math.round(serverTime - (sent + received) / 2) });
      },
      // Stay conservative: the unknown-offset estimate never runs ahead of the server.
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [convex, fn]);
  return offset !== undefined && offset.fn === fn ? offset.value : undefined;
}

/**
 * Re-renders the component at client time `at` (ms), if given. Waits longer than `setTimeout`
 * allows are chained, re-arming until `at` has passed on the browser's clock.
 */
function useRenderAt(at: number | undefined): void {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    if (at === undefined) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      const wait = at - Date.now();
      if (wait <= 0) {
        rerender();
        return;
      }
      timer = setTimeout(arm, Math.min(wait, MAX_TIMEOUT));
    };
    arm();
    return () => clearTimeout(timer);
  }, [at]);
}
