// generations.start, generate and finish through convex-test and register(): at most 2 LLM generations in flight per user, released when the action ends, and a crashed generation's slot freed exactly at its lease's expiry (2 minutes), with fake timers set before each call whose instant matters (a deployment's clock moves on with its commits).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, SECOND } from "convex-rate-limiter";
import { api } from "./_generated/api.js";
import { makeTest, quietCrashes } from "./test.setup.js";

type Test = ReturnType<typeof makeTest>;

/**
 * Runs every scheduled generation; returns how many crashed on purpose (`crash: true`), whose
 * reports (convex-test prints each with its stack trace) it keeps out of the output.
 */
async function runGenerations(t: Test): Promise<number> {
  const { crashes } = await quietCrashes("generations:generate", "the generation crashed", () =>
    t.finishAllScheduledFunctions(vi.runAllTimers),
  );
  return crashes;
}

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
    // A second on, the third waits for the first lease to expire, 2 minutes after START.
    vi.setSystemTime(START + SECOND);
    expect(await start()).toEqual({ ok: false, retryAfter: 2 * MINUTE - SECOND });
    expect((await start("grace")).ok).toBe(true); // per user
    expect(await runGenerations(t)).toBe(0);
    vi.setSystemTime(START + 2 * SECOND);
    expect(await t.query(api.generations.inFlight, { user: "ada" })).toEqual({ inFlight: 0, capacity: 2, ts: START + 2 * SECOND });
    const finished = await t.run((ctx) => ctx.db.query("generations").collect());
    expect(finished.map((g) => g.answer)).toEqual(["echo: hi", "echo: hi", "echo: hi"]);
    expect((await start()).ok).toBe(true);
  });

  test("a crashed generation holds its slot until its lease expires, and frees it exactly then", async () => {
    const t = makeTest();
    const start = (crash: boolean) => t.mutation(api.generations.start, { user: "ada", prompt: "hi", crash });
    expect((await start(true)).ok).toBe(true);
    vi.setSystemTime(START + SECOND);
    expect((await start(false)).ok).toBe(true);
    expect(await runGenerations(t)).toBe(1); // the first action dies; the second finishes
    vi.setSystemTime(START + 2 * SECOND);
    expect(await t.query(api.generations.inFlight, { user: "ada" })).toEqual({
      inFlight: 1,
      capacity: 2,
      ts: START + 2 * SECOND,
      earliestExpiry: START + 2 * MINUTE,
    });
    expect((await start(true)).ok).toBe(true); // the free slot; this one crashes too
    expect(await runGenerations(t)).toBe(1);
    vi.setSystemTime(START + 3 * SECOND);
    expect(await start(false)).toEqual({ ok: false, retryAfter: 2 * MINUTE - 3 * SECOND });
    vi.setSystemTime(START + 2 * MINUTE - 1);
    expect(await start(false)).toEqual({ ok: false, retryAfter: 1 });
    vi.setSystemTime(START + 2 * MINUTE); // the first crashed lease expires: its slot is free, no job ran
    expect((await start(false)).ok).toBe(true);
  });
});

describe("quietCrashes (test.setup.ts), which keeps the deliberate crashes out of the output", () => {
  test("counts the crash it expects, and prints any other error as usual", async () => {
    const printed: string[][] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
      printed.push(args.map(String));
    });
    try {
      const report = "Error when running scheduled function generations:generate";
      const { result, crashes } = await quietCrashes("generations:generate", "the generation crashed", async () => {
        console.error(report, new Error("the generation crashed"));
        console.error(report, new Error("out of memory"));
        console.error("Error when running scheduled function llm:work", new Error("the generation crashed"));
        return "done";
      });
      expect([result, crashes]).toEqual(["done", 1]);
      expect(printed).toEqual([
        [report, "Error: out of memory"],
        ["Error when running scheduled function llm:work", "Error: the generation crashed"],
      ]);
    } finally {
      spy.mockRestore();
    }
  });

  test("puts console.error back, even when the work throws", async () => {
    const before = console.error;
    await expect(quietCrashes("generations:generate", "the generation crashed", () => Promise.reject(new Error("boom")))).rejects.toThrow(
      "boom",
    );
    expect(console.error).toBe(before);
  });
});
