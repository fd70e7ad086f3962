// The operating methods of RateLimiter: the idle-key clean-up, the admin listings of keys and
// names, and metrics (read and fold). RateLimiter extends this class; it decides nothing itself.
import type { PaginationOptions, PaginationResult } from "convex/server";
import type { KeyStatus } from "../shared/admin/idle.js";
import type { FoldResult, MetricsResult } from "../shared/metrics/metrics.js";
import { heatOfMetrics, validateMutationMs } from "../shared/metrics/heat.js";
import { validateConfig } from "../shared/validation/validate.js";
import { windowConfig } from "../shared/validation/validate-config.js";
import { isAsync, type RateLimitConfig } from "../shared/shapes/validators.js";
import type { CalendarConfig } from "../shared/shapes/calendar-validators.js";
import type { LimitConfig } from "../shared/shapes/concurrency-validators.js";
import type { ConfigOption, LimitName, NamesOf, RateLimitName, RateLimits } from "./names.js";
import { anyConfigFor, configFor, generated } from "./resolve.js";
import type { CleanupResult, RunMutationCtx, RunQueryCtx } from "./types.js";
import { WaitMethods } from "./waiting.js";

/**
 * OperatingMethods are `RateLimiter`'s methods for running limits in production: `cleanup` (idle
 * keys), `listKeys` and `listNames` (the admin listing), `metrics` and `foldMetrics`.
 */
export class OperatingMethods<Limits extends Record<string, LimitConfig>> extends WaitMethods<Limits> {
  /**
   * cleanup deletes the state of keys that hold no information: full, owing nothing, no takes
   * waiting for the applier, and written under the limit's current config. Deleting them changes
   * no decision, since a missing row is a full one; it keeps storage to the keys in use instead of
   * every key ever seen. Call it from a mutation that your own cron runs, e.g. daily
   * (`crons.interval`; see example/convex/crons.ts).
   *
   * With concurrency limits in the constructor, it first deletes up to `batchSize` expired leases
   * (of any name) in the caller's transaction; call it again if more were left.
   *
   * It scans the limits named in the constructor, plus `limits` (default none): the names you use
   * with an inline config, each with that config. Names it isn't given are left alone, and so are
   * keys last written under another config (shard count, kind or terms) until their next request
   * rewrites them. It reads `batchSize` rows per transaction (default 500, at most 4000): the
   * first batch in the caller's transaction, the rest in mutations it schedules one after another
   * until every limit is scanned. Cost: one document read per row and one index query per key,
   * and one write per row deleted.
   *
   * It also schedules one pass over the records of runs that `runWhenAllowed` or
   * `waitUntilAllowed` queued and that are over (due, and a place in line or a job that started,
   * finished or was cancelled), of any limit and key, so keys that stopped queuing work don't keep
   * them. The pass runs in its own transactions, `batchSize` records each (at most 2000: a record
   * with a job costs a read of the job), never in the caller's; a run whose job is still pending,
   * or that is not due yet, stays for `cancelRun`.
   *
   * @returns what the first batch did; `done: false` when the rest was scheduled.
   */
  async cleanup(
    ctx: RunMutationCtx,
    options: { limits?: Record<string, RateLimitConfig>; batchSize?: number } = {},
  ): Promise<CleanupResult> {
    const all: Record<string, LimitConfig> = { ...this.limits, ...options.limits };
    const limits = Object.entries(all).flatMap(([name, config]) => {
      if (config.kind === "concurrency") return [];
      const window = windowConfig(config);
      validateConfig(window);
      return [{ name, config: window }];
    });
    // Expired leases count for nothing already; deleting them only frees storage.
    if (Object.values(all).some((c) => c.kind === "concurrency")) {
      await ctx.runMutation(generated(this.component.leases).deleteExpired, options.batchSize === undefined ? {} : { batchSize: options.batchSize });
    }
    return await ctx.runMutation(generated(this.component.admin).cleanup, {
      limits,
      ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
    });
  }

  /**
   * listKeys lists the keys of limit `name` for an admin page, with Convex's pagination: pass
   * `paginationOpts` and get `{ page, isDone, continueCursor }`. Each key comes with its state
   * evaluated now (see {@link KeyStatus}): tokens available across its shards, capacity, ms until
   * full again, and whether `cleanup` would delete it. `numItems` counts rows, so a page of a
   * limit with N shards lists about `numItems / N` keys. Keys come in index order, the global key
   * first. Call it from your own query, behind an admin check: it lists every key.
   */
  async listKeys<Name extends string = NamesOf<RateLimits<Limits>>, C extends RateLimitConfig | CalendarConfig = never>(
    ctx: RunQueryCtx,
    name: RateLimitName<Limits, Name, C>,
    options: { paginationOpts: PaginationOptions } & ConfigOption<RateLimits<Limits>, Name, C>,
  ): Promise<PaginationResult<KeyStatus>> {
    return await ctx.runQuery(generated(this.component.admin).listKeys, {
      name,
      config: configFor(this.limits, name, options),
      paginationOpts: options.paginationOpts,
    });
  }

