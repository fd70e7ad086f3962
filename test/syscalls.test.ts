// What a steady call asks of the database, syscall by syscall (issue 22): each read of a row stops
// at the document it finds (`firstOf`), where `.first()` asks the stream once more to learn it is
// done. Counted by wrapping the `Convex` global convex-test installs (`withSyscalls`).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { firstOf } from "../src/component/store.js";
import type { RateLimitConfig } from "../src/client/index.js";
import { withSyscalls } from "./convex-global.js";
import { components, makeTest } from "./setup.js";

/** An async iterable over `items` that counts the `next` and `return` calls made on it. */
function counted<T>(items: T[]) {
  const calls = { next: 0, return: 0 };
  const iterable: AsyncIterable<T> = {
    [Symbol.asyncIterator]() {
      let i = 0;
      return {
        next: () => {
          calls.next++;
          return Promise.resolve(i < items.length ? { done: false, value: items[i++]! } : { done: true, value: undefined });
        },
        return: () => {
          calls.return++;
          return Promise.resolve({ done: true, value: undefined });
        },
      };
    },
  };
  return { iterable, calls };
}

describe("firstOf", () => {
  test("returns the first document after one step, and closes the stream", async () => {
    const { iterable, calls } = counted(["a", "b"]);
    expect(await firstOf(iterable)).toBe("a");
    expect(calls).toEqual({ next: 1, return: 1 });
  });

  test("returns null for an empty stream after one step, which ends it", async () => {
    const { iterable, calls } = counted<string>([]);
    expect(await firstOf(iterable)).toBeNull();
    expect(calls).toEqual({ next: 1, return: 0 });
  });
});

/** Runs `body`, counting the syscalls (by op) it makes meanwhile. */
async function countingSyscalls(body: () => Promise<unknown>): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const count = (op: string) => counts.set(op, (counts.get(op) ?? 0) + 1);
  await withSyscalls(
    {
      syscall: (op, json, next) => (count(op), next(op, json)),
      asyncSyscall: (op, json, next) => (count(op), next(op, json)),
      jsSyscall: (op, args, next) => (count(`js:${op}`), next(op, args)),
    },
    body,
  );
  return counts;
}

describe("a steady call's syscalls", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.UTC(2025, 0, 1));
  });
  afterEach(() => vi.useRealTimers());

  const config: RateLimitConfig = { kind: "token bucket", rate: 60, period: 60_000 };
  const call = (t: ReturnType<typeof makeTest>, c: RateLimitConfig = config) =>
    t.run((ctx) => ctx.runMutation(components.rateLimiter.lib.rateLimit, { name: "steady", key: "k", config: c }));

  test("one step of one query stream, and one patch", async () => {
    const t = makeTest();
    await call(t); // the row's first write, and its terms
    vi.advanceTimersByTime(2_000);
    await call(t);
    vi.advanceTimersByTime(2_000);
    const counts = await countingSyscalls(() => call(t));
    expect(Object.fromEntries(counts)).toEqual({
      "1.0/runUdf": 1,
      "1.0/queryStream": 1,
      "1.0/queryStreamNext": 1,
      "1.0/queryCleanup": 1,
      "1.0/shallowMerge": 1,
    });
  });

  test("sharded: every shard read steps its stream once", async () => {
    const sharded: RateLimitConfig = { ...config, rate: 600, shards: 4 };
    const t = makeTest();
    for (let i = 0; i < 8; i++) {
      await call(t, sharded);
      vi.advanceTimersByTime(2_000);
    }
    for (let i = 0; i < 20; i++) {
      const counts = await countingSyscalls(() => call(t, sharded));
      expect(counts.get("1.0/queryStream")).toBeGreaterThanOrEqual(1);
      expect(counts.get("1.0/queryStreamNext")).toBe(counts.get("1.0/queryStream"));
      vi.advanceTimersByTime(2_000);
    }
  });
});
