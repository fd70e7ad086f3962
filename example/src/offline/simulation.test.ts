// The offline Playground's simulation against the real component: the example app on convex-test
// (makeTest, as its own tests use it), each call at the simulated instant the simulation asks for
// (fake timers set the clock). Checks decisions, shards, validation, readings, waits and replays,
// at the instants the deployment's moving clock gives them (two commits in a ms, then the next).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RateLimitConfig } from "convex-rate-limiter";
import { seededRandom } from "../../../tools/random.js";
import { makeTest } from "../../convex/test.setup.js";
import { Lane, type LaneRequest } from "./lane.js";
import { ORIGIN, simplify, Simulation } from "./simulation.js";

/** 5 tokens per 10 s: one every 2 s. */
const bucket: RateLimitConfig = { kind: "token bucket", rate: 5, period: 10_000 };

/** A lane on a fresh in-process deployment; each call runs with the clock at its instant. */
function freshLane(): Lane {
  const t = makeTest();
  return new Lane(async (at, fn) => {
    vi.setSystemTime(at);
    return fn(t);
  });
}

function one(config: RateLimitConfig, count = 1, reserve = false): LaneRequest {
  return { config, count, reserve };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(ORIGIN);
  // The component draws shards with Math.random: seeded, so each run draws the same.
  vi.spyOn(Math, "random").mockImplementation(seededRandom(16));
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("Simulation", () => {
  it("decides a burst as the component does, at the instants the deployment gives it, recording the tokens after each request", async () => {
    const sim = await Simulation.start(freshLane(), bucket);
    await sim.fire(one(bucket), 6);
    const { entries, available, untilFull, clock, past } = sim.snapshot();
    // Two requests in a ms, then the next ms: the deployment's clock never runs behind a commit.
    expect(entries.map((e) => e.t)).toEqual([0, 0, 1, 1, 2, 2]);
    expect(entries.map((e) => e.outcome)).toEqual([
      ...Array.from({ length: 5 }, () => ({ kind: "admitted" })),
      { kind: "refused", retryAt: 2000 }, // 0.001 left at 2 ms, one token every 2 s (0.0005 a ms)
    ]);
    // Each ms gives back 0.0005 of a token, read in the request's own transaction.
    expect(entries.map((e) => e.after)).toEqual([4, 3, 2.0005, 1.0005, 0.001, 0.001]);
    // The refusal committed too, so the clock is at 3 ms, and every reading is taken there.
    expect(clock).toBe(3);
    expect(past.filter((p) => p.t > 0)).toEqual([
      { t: 1, v: 3.0005 }, // the clock moving on: the tokens before the next request
      { t: 1, v: 2.0005 },
      { t: 1, v: 1.0005 },
      { t: 2, v: 1.001 },
      { t: 2, v: 0.001 },
      { t: 2, v: 0.001 },
      { t: 3, v: 0.0015 },
    ]);
    expect(available).toBe(0.0015);
    expect(untilFull).toBe(9997); // (5 - 0.0015) / 0.0005
  });

  it("decides each request at the clock it shows: the component's instant, and the clock after", async () => {
    // The Playground reads the deployment: a reading the clock labels 1 ms must be taken at 1 ms.
    const lane = freshLane();
    const seen: number[] = [];
    const limit = lane.limit.bind(lane);
    lane.limit = async (at, request) => {
      const decision = await limit(at, request);
      seen.push(decision.at - ORIGIN);
      return decision;
    };
    const sim = await Simulation.start(lane, bucket);
    await sim.fire(one(bucket), 5);
    expect(seen).toEqual([0, 0, 1, 1, 2]);
    expect(sim.snapshot().entries.map((e) => e.t)).toEqual(seen);
    // The clock is where the next call runs: 2 ms after one commit at 2 ms.
    expect(sim.snapshot().clock).toBe(2);
    expect(await lane.now(ORIGIN)).toBe(ORIGIN + 2);
  });

  it("reports the shards the component used, which account for every token taken", async () => {
    const sharded: RateLimitConfig = { kind: "token bucket", rate: 10, period: 10_000, shards: 5 };
    const sim = await Simulation.start(freshLane(), sharded);
    await sim.fire(one(sharded), 12);
    const { entries } = sim.snapshot();
    expect(entries.every((e) => e.sharded && e.shards !== undefined && e.shards.length > 0)).toBe(true);
    expect(entries.flatMap((e) => e.shards ?? []).every((s) => Number.isInteger(s) && s >= 0 && s < 5)).toBe(true);
    // Each shard holds 2 of the 10 tokens, and a request of 1 is served by one shard: no shard is
    // reported for more than 2 admissions (it gets back 0.0002 of a token a ms), and, at the burst's
    // first instant, before anything refills, the tokens left are the 10 minus those admitted. (The
    // deployment's clock moves on after two requests; the fixed window below accounts for a whole
    // burst, as nothing refills within its window.)
    const admitted = entries.filter((e) => e.outcome.kind === "admitted");
    for (const e of admitted) expect(e.shards).toHaveLength(1);
    const uses = new Map<number, number>();
    for (const s of admitted.flatMap((e) => e.shards ?? [])) uses.set(s, (uses.get(s) ?? 0) + 1);
    expect(Math.max(...uses.values())).toBeLessThanOrEqual(2);
    const first = entries.filter((e) => e.t === 0);
    expect(first.map((e) => [e.outcome.kind, e.after])).toEqual([
      ["admitted", 9],
      ["admitted", 8],
    ]);
    expect(entries.filter((e) => e.outcome.kind === "refused")).toHaveLength(12 - admitted.length);
  });

  it("accounts for every token a sharded fixed window took: no refill within its window", async () => {
    const sharded: RateLimitConfig = { kind: "fixed window", rate: 10, period: 10_000, shards: 5, start: 0 };
    const sim = await Simulation.start(freshLane(), sharded);
    await sim.fire(one(sharded), 12);
    const { entries, available } = sim.snapshot();
    const admitted = entries.filter((e) => e.outcome.kind === "admitted");
    expect(entries.flatMap((e) => e.shards ?? []).every((s) => Number.isInteger(s) && s >= 0 && s < 5)).toBe(true);
    expect(available).toBe(10 - admitted.length);
    expect(entries.map((e) => e.after)).toEqual(
      entries.map((_, i) => 10 - entries.slice(0, i + 1).filter((e) => e.outcome.kind === "admitted").length),
    );
  });

  it("names the field of a request that can never succeed, before anything is fired", async () => {
    // The case: count 99 can't fit capacity 5 plus 5 reserved.
    const config: RateLimitConfig = { ...bucket, maxReserved: 5 };
    const sim = await Simulation.start(freshLane(), config);
    const verdict = await sim.check(one(config, 99, true));
    expect(verdict).toEqual({
      ok: false,
      error: {
        kind: "InvalidRateLimit",
        field: "count",
        value: "99",
        message: "count = 99: can never succeed: it exceeds the capacity (5) plus what may be reserved (5 in all)",
      },
    });
    expect(sim.snapshot().entries).toEqual([]);
  });

  it("names a bad config's field with the component's message", async () => {
    const sim = await Simulation.start(freshLane(), bucket);
    const verdict = await sim.check(one({ ...bucket, shards: 9 }));
    expect(verdict.ok === false && verdict.error.field).toBe("config.shards");
  });

  it("records an impossible request fired anyway as an error that took nothing", async () => {
    const config: RateLimitConfig = { ...bucket, maxReserved: 5 };
    const sim = await Simulation.start(freshLane(), config);
    await sim.fire(one(config, 99, true), 1);
    const [entry] = sim.snapshot().entries;
    expect(entry?.outcome).toEqual({
      kind: "invalid",
      message: "count = 99: can never succeed: it exceeds the capacity (5) plus what may be reserved (5 in all)",
    });
    expect(sim.snapshot().available).toBe(5);
  });

  it("waits on the simulated clock, with the curve exact at the end and where the limit is full", async () => {
    const sim = await Simulation.start(freshLane(), bucket);
    await sim.fire(one(bucket, 3), 1);
    await sim.wait(3000);
    let s = sim.snapshot();
    expect(s.clock).toBe(3000);
    expect(s.available).toBe(3.5); // 2 left + 1.5 refilled
    expect(s.past).toEqual([
      { t: 0, v: 5 },
      { t: 0, v: 2 },
      { t: 3000, v: 3.5 },
    ]);
    // Projected: full 3 s later, at 6 s, then flat.
    expect(s.untilFull).toBe(3000);
    expect(s.future.slice(0, 2)).toEqual([
      { t: 3000, v: 3.5 },
      { t: 6000, v: 5 },
    ]);
    await sim.waitUntilFull();
    s = sim.snapshot();
    expect([s.clock, s.available, s.untilFull]).toEqual([6000, 5, 0]);
  });

  it("reserves into debt down to maxReserved, with the instant the work may run", async () => {
    const config: RateLimitConfig = { ...bucket, capacity: 1, maxReserved: 2 };
    const sim = await Simulation.start(freshLane(), config);
    await sim.fire(one(config, 1, true), 4);
    expect(sim.snapshot().entries.map((e) => [e.t, e.outcome])).toEqual([
      [0, { kind: "admitted" }],
      [0, { kind: "reserved", runAt: 2000 }],
      [1, { kind: "reserved", runAt: 4000 }], // -0.9995 at 1 ms, -1.9995 after: 0 again at 4 s
      [1, { kind: "refused", retryAt: 2000 }], // a reserve of 1 fits when -1 is back, 1,999 ms on
    ]);
    expect(sim.snapshot().entries.map((e) => e.after)).toEqual([0, -1, -1.9995, -1.9995]);
    expect([sim.snapshot().clock, sim.snapshot().available]).toEqual([2, -1.999]);
  });

  it("steps a fixed window's curve at each boundary", async () => {
    const window: RateLimitConfig = { kind: "fixed window", rate: 2, period: 1000, capacity: 4, start: 0 };
    const sim = await Simulation.start(freshLane(), window);
    await sim.fire(one(window, 4), 1);
    await sim.wait(2500);
    expect(sim.snapshot().past).toEqual([
      { t: 0, v: 4 },
      { t: 0, v: 0 },
      { t: 1000, v: 2 },
      { t: 2000, v: 4 }, // full: no more boundaries read
      { t: 2500, v: 4 },
    ]);
  });

  it("draws a sliding window level while nothing slides out, rising from the boundary, full at the next", async () => {
    // 5 per 10 s, windows aligned to 0. Five taken at 0: the window before took nothing, so the
    // tokens stay at 0 until 10 s, then come back as the window [0, 10 s) slides out, all by 20 s.
    const sliding: RateLimitConfig = { kind: "sliding window", exact: false, rate: 5, period: 10_000, start: 0 };
    const sim = await Simulation.start(freshLane(), sliding);
    await sim.fire(one(sliding), 6);
    let s = sim.snapshot();
    expect(s.entries.map((e) => e.t)).toEqual([0, 0, 1, 1, 2, 2]); // within one window all the same
    expect(s.entries.at(-1)?.outcome).toEqual({ kind: "refused", retryAt: 12_000 }); // 5 / 10 s from 10 s
    expect(s.clock).toBe(3);
    expect(s.untilFull).toBe(20_000 - 3);
    expect(s.future).toEqual([
      { t: 3, v: 0 },
      { t: 10_000, v: 0 },
      { t: 20_000, v: 5 },
      { t: 3 + Math.round(19_997 * 1.15), v: 5 }, // 15 % past full
    ]);
    // At 12 s one token is back and is taken: the 5 of [0, 10 s) keep sliding out until 20 s (4 back
    // by then), then the 1 of [10 s, 20 s) slides out, the last token back at 30 s.
    await sim.wait(12_000 - s.clock);
    await sim.fire(one(sliding), 1);
    s = sim.snapshot();
    expect(s.entries.at(-1)?.outcome).toEqual({ kind: "admitted" });
    expect(s.past.slice(-5)).toEqual([
      { t: 2, v: 0 }, // after the burst
      { t: 3, v: 0 }, // the clock moving on with the deployment's
      { t: 10_000, v: 0 }, // level until the boundary
      { t: 12_000, v: 1 },
      { t: 12_000, v: 0 }, // the request at 12 s
    ]);
    expect(s.untilFull).toBe(18_000);
    expect(s.future.slice(0, 3)).toEqual([
      { t: 12_000, v: 0 },
      { t: 20_000, v: 4 },
      { t: 30_000, v: 5 },
    ]);
  });

  it.each([
    ["unsharded", { kind: "sliding window", exact: false, rate: 7, period: 3000 }],
    ["over 3 shards", { kind: "sliding window", exact: false, rate: 9, period: 3000, shards: 3 }],
  ] satisfies [string, RateLimitConfig][])(
    "draws a sliding window (%s) so that the component agrees with the curve at every instant",
    async (_name, config) => {
      // Random bursts and waits; then the curve's straight lines, read between its corners, must
      // give what getValue says at any instant.
      const lane = freshLane();
      const sim = await Simulation.start(lane, config);
      const random = seededRandom(7);
      for (let i = 0; i < 8; i++) {
        await sim.fire(one(config), 1 + Math.floor(random() * 4));
        await sim.wait(Math.floor(random() * 2500));
      }
      const { future, clock, untilFull } = sim.snapshot();
      // The projection reaches full, at the instant the component says it is.
      expect(future.at(-1)?.v).toBe(config.rate);
      expect(future.find((p) => p.v === config.rate)?.t).toBe(clock + untilFull);
      expect(await lane.available(ORIGIN + clock + untilFull - 1, config)).toBeLessThan(config.rate);
      const end = future.at(-1)?.t ?? clock;
      let checked = 0;
      for (let i = 0; i < 40; i++) {
        const t = clock + Math.floor(random() * (end - clock));
        const between = future.findIndex((p) => p.t > t);
        const [p, q] = [future[between - 1], future[between]];
        if (p === undefined || q === undefined) continue;
        const line = p.v + ((q.v - p.v) * (t - p.t)) / (q.t - p.t);
        expect(line).toBeCloseTo(await lane.available(ORIGIN + t, config), 9);
        checked++;
      }
      expect(checked).toBe(40);
    },
  );

  it.each([
    ["unsharded", { kind: "sliding window", rate: 7, period: 3000 }],
    ["over 3 shards", { kind: "sliding window", rate: 9, period: 3000, shards: 3 }],
  ] satisfies [string, RateLimitConfig][])(
    "draws an exact sliding window (%s) as steps the component agrees with at every instant",
    async (_name, config) => {
      // Random bursts and waits; then the curve's steps (held until the next corner) must give what
      // getValue says at any instant: each take's tokens come back a period after it.
      const lane = freshLane();
      const sim = await Simulation.start(lane, config);
      const random = seededRandom(11);
      for (let i = 0; i < 8; i++) {
        await sim.fire(one(config), 1 + Math.floor(random() * 4));
        await sim.wait(Math.floor(random() * 1500));
      }
      const { future, clock, untilFull } = sim.snapshot();
      expect(future.at(-1)?.v).toBe(config.rate);
      expect(future.find((p) => p.v === config.rate)?.t).toBe(clock + untilFull);
      expect(await lane.available(ORIGIN + clock + untilFull - 1, config)).toBeLessThan(config.rate);
      // Steps: more than two corners (not a straight line to full).
      expect(future.length).toBeGreaterThan(2);
      const end = future.at(-1)?.t ?? clock;
      for (let i = 0; i < 40; i++) {
        const t = clock + Math.floor(random() * (end - clock));
        const held = future.filter((p) => p.t <= t).at(-1)!;
        expect(held.v).toBeCloseTo(await lane.available(ORIGIN + t, config), 9);
      }
    },
  );

  it("applies a config change from the current instant, as a deployment reads its rows", async () => {
    const sim = await Simulation.start(freshLane(), bucket);
    await sim.fire(one(bucket), 4); // at 0, 0, 1 and 1 ms: 1.0005 left, and the clock at 2 ms
    const before = sim.snapshot();
    expect([before.clock, before.available]).toEqual([2, 1.001]);
    const larger: RateLimitConfig = { ...bucket, capacity: 10 };
    await sim.setConfig(larger);
    const s = sim.snapshot();
    expect(s.config).toEqual(larger);
    expect(s.clock).toBe(2);
    expect(s.changes).toEqual([2]);
    expect(s.available).toBe(1.001); // the row as it was: a config change takes nothing and adds nothing
    expect(s.untilFull).toBeGreaterThan(0);
    await sim.setConfig(larger);
    expect(sim.snapshot().changes).toEqual([2]); // the same config again changes nothing
  });

  it("starts the curve from a config changed before any request: no spike to the old capacity (after Reset)", async () => {
    const reserving: RateLimitConfig = { ...bucket, rate: 50, maxReserved: 100 };
    const sim = await Simulation.start(freshLane(), reserving); // full at 50
    await sim.setConfig(bucket); // then the form's limit, 5, before anything is fired
    const s = sim.snapshot();
    expect(s.past).toEqual([{ t: 0, v: 5 }]);
    expect(s.changes).toEqual([]);
    expect(Math.max(...s.past.map((p) => p.v), ...s.future.map((p) => p.v))).toBe(5);
  });

  it("leaves one jump for a config typed in steps at one instant: to the last", async () => {
    const sim = await Simulation.start(freshLane(), bucket);
    await sim.fire(one(bucket), 2); // 3 left of 5, and the clock a ms on, at 3.0005
    await sim.setConfig({ ...bucket, capacity: 1 }); // typing 10: first 1 (the row holds at most 1)...
    expect(sim.snapshot().past.at(-1)).toEqual({ t: 1, v: 1 });
    await sim.setConfig({ ...bucket, capacity: 10 }); // ...then 10 (the row still holds 3.0005)
    const { past, changes } = sim.snapshot();
    expect(changes).toEqual([1]);
    expect(past.filter((p) => p.t === 0).map((p) => p.v)).toEqual([5, 4, 3]); // the start, two requests
    // The step to 1 left nothing; 10 holds what the row holds, so there is no jump at all.
    expect(past.filter((p) => p.t === 1).map((p) => p.v)).toEqual([3.0005]);
  });

  it("replays the same requests under another limit (the what-if)", async () => {
    const sim = await Simulation.start(freshLane(), bucket);
    await sim.fire(one(bucket), 3);
    await sim.wait(2000);
    await sim.fire(one(bucket), 1);
    const { entries, clock } = sim.snapshot();
    expect(entries.map((e) => e.outcome.kind)).toEqual(["admitted", "admitted", "admitted", "admitted"]);
    expect(entries.map((e) => e.t)).toEqual([0, 0, 1, 2001]);
    const replayed = await Simulation.replay(freshLane(), { ...bucket, capacity: 2 }, entries, clock);
    const s = replayed.snapshot();
    expect(s.entries.map((e) => [e.t, e.outcome.kind])).toEqual([
      [0, "admitted"],
      [0, "admitted"],
      [1, "refused"], // 0.0005 back by then
      [2001, "admitted"],
    ]);
    expect(s.clock).toBe(clock);
  });
});

describe("Lane.refillAt", () => {
  /** A lane whose tokens follow `curve` (ms → tokens) instead of asking a deployment. */
  function laneOf(curve: (t: number) => number): Lane {
    const lane = new Lane(() => Promise.reject(new Error("no deployment")));
    lane.available = async (at) => curve(at - ORIGIN);
    return lane;
  }

  it.each([
    ["full at once", (_t: number) => 5, 0],
    ["full at 7,001 ms, rising evenly", (t: number) => Math.min(5, 1 + (4 * t) / 7001), 7001],
    ["levelling off below capacity at 7,000 ms (a row held under it)", (t: number) => Math.min(3, (3 * t) / 7000), 7000],
    ["never rising", (_t: number) => 1, 0],
  ])("%s", async (_why, curve, expected) => {
    expect(await laneOf(curve).refillAt(ORIGIN, bucket)).toBe(ORIGIN + expected);
  });

  it("looks past a sliding window's level stretch: nothing slides out until its next boundary", async () => {
    // 5 per 10 s, emptied early in a window: level at 0 for 9.5 s, then back to 5 over the next window.
    const sliding: RateLimitConfig = { kind: "sliding window", exact: false, rate: 5, period: 10_000 };
    const curve = (t: number) => Math.min(5, Math.max(0, (5 * (t - 9500)) / 10_000));
    expect(await laneOf(curve).refillAt(ORIGIN, sliding)).toBe(ORIGIN + 19_500);
  });

  it("finds the first whole ms at which the limit is full, even deep in debt", async () => {
    const lane = freshLane();
    const config: RateLimitConfig = { ...bucket, maxReserved: 1000 };
    await lane.limit(ORIGIN, one(config, 1000, true)); // 995 owed at 0.5 a second
    expect(await lane.refillAt(ORIGIN, config)).toBe(ORIGIN + 2_000_000);
  });
});

describe("simplify", () => {
  it.each([
    ["keeps a single point", [{ t: 0, v: 1 }], [{ t: 0, v: 1 }]],
    [
      "drops points on a straight rise",
      [
        { t: 0, v: 0 },
        { t: 1, v: 1 },
        { t: 2, v: 2 },
      ],
      [
        { t: 0, v: 0 },
        { t: 2, v: 2 },
      ],
    ],
    [
      "keeps a corner",
      [
        { t: 0, v: 0 },
        { t: 1, v: 1 },
        { t: 2, v: 1 },
      ],
      [
        { t: 0, v: 0 },
        { t: 1, v: 1 },
        { t: 2, v: 1 },
      ],
    ],
    [
      "keeps a drop (two points at one instant)",
      [
        { t: 0, v: 5 },
        { t: 0, v: 2 },
        { t: 1, v: 3 },
      ],
      [
        { t: 0, v: 5 },
        { t: 0, v: 2 },
        { t: 1, v: 3 },
      ],
    ],
  ])("%s", (_why, points, expected) => {
    expect(simplify(points)).toEqual(expected);
  });
});
