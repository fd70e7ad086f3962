// The clean-up through the component (convex-test), in batches of one row: each batch schedules the next after the last string key it judged, and the last batch leaves no row.
// The first test of this file is the first in it to load the component's modules (lazily, through convex-test), so a
// change to src/shared/admin/cleanup.ts's validators (cleanupCursor) is seen by it: keep it first.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, type RateLimitConfig } from "../src/client/index.js";
import { inspectable, makeInspectableTest } from "./setup.js";

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);
const api = inspectable.rateLimiter;
const limits = { messages: { kind: "token bucket", rate: 10, period: MINUTE } } satisfies Record<string, RateLimitConfig>;
const rl = new RateLimiter(api, limits);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe("cleanup in batches of one row", () => {
  test("goes on after key a, then b, and deletes every idle key", async () => {
    const t = makeInspectableTest();
    await t.run(async (ctx) => {
      for (const key of ["a", "b", "c"]) await rl.limit(ctx, "messages", { key });
    });
    // A minute on, at 10 a minute, each key has its token back: all three are idle.
    vi.setSystemTime(T0 + MINUTE);
    // One row read: key a, judged whole (the page was full); the next batch goes on after "a".
    expect(await t.run((ctx) => rl.cleanup(ctx, { batchSize: 1 }))).toEqual({ rowsRead: 1, keysRead: 1, keysDeleted: 1, rowsDeleted: 1, done: false });
    expect((await t.run((ctx) => ctx.runQuery(api.inspect.rows, {}))).map((r) => r.key)).toEqual(["b", "c"]);
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    expect(await t.run((ctx) => ctx.runQuery(api.inspect.rows, {}))).toEqual([]);
  });
});
