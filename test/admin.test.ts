// The admin functions (src/component/admin.ts) on convex-test with fake timers, through the
// RateLimiter client: the clean-up deletes exactly the idle keys, in batches that reschedule
// themselves, and the listings page through names and keys with each key's state.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, SECOND, type RateLimitConfig } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
import { seededRandom } from "../tools/random.js";
import { convexErrorData, inspectable, makeInspectableTest } from "./setup.js";

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);
const api = inspectable.rateLimiter;
type T = ReturnType<typeof makeInspectableTest>;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  vi.spyOn(Math, "random").mockImplementation(seededRandom(3));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const limits = {
  messages: { kind: "token bucket", rate: 10, period: MINUTE },
  sharded: { kind: "token bucket", rate: 10, period: MINUTE, shards: 2 },
  daily: { kind: "fixed window", rate: 5, period: MINUTE, start: 0 },
  llm: { kind: "token bucket", rate: 10, period: MINUTE, applyUpdates: "asynchronously" },
} satisfies Record<string, RateLimitConfig>;
const rl = new RateLimiter(api, limits);

async function rows(t: T) {
  return t.run((ctx) => ctx.runQuery(api.inspect.rows, {}));
}
/** The keys that have rows, per name: `name/key`, sorted. */
async function keys(t: T): Promise<string[]> {
  return [...new Set((await rows(t)).map((r) => `${r.name}/${r.key ?? ""}`))].sort();
}
/** Runs the clean-up and every batch it schedules, keeping the clock where it is. */
async function cleanup(t: T, options: Parameters<typeof rl.cleanup>[1] = {}) {
  const now = Date.now();
  const first = await t.run((ctx) => rl.cleanup(ctx, options));
  await t.finishAllScheduledFunctions(vi.runAllTimers);
  vi.setSystemTime(now);
  return first;
}

