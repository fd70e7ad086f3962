// Waiting until allowed across a config change, through the client on convex-test with explicit
// instants: queued work keeps its runAt, and what is queued (or admitted) after a raise or a lower
// waits for the old schedule's end, then the new rate; a cancel's credit after a change.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { RateLimiter, SECOND, type RateLimitConfig } from "../src/client/index.js";
import { schema, sendRef } from "./app/waiting.js";
import { components, makeTest } from "./setup.js";

// On the hour, so fixed windows with `start: 0` start at T0.
const T0 = Date.UTC(2030, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

type T = ReturnType<typeof makeTest>;
const limiterOf = (config: RateLimitConfig) => new RateLimiter(components.rateLimiter, { p: config });

/** Queues one send of each count, in one transaction at one instant; returns their runAt (ms after T0). */
async function queue(t: T, limiter: ReturnType<typeof limiterOf>, counts: number[]): Promise<(number | null)[]> {
  const results = await t.run(async (ctx) => {
    const out = [];
    for (const [i, count] of counts.entries()) out.push(await limiter.runWhenAllowed(ctx, "p", { key: "a", count }, sendRef, { to: `r${i}` }));
    return out;
  });
  return results.map((r) => (r.ok ? r.runAt - T0 : null));
}

describe("a token bucket", () => {
  test("raised from 2/s to 3/s: the queue's debt is repaid when the old rate would have, then 3/s", async () => {
    const t = makeTest(schema);
    expect(await queue(t, limiterOf({ kind: "token bucket", rate: 2, period: SECOND }), [1, 1, 1, 2])).toEqual([0, 0, 500, 1500]);
    const raised = limiterOf({ kind: "token bucket", rate: 3, period: SECOND });
    // A plain request at +10 ms: 1 token at 3/s after +1500, at +1834 (the old rule, repaying the
    // debt of 3 at 3/s from T0, said +1334, 4 tokens within 334 ms of the run at +1500).
    vi.setSystemTime(T0 + 10);
    expect(await t.run((ctx) => raised.check(ctx, "p", { key: "a" }))).toEqual({ ok: false, retryAfter: 1824 });
    // 2 more: 2 tokens at 3/s after +1500 (the old rule said +1667, 4 tokens within 167 ms).
    vi.setSystemTime(T0 + 20);
    expect(await queue(t, raised, [2])).toEqual([2167]);
  });

  test("lowered from 4/s to 2/s: the queue keeps its instants; the next waits for its end, then 2/s", async () => {
    const t = makeTest(schema);
    expect(await queue(t, limiterOf({ kind: "token bucket", rate: 4, period: SECOND }), [1, 1, 1, 1, 1, 1, 1, 1])).toEqual([0, 0, 0, 0, 250, 500, 750, 1000]);
    vi.setSystemTime(T0 + 10);
    // Half a second after the queue's end (the old rule repaid the whole debt of 4 at 2/s: +2500).
    expect(await queue(t, limiterOf({ kind: "token bucket", rate: 2, period: SECOND }), [1, 1])).toEqual([1500, 2000]);
  });

  test("a cancel after a raise credits what keeps the runs still queued within the limit", async () => {
    const t = makeTest(schema);
    const minute = 60 * SECOND;
    const before = limiterOf({ kind: "token bucket", rate: 2, period: minute });
    const ids = await t.run(async (ctx) => {
      const out = [];
      for (let i = 0; i < 4; i++) out.push(await before.runWhenAllowed(ctx, "p", { key: "a" }, sendRef, { to: `r${i}` }));
      return out.map((r) => (r.ok ? { id: r.id, runAt: r.runAt - T0 } : null));
    });
    expect(ids.map((r) => r?.runAt)).toEqual([0, 0, 30 * SECOND, minute]);
    const raised = limiterOf({ kind: "token bucket", rate: 4, period: minute });
    vi.setSystemTime(T0 + 10);
    expect(await t.run((ctx) => raised.cancelRun(ctx, ids[2]!.id))).toEqual({ cancelled: true, credited: 1 });
    // The credit is back by the queue's end, which the next run still waits for.
    vi.setSystemTime(T0 + 20);
    expect(await queue(t, raised, [1])).toEqual([minute]);
  });
});

describe("a fixed window", () => {
  test("raised from 2 to 3 a window: nothing more runs in the windows the queue filled", async () => {
    const t = makeTest(schema);
    const two: RateLimitConfig = { kind: "fixed window", rate: 2, period: SECOND, start: 0 };
    expect(await queue(t, limiterOf(two), [1, 1, 1, 1, 1, 1])).toEqual([0, 0, 1000, 1000, 2000, 2000]);
    vi.setSystemTime(T0 + 10);
    // The old rule gave the window at +2000 the new rate, where the queue had used the old one: 4 ran there.
    expect(await queue(t, limiterOf({ ...two, rate: 3 }), [2, 1, 1])).toEqual([3000, 3000, 4000]);
  });

  test("lowered from 3 to 2 a window: the last window of the queue keeps what it had left, then 2 a window", async () => {
    const t = makeTest(schema);
    const three: RateLimitConfig = { kind: "fixed window", rate: 3, period: SECOND, start: 0 };
    expect(await queue(t, limiterOf(three), [1, 1, 1, 1, 1, 1, 1, 1])).toEqual([0, 0, 0, 1000, 1000, 1000, 2000, 2000]);
    vi.setSystemTime(T0 + 10);
    // The window at +2000 had 1 left (the old rule, repaying the debt of 5 at 2 a window, ran the
    // first at +3000 and the rest a window later).
    expect(await queue(t, limiterOf({ ...three, rate: 2 }), [1, 1, 1, 1])).toEqual([2000, 3000, 3000, 4000]);
  });
});
