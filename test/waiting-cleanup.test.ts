// The pass over queued runs that are over (runs.deleteOver, which the clean-up schedules), through
// the client and the component on convex-test (the component registered by hand beside a test-only
// query that lists its queued runs): runs that are over go, of any key, idle or not, in bounded
// batches; a run still ahead, or due with its job not started, stays for cancelRun; the clean-up's
// own transaction reads no queued run.
import { convexTest } from "convex-test";
import { componentsGeneric, makeFunctionReference, type FunctionReference } from "convex/server";
import batchWorker from "@convex-dev/batch-worker/test";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, SECOND } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
import type { Doc } from "../src/component/_generated/dataModel.js";
import { query } from "../src/component/_generated/server.js";
import { modules, schema as componentSchema } from "../src/test.js";
import { schema, sendRef } from "./app/waiting.js";
import { convexErrorData } from "./setup.js";

const appModules = import.meta.glob("./app/**/*.ts");
const T0 = Date.UTC(2030, 0, 1);

/** Lists the component's queued runs (test-only). */
const listRuns = query({ args: {}, handler: async (ctx) => ctx.db.query("queuedRuns").collect() });
/** Lists the component's scheduled jobs: name, args and state (test-only). */
const listJobs = query({
  args: {},
  handler: async (ctx) => (await ctx.db.system.query("_scheduled_functions").collect()).map((j) => ({ name: j.name, args: j.args, state: j.state.kind })),
});
const component = componentsGeneric() as unknown as {
  rateLimiter: ComponentApi & {
    inspectRuns: {
      listRuns: FunctionReference<"query", "internal", Record<string, never>, Doc<"queuedRuns">[]>;
      listJobs: FunctionReference<"query", "internal", Record<string, never>, { name: string; args: unknown[]; state: string }[]>;
    };
  };
};

function makeTest() {
  const t = convexTest(schema, appModules);
  t.registerComponent("rateLimiter", componentSchema, { ...modules, "./component/inspectRuns.ts": async () => ({ listRuns, listJobs }) });
  batchWorker.register(t, "rateLimiter/batchWorker");
  return t;
}
type T = ReturnType<typeof makeTest>;

// p: 2 a minute (a burst of 2, then one every 30 s); big: 20 a minute, so 12 runs are all due at once.
const limiter = new RateLimiter(component.rateLimiter, {
  p: { kind: "token bucket", rate: 2, period: MINUTE },
  big: { kind: "token bucket", rate: 20, period: MINUTE },
});
const waitThenSend = makeFunctionReference<"action", { name: "emails"; key?: string }, { ok: true; waited: number } | { ok: false; retryAfter: number }>("waiting:waitThenSend");

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs the scheduler timer by timer, each job at its own instant. */
async function runAll(t: T): Promise<void> {
  while (vi.getTimerCount() > 0) {
    vi.advanceTimersToNextTimer();
    await t.finishInProgressScheduledFunctions();
  }
}

/**
 * Runs the jobs due now, a ms at a time (a job scheduled to run at once may land on the next ms:
 * a transaction's time is held at or after the last commit's): the runs pass and the batches it
 * schedules after itself, and nothing later.
 */
async function runDue(t: T): Promise<void> {
  for (let i = 0; i < 10; i++) {
    vi.advanceTimersByTime(1);
    await t.finishInProgressScheduledFunctions();
  }
}

/** Calls the runs pass directly (the component's function, as the scheduler would). */
function deleteOver(t: T, batchSize?: number) {
  return t.run((ctx) => ctx.runMutation(component.rateLimiter.runs.deleteOver, batchSize === undefined ? {} : { batchSize }));
}

/** The queued runs recorded, as `to` of the send they run, by key. */
async function recorded(t: T): Promise<string[]> {
  const runs = await t.run((ctx) => ctx.runQuery(component.rateLimiter.inspectRuns.listRuns, {}));
  return runs.map((r) => `${r.key}@${r.runAt - T0}`).sort();
}