describe("cleanup", () => {
  test("deletes full keys and keeps partly used and indebted ones, until they refill", async () => {
    const t = makeInspectableTest();
    await t.run(async (ctx) => {
      await rl.limit(ctx, "messages", { key: "full-again" });
      await rl.limit(ctx, "messages", { key: "partly" });
      await rl.limit(ctx, "messages", { key: "debt", count: 15, reserve: true });
      await rl.limit(ctx, "messages", { key: "peeked", count: 0 }); // a peek writes nothing
    });
    vi.setSystemTime(T0 + 6 * SECOND);
    // At 10 a minute, "full-again" refilled its token by now; "partly" takes one more now.
    await t.run((ctx) => rl.limit(ctx, "messages", { key: "partly" }));
    expect(await keys(t)).toEqual(["messages/debt", "messages/full-again", "messages/partly"]);

    const first = await cleanup(t);
    expect(first).toEqual({ rowsRead: 3, keysRead: 3, keysDeleted: 1, rowsDeleted: 1, done: true });
    expect(await keys(t)).toEqual(["messages/debt", "messages/partly"]);

    // The debt of 5 is repaid 30 s after T0, and refilled to full 60 s later.
    vi.setSystemTime(T0 + 90 * SECOND - 1);
    await cleanup(t);
    expect(await keys(t)).toEqual(["messages/debt"]);
    vi.setSystemTime(T0 + 90 * SECOND);
    await cleanup(t);
    expect(await keys(t)).toEqual([]);
  });

  test("keeps a key with a take still waiting for the applier", async () => {
    const t = makeInspectableTest();
    await t.run((ctx) => rl.limit(ctx, "llm", { key: "k" }));
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    vi.setSystemTime(T0 + MINUTE);
    expect(await keys(t)).toEqual(["llm/k"]);
    // Full again, but a new take waits: the applier hasn't run yet.
    await t.run((ctx) => rl.limit(ctx, "llm", { key: "k" }));
    expect(await t.run((ctx) => rl.cleanup(ctx))).toMatchObject({ keysRead: 1, keysDeleted: 0 });
    expect(await t.run((ctx) => ctx.runQuery(api.inspect.pending, {}))).toHaveLength(1);
    expect(await keys(t)).toEqual(["llm/k"]);
  });

  test("a sharded key goes only with all its shards: one idle shard and one not keeps both", async () => {
    const t = makeInspectableTest();
    // Draw shard 0 first, comfortable: one token from shard 0 only.
    vi.mocked(Math.random).mockReturnValueOnce(0.1).mockReturnValueOnce(0.1);
    await t.run((ctx) => rl.limit(ctx, "sharded", { key: "k" }));
    const written = await rows(t);
    expect(written.map((r) => [r.shard, r.value])).toEqual([
      [0, 4],
      [1, 5],
    ]);
    await cleanup(t);
    expect((await rows(t)).length).toBe(2);
    // Shard 0 refills its token at 5 a minute in 12 s: then the whole key goes.
    vi.setSystemTime(T0 + 12 * SECOND);
    expect(await cleanup(t)).toMatchObject({ keysDeleted: 1, rowsDeleted: 2 });
    expect(await rows(t)).toEqual([]);
  });

  test("keeps rows written under another layout, and names it isn't given", async () => {
    const t = makeInspectableTest();
    await t.run(async (ctx) => {
      await rl.limit(ctx, "messages", { key: "k" });
      await rl.limit(ctx, "other", { key: "k", config: limits.messages });
    });
    vi.setSystemTime(T0 + MINUTE);
    // The app now runs "messages" over 2 shards: the row of 1 shard is another layout.
    const resharded = new RateLimiter(api, { messages: { ...limits.messages, shards: 2 } });
    await t.run((ctx) => resharded.cleanup(ctx));
    expect(await keys(t)).toEqual(["messages/k", "other/k"]);
    // Inline configs come in through `limits`.
    await t.run((ctx) => rl.cleanup(ctx, { limits: { other: limits.messages } }));
    expect(await keys(t)).toEqual([]);
  });

  test("a fixed window whose window turned over is idle", async () => {
    const t = makeInspectableTest();
    await t.run((ctx) => rl.limit(ctx, "daily", { key: "k", count: 5 }));
    await cleanup(t);
    expect(await keys(t)).toEqual(["daily/k"]);
    vi.setSystemTime(T0 + MINUTE);
    await cleanup(t);
    expect(await keys(t)).toEqual([]);
  });

  test("walks every key in batches of batchSize rows, rescheduling itself until done", async () => {
    const t = makeInspectableTest();
    await t.run(async (ctx) => {
      await rl.limit(ctx, "messages"); // the global key, first in index order
      for (let i = 0; i < 12; i++) await rl.limit(ctx, "messages", { key: `user${String(i).padStart(2, "0")}` });
      for (let i = 0; i < 7; i++) await rl.limit(ctx, "sharded", { key: `user${i}` });
      // One key still in use at the end.
      await rl.limit(ctx, "sharded", { key: "busy", count: 9 });
    });
    vi.setSystemTime(T0 + 30 * SECOND);
    expect((await rows(t)).length).toBe(13 + 16);
    // 5 rows a batch: a batch ends inside a sharded key and reads the rest of it.
    const first = await cleanup(t, { batchSize: 5 });
    expect(first).toMatchObject({ rowsRead: 5, keysRead: 5, keysDeleted: 5, done: false });
    expect(await keys(t)).toEqual(["sharded/busy"]);
  });

  test("a batch that stops inside a key reads the rest of it", async () => {
    const t = makeInspectableTest();
    await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await rl.limit(ctx, "sharded", { key: `k${i}` });
    });
    vi.setSystemTime(T0 + MINUTE);
    const first = await cleanup(t, { batchSize: 3 });
    // Rows k0/0, k0/1, k1/0 read; k1's other row read too: two whole keys judged.
    expect(first).toMatchObject({ rowsRead: 4, keysRead: 2, keysDeleted: 2, rowsDeleted: 4, done: false });
    expect(await rows(t)).toEqual([]);
  });

  test("refuses a malformed batch size or config, before reading anything", async () => {
    const t = makeInspectableTest();
    expect(await convexErrorData(t.run((ctx) => rl.cleanup(ctx, { batchSize: 0 })))).toMatchObject({ field: "batchSize" });
    expect(
      await convexErrorData(t.run((ctx) => rl.cleanup(ctx, { limits: { bad: { kind: "token bucket", rate: 0, period: 1 } } }))),
    ).toMatchObject({ field: "config.rate" });
  });

  test("an app whose generated API predates the admin functions is told to run codegen", async () => {
    const t = makeInspectableTest();
    const { admin: _admin, ...old } = api as ComponentApi;
    const stale = new RateLimiter(old, limits);
    expect(await convexErrorData(t.run((ctx) => stale.cleanup(ctx)))).toMatchObject({ field: "component" });
  });
});

