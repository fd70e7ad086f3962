// The offline Playground's calls into the component, on one playground lane, each at a simulated
// instant: the example app's own `rateLimiter` (limits.ts) with the name and key shape that
// example/convex/playground.ts uses on a deployment, so every answer is the component's.
import {
  isInvalidRateLimitError,
  type InvalidRateLimitError,
  type RateLimitConfig,
  type RateLimitReturnsWithDetails,
} from "convex-rate-limiter";
import { rateLimiter } from "../../convex/limits.js";
import type { Test } from "./deployment.js";

/** Runs `fn` on a deployment with `Date` reading instant `at` (ms), one call at a time. */
export type CallAt = <T>(at: number, fn: (t: Test) => Promise<T>) => Promise<T>;

/** The playground limit's name, as example/convex/playground.ts names it. */
const NAME = "playground";
/** The offline lane's key; a deployment's lanes are `playground:<session>`. */
const KEY = "playground:offline";

/** A request as the Playground fires it. */
export type LaneRequest = { config: RateLimitConfig; count: number; reserve: boolean };

/**
 * What a request fired through `limit` met: the component's decision, the limit's tokens right
 * after it (every shard read, in the same transaction) and the instant (ms since the epoch) the
 * deployment decided it at.
 */
export type Decision = { result: RateLimitReturnsWithDetails; after: number; at: number };

/** What `check` says about a request: the component's answer, or the field it refuses. */
export type Verdict = { ok: true; result: RateLimitReturnsWithDetails } | { ok: false; error: InvalidRateLimitError };

/** The tokens a tolerance below capacity still counts as full (sums of shard floats). */
const FULL_EPSILON = 1e-9;

/** The longest refill `refillAt` looks for (ms): 10 years; a deeper debt is reported as that. */
const MAX_REFILL = 10 * 365 * 24 * 3600 * 1000;

/**
 * Lane is the offline Playground's view of its limit: requests, checks and readings through the
 * library's `RateLimiter`, at instants chosen by the caller.
 */
export class Lane {
  constructor(private readonly callAt: CallAt) {}

  /**
   * limit fires a request at `at` (ms), as one mutation of the app, and returns the component's
   * decision with its details, the tokens left and the instant it was decided at. That instant is
   * `at` unless the deployment's clock is already past it (see `now`). The tokens are read in the
   * same transaction, at the same instant: a call after it may run a ms later.
   */
  limit(at: number, { config, count, reserve }: LaneRequest): Promise<Decision> {
    return this.callAt(at, (t) =>
      t.mutation(async (ctx) => {
        const result = await rateLimiter.limit(ctx, NAME, { key: KEY, config, count, reserve, details: true });
        const value = await rateLimiter.getValue(ctx, NAME, { key: KEY, config, sampleShards: config.shards ?? 1, details: true });
        return { result, after: value.total.value, at: Date.now() };
      }),
    );
  }

  /**
   * now returns the instant (ms) a call made at `at` runs at on this deployment: `at`, or later
   * when a commit the call can see was made later. A deployment's clock never runs behind a commit
   * it can see, so after two requests committed in one ms the next call sees the ms after it.
   * It asks with a query, which commits nothing, so the answer holds until the next mutation.
   */
  now(at: number): Promise<number> {
    return this.callAt(at, (t) => t.query(async () => Date.now()));
  }

  /**
   * check asks the component about a request at `at` without taking anything: its decision, or,
   * for a request the server would refuse as malformed or impossible, the `InvalidRateLimit`
   * error naming the field. Any other error is thrown.
   */
  async check(at: number, { config, count, reserve }: LaneRequest): Promise<Verdict> {
    try {
      const result = await this.callAt(at, (t) =>
        t.query((ctx) => rateLimiter.check(ctx, NAME, { key: KEY, config, count, reserve, details: true })),
      );
      return { ok: true, result };
    } catch (error) {
      if (isInvalidRateLimitError(error)) return { ok: false, error: error.data };
      throw error;
    }
  }

  /** available returns the whole limit's tokens at `at` under `config`, reading every shard. */
  async available(at: number, config: RateLimitConfig): Promise<number> {
    const value = await this.callAt(at, (t) =>
      t.query((ctx) =>
        rateLimiter.getValue(ctx, NAME, { key: KEY, config, sampleShards: config.shards ?? 1, details: true }),
      ),
    );
    return value.total.value;
  }

  /** phase returns where `config`'s windows start on this lane (ms), as the component resolves it. */
  async phase(at: number, config: RateLimitConfig): Promise<number> {
    const value = await this.callAt(at, (t) => t.query((ctx) => rateLimiter.getValue(ctx, NAME, { key: KEY, config })));
    return value.config.start ?? 0;
  }

  /**
   * refillAt returns the first whole ms at or after `from` from which the limit's tokens stop
   * rising under `config` with no more requests: when it is full, or, should the component hold
   * the tokens below capacity (a row it carries over from another config, say), when they level
   * off. Found by asking the component: a doubling search, then bisection; at most `from` + 10
   * years.
   */
  async refillAt(from: number, config: RateLimitConfig): Promise<number> {
    const capacity = config.capacity ?? config.rate;
    const slack = FULL_EPSILON * Math.max(1, capacity);
    let target = capacity;
    let lo = from;
    const first = await this.available(from, config);
    let last = first;
    if (first >= target - slack) return from;
    // Each step spans at least one window boundary, so a level stretch means no more rising: a
    // fixed window rises only at a boundary, and a sliding window may stay level until its next
    // boundary (nothing in the window before slides out), rising after it until full.
    const span = config.kind === "fixed window" ? config.period : config.kind === "sliding window" ? config.period + 1 : 1;
    let step = Math.max(1, Math.ceil(config.period / Math.max(1, config.rate)), span);
    let hi = from + step;
    for (;;) {
      const v = await this.available(hi, config);
      if (v >= capacity - slack) break;
      if (v <= last + slack) {
        // Level since the last step: the tokens top out at `v`, somewhere after `from`.
        target = v;
        lo = from;
        break;
      }
      if (hi - from >= MAX_REFILL) return from + MAX_REFILL;
      last = v;
      lo = hi;
      step *= 2;
      hi = Math.min(from + MAX_REFILL, hi + step);
    }
    if (first >= target - slack) return from;
    // Invariant: below the target at lo, at it by hi.
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await this.available(mid, config)) >= target - slack) hi = mid;
      else lo = mid;
    }
    return hi;
  }
}