test("runs that are over go, whether their key is idle or not; runs ahead or with a job not started stay", async () => {
  const t = makeTest();
  const ids = await t.run(async (ctx) => {
    const out: string[] = [];
    for (const [key, n] of [["a", 3], ["b", 1]] as const) {
      for (let i = 0; i < n; i++) {
        const r = await limiter.runWhenAllowed(ctx, "p", { key }, sendRef, { to: `${key}${i}` });
        if (r.ok) out.push(r.id);
      }
    }
    return out;
  });
  expect(await recorded(t)).toEqual(["a@0", "a@0", "a@30000", "b@0"]);
  await runAll(t);
  // +31 s: every run finished; key a is not full again (the run at +30 s took its last token), b is.
  vi.setSystemTime(T0 + 31 * SECOND);
  // One more for a, at +60 s (the run for it prunes a's two oldest: runWhenAllowed prunes 2 a run).
  const [late] = await t.run(async (ctx) => [await limiter.runWhenAllowed(ctx, "p", { key: "a" }, sendRef, { to: "late" })]);
  expect(late).toMatchObject({ ok: true, runAt: T0 + MINUTE });
  expect(await recorded(t)).toEqual(["a@30000", "a@60000", "b@0"]);
  // The clean-up reads no run and says nothing of them; the pass it schedules deletes the rest
  // that are over: a's (a key in use) and b's (idle, its rows deleted).
  const cleaned = await t.run((ctx) => limiter.cleanup(ctx));
  expect(cleaned).toMatchObject({ keysRead: 2, keysDeleted: 1, done: true });
  expect(cleaned).not.toHaveProperty("runsDeleted");
  expect(await recorded(t)).toEqual(["a@30000", "a@60000", "b@0"]);
  await runDue(t);
  // The run ahead stays; and once due, with its job not started (the clock passes it without its
  // timer firing), it stays too.
  expect(await recorded(t)).toEqual(["a@60000"]);
  vi.setSystemTime(T0 + MINUTE + 1);
  expect(await deleteOver(t)).toEqual({ deleted: 0, done: true });
  expect(await recorded(t)).toEqual(["a@60000"]);
  // cancelRun still finds it.
  expect(await t.run((ctx) => limiter.cancelRun(ctx, late!.ok ? late!.id : ""))).toMatchObject({ cancelled: true });
  expect(ids).toHaveLength(4);
});

test("more than a batch of a key's runs that are over all go once its rows are deleted, a batch a transaction", async () => {
  const t = makeTest();
  await t.run(async (ctx) => {
    for (let i = 0; i < 12; i++) await limiter.runWhenAllowed(ctx, "big", { key: "c" }, sendRef, { to: `c${i}` });
  });
  expect(await recorded(t)).toEqual(Array(12).fill("c@0"));
  await runAll(t);
  // +1 min: every run finished and c is full again, so the clean-up deletes its rows; its runs are
  // left to the pass, which reads 5 a transaction.
  vi.setSystemTime(T0 + MINUTE);
  expect(await t.run((ctx) => limiter.cleanup(ctx, { batchSize: 5 }))).toMatchObject({ keysRead: 1, keysDeleted: 1, done: true });
  expect(await t.run((ctx) => ctx.runQuery(component.rateLimiter.inspectRuns.listRuns, {}))).toHaveLength(12);
  await runDue(t);
  expect(await recorded(t)).toEqual([]);
  // Three transactions: 5, 5 (each a full batch, so it went on after its last run), then 2.
  const passes = (await t.run((ctx) => ctx.runQuery(component.rateLimiter.inspectRuns.listJobs, {}))).filter((j) => /^runs(\.js)?:deleteOver$/.test(j.name));
  expect(passes.map((j) => [j.args[0], j.state])).toEqual([
    [{ batchSize: 5 }, "success"],
    [{ batchSize: 5, after: { runAt: T0, created: expect.any(Number) } }, "success"],
    [{ batchSize: 5, after: { runAt: T0, created: expect.any(Number) } }, "success"],
  ]);
});

test("each call of the pass deletes at most its batch and says whether it read them all", async () => {
  const t = makeTest();
  await t.run(async (ctx) => {
    for (let i = 0; i < 12; i++) await limiter.runWhenAllowed(ctx, "big", { key: `k${i % 3}` }, sendRef, { to: `c${i}` });
  });
  await runAll(t);
  vi.setSystemTime(T0 + MINUTE);
  expect(await deleteOver(t, 5)).toEqual({ deleted: 5, done: false });
  expect(await recorded(t)).toHaveLength(7);
  expect(await deleteOver(t, 5)).toEqual({ deleted: 5, done: false });
  expect(await deleteOver(t, 5)).toEqual({ deleted: 2, done: true });
  expect(await recorded(t)).toEqual([]);
});

