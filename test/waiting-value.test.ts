// getValue with `wait: true` says when work queued now would run (`runAt`), as check({ wait: true }) and runWhenAllowed decide, kind by kind, through register() on convex-test; the default shape is unchanged.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, MINUTE, SECOND } from "../src/client/index.js";
import { rateLimiter, schema, sendRef } from "./app/waiting.js";
import { convexErrorData, makeTest } from "./setup.js";

// On the hour, so the fixed window's windows start at T0.
const T0 = Date.UTC(2030, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});


type Waitable = "emails" | "hourly" | "window" | "bounded";

describe("getValue with wait: true", () => {
  test.each<[Waitable, string, number[], number]>([
    // 2 a minute: two at once, then one every 30 s; the next after three queued runs at 60 s.
    ["emails", "a token bucket", [0, 0, 30 * SECOND], MINUTE],
    // 3 an hour, aligned to the hour: the fourth runs in the next window.
    ["hourly", "a fixed window", [0, 0, 0], HOUR],
    // Never more than 3 in any minute: the fourth runs a minute after the first.
    ["window", "an exact sliding window", [0, 0, 0], MINUTE],
  ])("%s (%s): runAt is what check and runWhenAllowed give the next run, at the same instant", async (name, _kind, queued, next) => {
    const t = makeTest(schema);
    // One transaction: every call sees T0.
    const seen = await t.run(async (ctx) => {
      const fresh = await rateLimiter.getValue(ctx, name, { key: "k", wait: true });
      const runs = [];
      for (let i = 0; i < queued.length; i++) runs.push(await rateLimiter.runWhenAllowed(ctx, name, { key: "k" }, sendRef, { to: `to${i}` }));
      const value = await rateLimiter.getValue(ctx, name, { key: "k", wait: true });
      const check = await rateLimiter.check(ctx, name, { key: "k", wait: true });
      const run = await rateLimiter.runWhenAllowed(ctx, name, { key: "k" }, sendRef, { to: "next" });
      return { fresh, runs, value, check, run };
    });
    expect(seen.fresh.runAt).toBe(T0);
    expect(seen.runs.map((r) => (r.ok ? r.runAt - T0 : null))).toEqual(queued);
    expect(seen.value.runAt).toBe(T0 + next);
    expect(seen.check).toEqual({ ok: true, runAt: T0 + next });
    expect(seen.run).toMatchObject({ ok: true, runAt: T0 + next });
    // The state itself is reported as without `wait`.
    expect(seen.value.ts).toBe(T0);
  });

  test("no runAt when the next run would be refused: maxReserved reached", async () => {
    const t = makeTest(schema);
    const value = await t.run(async (ctx) => {
      // 1 a minute, at most 3 reserved: the first runs at once, three more are reserved ahead.
      for (let i = 0; i < 4; i++) await rateLimiter.runWhenAllowed(ctx, "bounded", { key: "b" }, sendRef, { to: `to${i}` });
      return rateLimiter.getValue(ctx, "bounded", { key: "b", wait: true });
    });
    expect("runAt" in value).toBe(false);
    expect(value.value).toBe(-3);
  });

  test("no runAt inside a block: getValue says until when instead", async () => {
    const t = makeTest(schema);
    const value = await t.run(async (ctx) => {
      await rateLimiter.setOverride(ctx, "emails", { key: "bad" }, { blockedUntil: T0 + 10 * MINUTE });
      return rateLimiter.getValue(ctx, "emails", { key: "bad", wait: true });
    });
    expect("runAt" in value).toBe(false);
    expect(value).toMatchObject({ blockedUntil: T0 + 10 * MINUTE, blockedBy: "key" });
  });

  test("with details too: total and runAt together", async () => {
    const t = makeTest(schema);
    const value = await t.run((ctx) => rateLimiter.getValue(ctx, "emails", { key: "d", details: true, wait: true }));
    expect(value).toMatchObject({ value: 2, ts: T0, total: { value: 2, capacity: 2, exact: true }, runAt: T0 });
  });

  test("the default shape, and details alone, carry no runAt", async () => {
    const t = makeTest(schema);
    const [plain, detailed, off] = await t.run(async (ctx) => {
      await rateLimiter.runWhenAllowed(ctx, "emails", { key: "p", count: 2 }, sendRef, { to: "x" });
      return [
        await rateLimiter.getValue(ctx, "emails", { key: "p" }),
        await rateLimiter.getValue(ctx, "emails", { key: "p", details: true }),
        await rateLimiter.getValue(ctx, "emails", { key: "p", wait: false }),
      ] as const;
    });
    expect(Object.keys(plain).sort()).toEqual(["config", "shard", "ts", "value"]);
    expect("runAt" in detailed).toBe(false);
    expect(off).toEqual(plain);
    // @ts-expect-error: without `wait: true` the result has no runAt.
    expect(plain.runAt).toBeUndefined();
  });

  test("a limit that can't wait is an InvalidRateLimit error naming the field", async () => {
    const t = makeTest(schema);
    expect(await convexErrorData(t.run((ctx) => rateLimiter.getValue(ctx, "approx", { wait: true })))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "config.exact",
    });
    // Without `wait` the same limit reports as always.
    expect((await t.run((ctx) => rateLimiter.getValue(ctx, "approx", {}))).value).toBe(3);
  });
});