describe("listKeys", () => {
  test("pages through every key once, with its state now, whatever the page size", async () => {
    const t = makeInspectableTest();
    await t.run((ctx) => rl.limit(ctx, "sharded", { key: "old" }));
    vi.setSystemTime(T0 + MINUTE);
    await t.run(async (ctx) => {
      await rl.limit(ctx, "sharded", { count: 10 }); // the global key: both shards emptied
      for (let i = 0; i < 6; i++) await rl.limit(ctx, "sharded", { key: `k${i}`, count: i + 1 });
    });
    vi.setSystemTime(T0 + MINUTE + 6 * SECOND);
    const keyNames = [undefined, "k0", "k1", "k2", "k3", "k4", "k5", "old"];
    // Every read below is a query, which commits nothing, so each sees T0 + 66 s: the clock moves only with commits.
    // What a peek with details reports for each key, read through the other API.
    const expected = await t.query(async (ctx) =>
      Promise.all(
        keyNames.map(async (key) => {
          const { details } = await rl.check(ctx, "sharded", { ...(key === undefined ? {} : { key }), count: 0, details: true });
          return { key, value: details.remaining, fullIn: details.resetAfter };
        }),
      ),
    );
    for (const numItems of [1, 2, 3, 5, 100]) {
      const seen: { key?: string; value: number; fullIn: number; idle: boolean }[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 50; pages++) {
        const result = await t.query((ctx) => rl.listKeys(ctx, "sharded", { paginationOpts: { numItems, cursor } }));
        seen.push(...result.page);
        if (result.isDone) break;
        cursor = result.continueCursor;
      }
      expect(seen.map((s) => s.key)).toEqual(keyNames);
      expect(seen.map(({ key, value, fullIn }) => ({ key, value, fullIn }))).toEqual(expected);
      // The global key: each shard of 5 gets half a token in 6 s and lacks 4.5, for 54 s more.
      expect(seen[0]).toEqual({ value: 1, capacity: 10, fullIn: 54 * SECOND, idle: false, rows: 2, pending: 0 });
      expect(seen.filter((s) => s.idle).map((s) => s.key)).toEqual(["old"]);
    }
  });

  test("takes an inline config for names not given to the constructor", async () => {
    const t = makeInspectableTest();
    await t.run((ctx) => rl.limit(ctx, "other", { key: "k", config: limits.messages }));
    const result = await t.run((ctx) =>
      rl.listKeys(ctx, "other", { config: limits.messages, paginationOpts: { numItems: 10, cursor: null } }),
    );
    expect(result.page).toEqual([{ key: "k", value: 9, capacity: 10, fullIn: 6 * SECOND, idle: false, rows: 1, pending: 0 }]);
    expect(result.isDone).toBe(true);
  });
});

describe("listNames", () => {
  test("lists each name once, a page at a time, however many keys it has", async () => {
    const t = makeInspectableTest();
    await t.run(async (ctx) => {
      for (let i = 0; i < 5; i++) await rl.limit(ctx, "messages", { key: `k${i}` });
      await rl.limit(ctx, "daily");
      for (let i = 0; i < 3; i++) await rl.limit(ctx, "sharded", { key: `k${i}` });
      await rl.limit(ctx, "zz", { config: limits.messages });
    });
    const names: string[] = [];
    let cursor: string | null = null;
    const pages: number[] = [];
    for (;;) {
      const result = await t.run((ctx) => rl.listNames(ctx, { paginationOpts: { numItems: 3, cursor } }));
      names.push(...result.page.map((p) => p.name));
      pages.push(result.page.length);
      if (result.isDone) break;
      cursor = result.continueCursor;
    }
    expect(names).toEqual(["daily", "messages", "sharded", "zz"]);
    expect(pages).toEqual([3, 1]);
  });

  test("a page re-run up to its end cursor lists the same names, and a new name after it waits for the next page", async () => {
    const t = makeInspectableTest();
    await t.run(async (ctx) => {
      await rl.limit(ctx, "a", { config: limits.messages });
      await rl.limit(ctx, "c", { config: limits.messages });
    });
    const first = await t.run((ctx) => rl.listNames(ctx, { paginationOpts: { numItems: 1, cursor: null } }));
    expect(first).toMatchObject({ page: [{ name: "a" }], isDone: false });
    await t.run((ctx) => rl.limit(ctx, "b", { config: limits.messages }));
    const again = await t.run((ctx) =>
      rl.listNames(ctx, { paginationOpts: { numItems: 1, cursor: null, endCursor: first.continueCursor } }),
    );
    expect(again).toEqual(first);
    const next = await t.run((ctx) => rl.listNames(ctx, { paginationOpts: { numItems: 5, cursor: first.continueCursor } }));
    expect(next).toMatchObject({ page: [{ name: "b" }, { name: "c" }], isDone: true });
  });

  test("an empty component lists nothing", async () => {
    const t = makeInspectableTest();
    const result = await t.run((ctx) => rl.listNames(ctx, { paginationOpts: { numItems: 10, cursor: null } }));
    expect(result).toMatchObject({ page: [], isDone: true });
  });

  test("refuses a cursor it didn't make", async () => {
    const t = makeInspectableTest();
    const data = await convexErrorData(t.run((ctx) => rl.listNames(ctx, { paginationOpts: { numItems: 1, cursor: "{" } })));
    expect(data).toMatchObject({ field: "paginationOpts.cursor" });
  });
});