test("a due run whose job is pending stays and doesn't hold up the runs after it; waitUntilAllowed's place in line goes once due", async () => {
  const t = makeTest();
  // a's run at T0 with a job; then, at T0 + 1 ms, w's place in line (no job) from waitUntilAllowed.
  await t.run(async (ctx) => {
    await limiter.runWhenAllowed(ctx, "p", { key: "a" }, sendRef, { to: "a0" });
  });
  vi.setSystemTime(T0 + 1);
  expect(await t.action(waitThenSend, { name: "emails", key: "w" })).toEqual({ ok: true, waited: 0 });
  const runs = await t.run((ctx) => ctx.runQuery(component.rateLimiter.inspectRuns.listRuns, {}));
  expect(runs.map((r) => [r.key, r.runAt - T0, r.job === undefined])).toEqual([["a", 0, false], ["w", 1, true]]);
  // a's job never starts (its timer is cleared): it stays pending, due, for cancelRun. A pass of
  // one a transaction reads it, deletes nothing, and goes on after it in the next transaction.
  vi.clearAllTimers();
  vi.setSystemTime(T0 + 10);
  expect(await deleteOver(t, 1)).toEqual({ deleted: 0, done: false });
  expect(await recorded(t)).toEqual(["a@0", "w@1"]);
  await runDue(t);
  expect(await recorded(t)).toEqual(["a@0"]);
  expect(await deleteOver(t, 1)).toEqual({ deleted: 0, done: false });
  expect(await recorded(t)).toEqual(["a@0"]);
});

test("the pass's batchSize is a whole number from 1 to 2000; the clean-up passes its own, at most 2000", async () => {
  const t = makeTest();
  for (const batchSize of [0, 2001, 1.5, Number.NaN, -1]) {
    expect(await convexErrorData(deleteOver(t, batchSize))).toMatchObject({ field: "batchSize", value: String(batchSize) });
  }
  expect(await deleteOver(t, 2000)).toEqual({ deleted: 0, done: true });
  // A clean-up batch past the pass's bound is valid: the pass reads 2000.
  expect(await t.run((ctx) => limiter.cleanup(ctx, { batchSize: 4000 }))).toMatchObject({ done: true });
  await runDue(t);
  const jobs = await t.run((ctx) => ctx.runQuery(component.rateLimiter.inspectRuns.listJobs, {}));
  expect(jobs.filter((j) => j.name.startsWith("runs"))).toEqual([{ name: expect.stringMatching(/^runs(\.js)?:deleteOver$/), args: [{ batchSize: 2000 }], state: "success" }]);
});

test("the clean-up's transaction reads no queued run: with runs or without, its reads are the same", async () => {
  async function measure(withRuns: boolean) {
    vi.setSystemTime(T0);
    const t = makeTest();
    await t.run(async (ctx) => {
      for (let i = 0; i < 20; i++) {
        const key = `k${i}`;
        if (!withRuns) await limiter.limit(ctx, "big", { key, count: 3 });
        else for (let j = 0; j < 3; j++) await limiter.runWhenAllowed(ctx, "big", { key }, sendRef, { to: `${key}-${j}` });
      }
    });
    await runAll(t);
    vi.setSystemTime(T0 + MINUTE);
    return await t.run(async (ctx) => {
      const result = await limiter.cleanup(ctx);
      const metrics = await ctx.meta.getTransactionMetrics();
      return { result, queries: metrics.databaseQueries.used, documents: metrics.documentsRead.used };
    });
  }
  const without = await measure(false);
  const withRuns = await measure(true);
  expect(withRuns.result).toEqual(without.result);
  expect(withRuns.result).toMatchObject({ keysRead: 20, keysDeleted: 20 });
  expect(withRuns.queries).toBe(without.queries);
  expect(withRuns.documents).toBe(without.documents);
  // One index query per key (its takes waiting) and two beside them, as before runs were pruned.
  expect(without.queries).toBe(20 + 2);
});
