// The clean-up prunes queued runs, through the client on convex-test (the component registered by
// hand beside a test-only query that lists its queued runs): runs that are over go, for keys idle
// or not; a run still ahead, or due with its job not started, stays for cancelRun.
import { convexTest } from "convex-test";
import { componentsGeneric, type FunctionReference } from "convex/server";
import batchWorker from "@convex-dev/batch-worker/test";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, SECOND } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
import type { Doc } from "../src/component/_generated/dataModel.js";
import { query } from "../src/component/_generated/server.js";
import { modules, schema as componentSchema } from "../src/test.js";
import { schema, sendRef } from "./app/waiting.js";

const appModules = import.meta.glob("./app/**/*.ts");
const T0 = Date.UTC(2030, 0, 1);

/** Lists the component's queued runs (test-only). */
const listRuns = query({ args: {}, handler: async (ctx) => ctx.db.query("queuedRuns").collect() });
const component = componentsGeneric() as unknown as {
  rateLimiter: ComponentApi & { inspectRuns: { listRuns: FunctionReference<"query", "internal", Record<string, never>, Doc<"queuedRuns">[]> } };
};

function makeTest() {
  const t = convexTest(schema, appModules);
  t.registerComponent("rateLimiter", componentSchema, { ...modules, "./component/inspectRuns.ts": async () => ({ listRuns }) });
  batchWorker.register(t, "rateLimiter/batchWorker");
  return t;
}
type T = ReturnType<typeof makeTest>;

// 2 a minute: a burst of 2, then one every 30 s.
const limiter = new RateLimiter(component.rateLimiter, { p: { kind: "token bucket", rate: 2, period: MINUTE } });

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
  // The clean-up deletes the rest that are over: a's (a key in use) and b's (idle, deleted whole).
  expect(await t.run((ctx) => limiter.cleanup(ctx))).toMatchObject({ keysRead: 2, keysDeleted: 1, runsDeleted: 2, done: true });
  // The run ahead stays; and once due, with its job not started (the clock passes it without its
  // timer firing), it stays too, and a clean-up with nothing to prune says nothing of runs.
  expect(await recorded(t)).toEqual(["a@60000"]);
  vi.setSystemTime(T0 + MINUTE + 1);
  expect(await t.run((ctx) => limiter.cleanup(ctx))).not.toHaveProperty("runsDeleted");
  expect(await recorded(t)).toEqual(["a@60000"]);
  // cancelRun still finds it.
  expect(await t.run((ctx) => limiter.cancelRun(ctx, late!.ok ? late!.id : ""))).toMatchObject({ cancelled: true });
  expect(ids).toHaveLength(4);
});
