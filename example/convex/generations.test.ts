// generations.start, generate and finish through convex-test and register(): at most 2 LLM generations in flight per user, released when the action ends, and a crashed generation's slot freed exactly at its lease's expiry (2 minutes), with fake timers.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE } from "convex-rate-limiter";
import { api } from "./_generated/api.js";
import { makeTest } from "./test.setup.js";

const START = Date.UTC(2025, 0, 1, 9);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => {
  vi.useRealTimers();
});

describe("at most 2 generations in flight per user", () => {
  test("a third waits; when the actions finish they release their slots", async () => {
    const t = makeTest();
    const start = (user = "ada", crash = false) => t.mutation(api.generations.start, { user, prompt: "hi", crash });
    expect((await start()).ok).toBe(true);
    expect((await start()).ok).toBe(true);
    expect(await start()).toEqual({ ok: false, retryAfter: 2 * MINUTE });
    expect((await start("grace")).ok).toBe(true); // per user
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    expect(await t.query(api.generations.inFlight, { user: "ada" })).toEqual({ inFlight: 0, capacity: 2, ts: START });
    const finished = await t.run((ctx) => ctx.db.query("generations").collect());
    expect(finished.map((g) => g.answer)).toEqual(["echo: hi", "echo: hi", "echo: hi"]);
    expect((await start()).ok).toBe(true);
  });

  test("a crashed generation holds its slot until its lease expires, and frees it exactly then", async () => {
    const t = makeTest();
    const start = (crash: boolean) => t.mutation(api.generations.start, { user: "ada", prompt: "hi", crash });
    expect((await start(true)).ok).toBe(true);
    vi.advanceTimersByTime(1000);
    expect((await start(false)).ok).toBe(true);
    await t.finishAllScheduledFunctions(vi.runAllTimers); // the first action dies; the second finishes
    expect(await t.query(api.generations.inFlight, { user: "ada" })).toEqual({
      inFlight: 1,
      capacity: 2,
      ts: START + 1000,
      earliestExpiry: START + 2 * MINUTE,
    });
    expect((await start(true)).ok).toBe(true); // the free slot; this one crashes too
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    expect(await start(false)).toEqual({ ok: false, retryAfter: 2 * MINUTE - 1000 });
    vi.setSystemTime(START + 2 * MINUTE - 1);
    expect(await start(false)).toEqual({ ok: false, retryAfter: 1 });
    vi.setSystemTime(START + 2 * MINUTE); // the first crashed lease expires: its slot is free, no job ran
    expect((await start(false)).ok).toBe(true);
  });
});
