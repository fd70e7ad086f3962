// Waiting until allowed: the component's functions that queue work behind a limit (a reservation
// taken now, the work scheduled at the first instant it is allowed) and cancel it. The decision is
// the pure `waitFlow` (src/shared/flow/wait.ts); these handlers answer its reads and execute it.
import type { FunctionHandle } from "convex/server";
import { v } from "convex/values";
import { creditFlow } from "../shared/flow/credit.js";
import { configHash } from "../shared/shards/terms.js";
import { runPlanAsync } from "../shared/shapes/rows.js";
import { invalid } from "../shared/validation/validate.js";
import { configArgValidator, recordsMetrics } from "../shared/shapes/validators.js";
import { cancelResult, checkWait, waitArgs, waitCallResult, waitFlow, type CancelResult, type WaitCallResult } from "../shared/flow/wait.js";
import type { Id } from "./_generated/dataModel.js";
import { mutation, query } from "./_generated/server.js";
import { recordMetric } from "./metrics.js";
import { readKey, writeKey } from "./store.js";
import { api } from "./_generated/api.js";
import { deleteRun, dueRuns, insertRun, isOver, normalizeJob, pendingRuns, pruneRuns, queuedUntil, runOfJob, scheduledJob } from "./storeRuns.js";

/**
 * The component's own jobs (it schedules nothing else but runs' work): `cancelRun` never cancels
 * one, as it would an app's job whose run a reset or `clearAll` forgot.
 */
const OWN_JOBS = new Set(["lib:clearAll", "admin:cleanup", "metrics:fold", "runs:deleteOver"]);

/** How many of a key's finished runs each new run deletes: more than one, so they never pile up. */
const PRUNE_PER_RUN = 2;

/** OVER_BATCH is how many due runs `deleteOver` reads per transaction by default (500). */
export const OVER_BATCH = 500;
/**
 * MAX_OVER_BATCH is the most due runs `deleteOver` may be asked to read per transaction (2000).
 * Each run with a job costs a read of the job, which counts as an index range: 2000 runs are at
 * most 2,002 ranges and 4,000 documents read, about half of Convex's 4,096 ranges a transaction,
 * leaving the other half to a caller that runs it inside its own transaction.
 */
export const MAX_OVER_BATCH = 2000;

/**
 * Decides a request that waits until allowed and, when it is accepted, reserves its tokens and
 * schedules its work (`fn`, a function handle, with `fnArgs`) at `runAt`; see
 * `RateLimiter.runWhenAllowed`. Without `fn` it only takes its place in line
 * (`RateLimiter.waitUntilAllowed`). A refusal writes nothing but its metric event. Asynchronous
 * limits are decided on the current state, exactly.
 */
export const runWhenAllowed = mutation({
  args: waitArgs,
  returns: waitCallResult,
  handler: async (ctx, args): Promise<WaitCallResult> => {
    const now = Date.now();
    // Checked before the first read, as the flow checks them again.
    checkWait(args);
    if (args.fn !== undefined && !args.fn.startsWith("function://")) throw invalid("fn", args.fn, "must be a function handle");
    const until = await queuedUntil(ctx.db, args);
    const outcome = await runPlanAsync(waitFlow<Id<"rateLimits">>(args, now, Math.random, until), (q) => readKey(ctx.db, args, q));
    if (outcome.wouldRefuse) {
      console.log(JSON.stringify({ event: "rateLimit.dryRun", name: args.name, key: args.key, count: args.count ?? 1, ...outcome.wouldRefuse }));
    }
    if (outcome.event) await recordMetric(ctx.db, args, outcome.event, now);
    if (!outcome.result.ok) return outcome.result;
    if (outcome.ops.length > 0) await writeKey(ctx, args, outcome.ops);
    const { runAt } = outcome.result;
    const job = args.fn === undefined ? undefined : await ctx.scheduler.runAt(runAt, args.fn as FunctionHandle<"mutation" | "action">, args.fnArgs ?? {});
    await pruneRuns(ctx.db, args, now, PRUNE_PER_RUN);
    const { name, key, tier, config } = args;
    await insertRun(ctx.db, {
      name,
      ...(key === undefined ? {} : { key }),
      count: args.count ?? 1,
      ...(tier === undefined ? {} : { tier }),
      shards: outcome.shards,
      runAt,
      config,
      ...(job === undefined ? {} : { job }),
    });
    return job === undefined ? { ok: true, runAt } : { ok: true, runAt, id: job };
  },
});

/**
 * Decides a request that waits until allowed exactly as `runWhenAllowed` would at this instant,
 * taking nothing and scheduling nothing: when its work would run, or when it could be queued.
 */
export const checkRun = query({
  args: waitArgs,
  returns: waitCallResult,
  handler: async (ctx, args): Promise<WaitCallResult> => {
    checkWait(args);
    const until = await queuedUntil(ctx.db, args);
    const { result } = await runPlanAsync(waitFlow<Id<"rateLimits">>(args, Date.now(), Math.random, until), (q) => readKey(ctx.db, args, q));
    return result;
  },
});

