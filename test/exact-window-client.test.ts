// The exact sliding window through the published register() helper and the typed client:
// limitAll (all or none, over two exact windows), credit (the oldest takes given
// back first), a dry run (decides and keeps its log, admits everything) and metrics, on unsharded
// limits (a sharded one's shard picks are random here; see exact-window.test.ts). The app is
// test/app/slidingHook.ts; fake timers drive the clock.
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, rateLimitHeaders } from "../src/client/index.js";
import type * as slidingHook from "./app/slidingHook.js";
import { makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ slidingHook: typeof slidingHook }>;
const T0 = Date.UTC(2030, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe("an exact sliding window through the client", () => {
  test("limitAll takes from both or neither, and a refusal waits for the exact window's oldest take", async () => {
    const t = makeTest();
    // exactPerMinute holds 3: three calls at T0, T0 + 10 s and T0 + 20 s take all of it.
    for (const at of [T0, T0 + 10_000, T0 + 20_000]) {
      vi.setSystemTime(at);
      expect(await t.mutation(api.slidingHook.takeBoth, { key: "k" })).toMatchObject({ ok: true });
    }
    vi.setSystemTime(T0 + 30_000);
    const refused = await t.mutation(api.slidingHook.takeBoth, { key: "k" });
    // The first take leaves the window at T0 + 60 s: 30 s from now.
    expect(refused).toMatchObject({ ok: false, retryAfter: 30_000 });
    // Nothing was taken from the other limit by the refused call: 3 of its 6 are left.
    expect(await t.query(api.slidingHook.leftOf, { key: "k" })).toBe(3);
    vi.setSystemTime(T0 + 60_000 - 1);
    expect(await t.mutation(api.slidingHook.takeBoth, { key: "k" })).toMatchObject({ ok: false, retryAfter: 1 });
    vi.setSystemTime(T0 + 60_000);
    expect(await t.mutation(api.slidingHook.takeBoth, { key: "k" })).toMatchObject({ ok: true });
  });

  test("credit gives back the oldest takes first: the tokens are back at once, the rest come back no earlier", async () => {
    const t = makeTest();
    const first = await t.mutation(api.slidingHook.takeDetailed, { key: "c", count: 2 });
    expect(first).toMatchObject({ ok: true });
    vi.setSystemTime(T0 + 30_000);
    const second = await t.mutation(api.slidingHook.takeDetailed, { key: "c", count: 2 });
    if (!second.ok) throw new Error("the second take was refused");
    // Undo the second take: 2 tokens are back now. The log can't tell which take it undoes, so
    // it drops the oldest (T0's): what stays is one take of 2 at T0 + 30 s.
    expect(await t.mutation(api.slidingHook.giveBack, { key: "c", count: 2, shards: second.details.shards })).toEqual({ credited: 2 });
    expect(await t.query(api.slidingHook.leftOf, { key: "c" })).toBe(4);
    // Two more takes of 2 at T0 + 40 s fill it; the next, at T0 + 50 s, waits until the take at
    // T0 + 30 s leaves (T0 + 90 s), no sooner, whichever take the credit really undid. (Each call
    // gets its own instant: convex-test's clock moves with commits.)
    vi.setSystemTime(T0 + 40_000);
    expect(await t.mutation(api.slidingHook.takeDetailed, { key: "c", count: 2 })).toMatchObject({ ok: true });
    expect(await t.mutation(api.slidingHook.takeDetailed, { key: "c", count: 2 })).toMatchObject({ ok: true });
    vi.setSystemTime(T0 + 50_000);
    expect(await t.mutation(api.slidingHook.takeDetailed, { key: "c", count: 2 })).toMatchObject({ ok: false, retryAfter: 40_000 });
  });

  test("a credit that empties the log clears it from the row: the next take sees it full", async () => {
    const t = makeTest();
    expect(await t.mutation(api.slidingHook.takeDetailed, { key: "e", count: 6 })).toMatchObject({ ok: true });
    expect(await t.mutation(api.slidingHook.giveBack, { key: "e", count: 6, shards: [0] })).toEqual({ credited: 6 });
    vi.setSystemTime(T0 + 10);
    expect(await t.query(api.slidingHook.leftOf, { key: "e" })).toBe(6);
    expect(await t.mutation(api.slidingHook.takeDetailed, { key: "e", count: 6 })).toMatchObject({ ok: true });
  });

  test("details and the HTTP header fields: full again when the latest take leaves", async () => {
    const t = makeTest();
    await t.mutation(api.slidingHook.takeDetailed, { key: "h", count: 2 });
    vi.setSystemTime(T0 + 10_000);
    const result = await t.mutation(api.slidingHook.takeDetailed, { key: "h", count: 2 });
    // 2 of 6 left; the take at T0 + 10 s leaves at T0 + 70 s: full 60 s from now.
    expect(result).toMatchObject({ ok: true, details: { remaining: 2, resetAfter: 60_000 } });
    const config = { kind: "sliding window", rate: 6, period: MINUTE } as const;
    expect(rateLimitHeaders("exactMetered", result, config)).toEqual({
      "RateLimit-Policy": '"exactMetered";q=6;w=60',
      RateLimit: '"exactMetered";r=2;t=60',
    });
  });

  test("a dry run admits everything, and keeps its log as if it refused", async () => {
    const t = makeTest();
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      expect(await t.mutation(api.slidingHook.takeDry, {})).toMatchObject({ ok: true });
      vi.setSystemTime(T0 + MINUTE - 1);
      expect(await t.mutation(api.slidingHook.takeDry, {})).toMatchObject({ ok: true });
      const lines = log.mock.calls.map((c) => String(c[0])).filter((l) => l.includes("rateLimit.dryRun"));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ event: "rateLimit.dryRun", name: "exactDry", retryAfter: 1 });
    } finally {
      log.mockRestore();
    }
  });

  test("metrics count an exact window's admissions and refusals", async () => {
    const t = makeTest();
    for (let i = 0; i < 8; i++) await t.mutation(api.slidingHook.takeDetailed, { key: "m", count: 1 });
    const metrics = await t.mutation(api.slidingHook.metricsOf, {});
    // 6 in a minute, exactly.
    expect(metrics.total).toMatchObject({ admitted: 6, refused: 2 });
  });
});