  /**
   * listNames lists the names of the limits that have state (any name, named in the constructor
   * or not), with Convex's pagination (`numItems` names a page, at most 1000). It reads one row
   * per name, however many keys each has. Call it from your own query, behind an admin check.
   */
  async listNames(
    ctx: RunQueryCtx,
    options: { paginationOpts: PaginationOptions },
  ): Promise<PaginationResult<{ name: string }>> {
    return await ctx.runQuery(generated(this.component.admin).listNames, { paginationOpts: options.paginationOpts });
  }

  /**
   * metrics reads what limit `name` decided over [`from`, `to`) (ms), a minute at a time, for a
   * dashboard. Only limits with `metrics: true` in their config record anything: each `limit`
   * (and each limit of a `limitAll`) inserts one event, and so does each `acquire` of a
   * concurrency limit (admitted or refused, 1 slot as its tokens); `check`, `getValue`, peeks
   * (`count: 0`), `release` and `extend` record nothing. A name not given to the constructor needs an inline `config` (only used to
   * check the name).
   *
   * The span is taken in whole UTC minutes (`from` rounded down, `to` rounded up), at most a day
   * long. The result lists each minute that saw requests (`buckets`, oldest first) with the
   * requests and tokens admitted, reserved and refused, the span's `total`, and the `topKeys` keys
   * refused most (default 0, at most 100). It counts the events not yet folded too, so it is
   * current whether or not {@link foldMetrics} has run; `complete` is false when more than 4,000
   * were waiting (fold more often) or, with `topKeys`, the span had more than 4,000 per-key
   * summaries (ask for a shorter span). A call that threw and rolled back is not counted: see
   * docs/reference.md, "Metrics". Call it from your own query, behind an admin check.
   *
   * With `mutationMs` (the time, ms, of the mutations that take from the limit, from its read to
   * their commit), a transactional rate limit's result also has `heat`: its busiest minute's
   * writes a second per shard against the sizing rule, `hot` when over it with the shards or mode
   * the rule recommends (see `heatOfMetrics`, and docs/hot-limits.md, "Is my limit too hot?").
   */
  async metrics<Name extends string = NamesOf<Limits>, C extends RateLimitConfig | CalendarConfig = never>(
    ctx: RunQueryCtx,
    name: LimitName<Limits, Name, C>,
    options: { from: number; to: number; topKeys?: number; mutationMs?: number } & ConfigOption<Limits, Name, C>,
  ): Promise<MetricsResult> {
    const { from, to, topKeys, mutationMs } = options;
    const config = anyConfigFor(this.limits, name, options);
    validateMutationMs(mutationMs);
    const result = await ctx.runQuery(generated(this.component.metrics).get, { name, from, to, ...(topKeys === undefined ? {} : { topKeys }) });
    if (mutationMs === undefined || config.kind === "concurrency") return result;
    const window = windowConfig(config);
    if (isAsync(window)) return result;
    const heat = heatOfMetrics(result.buckets, window, mutationMs);
    return heat ? { ...result, heat } : result;
  }

  /**
   * foldMetrics sums the metric events recorded since the last fold into per-minute summaries (and
   * per-key refusals), each event exactly once, and deletes summaries older than `retainFor` (ms,
   * default 7 days; 0 deletes every folded minute before the current one). Events younger than a
   * second are left for the next fold. Call it from a mutation your own cron runs, e.g. every
   * minute (see example/convex/crons.ts): until it runs, events pile up, and `metrics` reads them
   * one by one.
   *
   * It folds `batchSize` events per transaction (default 500, at most 2,000): the first batch in
   * the caller's transaction, the rest in mutations it schedules one after another. Cost: one read
   * and one delete per event, and one read and one write per (name, minute) and per (name,
   * minute, key) with refusals in a batch. Running it while another fold runs is harmless:
   * overlapping folds conflict and are retried, and nothing is counted twice.
   *
   * @returns what the first batch did; `done: false` when the rest was scheduled.
   */
  async foldMetrics(
    ctx: RunMutationCtx,
    options: { batchSize?: number; retainFor?: number } = {},
  ): Promise<FoldResult> {
    const { batchSize, retainFor } = options;
    return await ctx.runMutation(generated(this.component.metrics).fold, {
      ...(batchSize === undefined ? {} : { batchSize }),
      ...(retainFor === undefined ? {} : { retainFor }),
    });
  }
}