/**
 * Cancels a run that `runWhenAllowed` scheduled, if it hasn't started: its job is cancelled and
 * its tokens credited back by the credit rules (never above the capacity), exactly once. See
 * `RateLimiter.cancelRun`. `configs` maps limit names to their current configs (the client's
 * named limits): the credit is made under the limit's current config, or the one the run was
 * queued under for a name not in it. A limit with `metrics: true` records the cancel (outcome
 * `"cancelled"`, the run's tokens). A pending job whose run a reset or `clearAll` forgot is
 * cancelled with nothing credited (`credited: 0`).
 */
export const cancelRun = mutation({
  args: { id: v.string(), configs: v.optional(v.record(v.string(), configArgValidator)) },
  returns: cancelResult,
  handler: async (ctx, args): Promise<CancelResult> => {
    const job = normalizeJob(ctx.db, args.id);
    if (job === null) throw invalid("id", args.id, "is not the id of a run: pass the id runWhenAllowed returned");
    const scheduled = await scheduledJob(ctx.db, job);
    const run = await runOfJob(ctx.db, job);
    if (scheduled === null || (run === null && OWN_JOBS.has(scheduled.name.replace(/\.js:/, ":")))) return { cancelled: false, state: "unknown" };
    const state = scheduled.state.kind;
    if (state !== "pending") return { cancelled: false, state };
    await ctx.scheduler.cancel(job);
    // A run forgotten by a reset or clearAll: the job is cancelled, and nothing is credited, as
    // its tokens went with the key's state.
    if (run === null) return { cancelled: true, credited: 0 };
    const config = args.configs?.[run.name] ?? run.config;
    const { name, key, tier, count, shards } = run;
    const at = { name, key, config };
    const credit = { name, count, config, ...(key === undefined ? {} : { key }), ...(tier === undefined ? {} : { tier }), ...(shards.length > 0 ? { shards } : {}) };
    // The key's other queued runs bound what comes back (see `cancelRoom`); an exact sliding
    // window's tokens come off the take logged at the run's runAt.
    const now = Date.now();
    const pending = (await pendingRuns(ctx.db, at, now)).filter((r) => r._id !== run._id).map((r) => ({ runAt: r.runAt, count: r.count }));
    // Terms changed since the run was queued: its debt was carried over as a promise (see cancelRoom).
    const changed = configHash(config) !== configHash(run.config);
    const { credited, ops } = await runPlanAsync(creditFlow<Id<"rateLimits">>(credit, now, { runAt: run.runAt, pending, changed }), (q) => readKey(ctx.db, at, q));
    if (ops.length > 0) await writeKey(ctx, at, ops);
    // Under the config the credit was made under: a limit that records metrics counts the cancel.
    if (recordsMetrics(config)) await recordMetric(ctx.db, at, { outcome: "cancelled", count }, now);
    await deleteRun(ctx.db, run._id);
    return { cancelled: true, credited };
  },
});

/**
 * Deletes the runs that are over, of any name and key: due (`runAt` before now) and only a place
 * in line (`waitUntilAllowed`'s) or with a job that started, finished or was cancelled. A run
 * whose job is still pending, or that is not due yet, stays: `cancelRun` needs it. It reads up to
 * `batchSize` due runs per transaction (default {@link OVER_BATCH}, at most
 * {@link MAX_OVER_BATCH}) in `runAt` order, after `after` when given, and when it read a full
 * batch schedules itself to go on after the last one read, so runs it keeps (pending jobs) never
 * hold the pass up. `admin.cleanup` schedules it; each key's `runWhenAllowed` prunes its own too.
 *
 * Cost per transaction: one index range (two when going on from `after`) and one document read
 * per run read, one more of each per run with a job (its job's state), one write per run deleted.
 * `deleted` counts this transaction's deletes; `done` is false when the rest was scheduled.
 */
export const deleteOver = mutation({
  args: { batchSize: v.optional(v.number()), after: v.optional(v.object({ runAt: v.number(), created: v.number() })) },
  returns: v.object({ deleted: v.number(), done: v.boolean() }),
  handler: async (ctx, args) => {
    const batch = args.batchSize ?? OVER_BATCH;
    if (!(Number.isInteger(batch) && batch >= 1 && batch <= MAX_OVER_BATCH)) {
      throw invalid("batchSize", batch, `must be a whole number from 1 to ${MAX_OVER_BATCH}`);
    }
    const due = await dueRuns(ctx.db, Date.now(), batch, args.after);
    let deleted = 0;
    for (const run of due) {
      if (!(await isOver(ctx.db, run))) continue;
      await deleteRun(ctx.db, run._id);
      deleted++;
    }
    const last = due[due.length - 1];
    if (due.length < batch || last === undefined) return { deleted, done: true };
    await ctx.scheduler.runAfter(0, api.runs.deleteOver, { batchSize: batch, after: { runAt: last.runAt, created: last._creationTime } });
    return { deleted, done: false };
  },
});
