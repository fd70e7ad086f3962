// An asynchronous limit whose config changes while takes are still waiting for the applier, on convex-test with fake timers: every take counts under the terms it was taken under and none is lost. Each history runs asynchronously (the applier held back, or run part of the way) and transactionally (its twin), and both admit the same.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { DAY, type RateLimitConfig } from "../src/client/index.js";
import { seededRandom } from "../tools/random.js";
import { inspectable, makeInspectableTest } from "./setup.js";

const api = inspectable.rateLimiter;
const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);
const NAME = "changing";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  vi.spyOn(Math, "random").mockImplementation(seededRandom(11));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

/** One step of a history: take `count` tokens (or every one left, `"drain"`) under `config`, or run the applier. */
type Step = { config: RateLimitConfig; count: number | "drain" } | "apply";

/** The config as its transactional twin: the same limit, its rows written by each request. */
function twin(config: RateLimitConfig): RateLimitConfig {
  const { applyUpdates: _async, ...rest } = config;
  return rest;
}

/**
 * Runs `steps` from T0 and returns how many tokens each step admitted. `"apply"` runs the applier
 * to the end; its timers move the clock, and the instant it ends at is pushed onto `clocks`. The
 * twin (`transactional`) has no applier: at each `"apply"` it moves its clock to the instant the
 * asynchronous run's applier ended at (taken from `clocks`), so both decide every step at the same
 * instant.
 */
async function run(steps: readonly Step[], transactional: boolean, clocks: number[]): Promise<number[]> {
  vi.setSystemTime(T0);
  const t = makeInspectableTest();
  const out: number[] = [];
  let applied = 0;
  for (const step of steps) {
    if (step === "apply") {
      if (transactional) vi.setSystemTime(clocks[applied++]!);
      else {
        await t.finishAllScheduledFunctions(vi.runAllTimers);
        clocks.push(Date.now());
      }
      continue;
    }
    const config = transactional ? twin(step.config) : step.config;
    const limit = (count: number) => t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config, count }));
    if (step.count === "drain") {
      // Until 40 refusals in a row: a sharded limit refuses a pair that can't serve while other
      // shards still hold tokens, so one refusal doesn't mean the key is spent, whatever is drawn.
      let admitted = 0;
      for (let refusals = 0; refusals < 40 && admitted < 1000; ) {
        if ((await limit(1)).ok) {
          admitted += 1;
          refusals = 0;
        } else refusals += 1;
      }
      out.push(admitted);
    } else {
      out.push((await limit(step.count)).ok ? step.count : 0);
    }
  }
  if (!transactional) {
    // Once applied, the rows hold what the decisions counted: nothing more passes at that instant.
    const now = Date.now();
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    vi.setSystemTime(now);
    const last = [...steps].reverse().find((s): s is Exclude<Step, "apply"> => s !== "apply")!;
    const more = await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, config: last.config, count: 1 }));
    expect(more.ok).toBe(false);
  }
  return out;
}

// Refilled over a day, so the applier's timers, which move the clock, refill no whole token.
const small: RateLimitConfig = { kind: "token bucket", rate: 5, period: DAY, capacity: 5, applyUpdates: "asynchronously" };
const big: RateLimitConfig = { ...small, capacity: 20 };
const four: RateLimitConfig = { kind: "token bucket", rate: 40, period: DAY, shards: 4, applyUpdates: "asynchronously" };
const two: RateLimitConfig = { ...four, shards: 2 };

describe("the same admissions asynchronously as transactionally", () => {
  test.each([
    // [why, history]
    [
      "capacity raised 5 → 20 with 5 takes pending and no row yet: nothing more passes (15 did)",
      [{ config: small, count: 5 }, { config: big, count: "drain" }],
    ],
    [
      "capacity raised 5 → 20 after a row was applied, with takes pending under both",
      [{ config: small, count: 2 }, "apply", { config: small, count: 3 }, { config: big, count: 1 }, { config: big, count: "drain" }],
    ],
    [
      "the applier's batch holds takes under both configs: each is applied under its own",
      [{ config: small, count: 4 }, { config: big, count: "drain" }, "apply", { config: big, count: "drain" }],
    ],
    [
      "4 shards → 2 with every take pending and no row yet: takes on dropped shards 2 and 3 still count",
      [{ config: four, count: "drain" }, { config: two, count: "drain" }],
    ],
    [
      "4 shards → 2 after rows were applied, with takes pending on every old shard",
      [{ config: four, count: 20 }, "apply", { config: four, count: "drain" }, { config: two, count: "drain" }],
    ],
    [
      "4 shards → 2 → 4, the applier run between: nothing regained",
      [{ config: four, count: "drain" }, "apply", { config: two, count: "drain" }, "apply", { config: four, count: "drain" }],
    ],
  ] as [string, Step[]][])("%s", async (_why, steps) => {
    const clocks: number[] = [];
    const asynchronous = await run(steps, false, clocks);
    const transactional = await run(steps, true, clocks);
    expect(asynchronous).toEqual(transactional);
  });
});
