// The offline Playground's what-if simulation: table-driven requests at explicit simulated instants,
// plus a property (fast-check) that no stretch of time admits more than the token bucket allows.
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import type { RateLimitConfig } from "convex-rate-limiter";
import { simulate, type SimRequest } from "./simulate.js";

const SECOND = 1000;
/** 5 tokens per 10 s: one token every 2 s. */
const bucket: RateLimitConfig = { kind: "token bucket", rate: 5, period: 10 * SECOND };

/** Requests of `count` at the given instants (ms), without reserve unless asked. */
function at(times: number[], count = 1, reserve = false): SimRequest[] {
  return times.map((t, i) => ({ id: i + 1, t, count, reserve }));
}

/** The outcome kinds, in order. */
function kinds(config: RateLimitConfig, requests: SimRequest[]): string[] {
  return simulate(config, requests).decisions.map((d) => d.outcome.kind);
}

describe("simulate", () => {
  it.each([
    // [why, config, requests, expected kinds]
    ["a full bucket admits up to its capacity at once", bucket, at([0, 0, 0, 0, 0, 0]), ["admitted", "admitted", "admitted", "admitted", "admitted", "refused"]],
    ["capacity 2 refuses the third of a burst", { ...bucket, capacity: 2 }, at([0, 0, 0]), ["admitted", "admitted", "refused"]],
    ["one token comes back every 2 s", { ...bucket, capacity: 1 }, at([0, 1999, 2000]), ["admitted", "refused", "admitted"]],
    ["a fixed window refills only at its boundary", { kind: "fixed window", rate: 1, period: 10 * SECOND }, at([0, 9999, 10_000]), ["admitted", "refused", "admitted"]],
    ["sharded configs are simulated as their whole", { ...bucket, shards: 5 }, at([0, 0, 0, 0, 0, 0]), ["admitted", "admitted", "admitted", "admitted", "admitted", "refused"]],
    ["a count of 0 peeks and is ok on a full bucket", bucket, at([0], 0), ["admitted"]],
  ] satisfies [string, RateLimitConfig, SimRequest[], string[]][])("%s", (_why, config, requests, expected) => {
    expect(kinds(config, requests)).toEqual(expected);
  });

  it("says when a refused request would succeed, and that instant succeeds", () => {
    const config = { ...bucket, capacity: 1 };
    const first = simulate(config, at([0, 500]));
    const refused = first.decisions[1]?.outcome;
    expect(refused).toEqual({ kind: "refused", retryAt: 2000 });
  });

  it("records the tokens around each decision; a refusal changes nothing", () => {
    const { decisions, segments } = simulate({ ...bucket, capacity: 2 }, at([0, 0, 0]));
    expect(decisions.map((d) => [d.before, d.after])).toEqual([
      [2, 1],
      [1, 0],
      [0, 0],
    ]);
    expect(segments).toEqual([
      { from: 0, state: { value: 1, ts: 0 } },
      { from: 0, state: { value: 0, ts: 0 } },
    ]);
  });

  it("reserves into debt down to maxReserved, with the instant the debt is repaid", () => {
    const config = { ...bucket, capacity: 1, maxReserved: 2 };
    const { decisions } = simulate(config, at([0, 0, 0, 0], 1, true));
    expect(decisions.map((d) => d.outcome)).toEqual([
      { kind: "admitted" },
      { kind: "reserved", runAt: 2000 }, // debt 1, repaid at 0.5 token/s
      { kind: "reserved", runAt: 4000 }, // debt 2
      { kind: "refused", retryAt: 2000 }, // deeper than maxReserved until one token is back
    ]);
  });

  it("refuses a reservation while in debt until the debt is shallow enough (negative need)", () => {
    // After reserving 4 at t=0 the value is -4 (maxReserved 5); a reservation of 2 needs the
    // value back to -3, i.e. 1 token, 2 s later.
    const config = { ...bucket, capacity: 0, maxReserved: 5 };
    const requests: SimRequest[] = [
      { id: 1, t: 0, count: 4, reserve: true },
      { id: 2, t: 0, count: 2, reserve: true },
      { id: 3, t: 2000, count: 2, reserve: true },
    ];
    expect(simulate(config, requests).decisions.map((d) => d.outcome)).toEqual([
      { kind: "reserved", runAt: 8000 },
      { kind: "refused", retryAt: 2000 },
      { kind: "reserved", runAt: 2000 + 10_000 }, // debt 5 at 0.5 token/s
    ]);
  });

  it("reports a request that can never succeed as invalid, without taking anything", () => {
    const config = { ...bucket, capacity: 1, maxReserved: 1 };
    const { decisions, segments } = simulate(config, at([0], 3, true));
    expect(decisions[0]?.outcome.kind).toBe("invalid");
    expect(segments).toEqual([]);
  });

  it("replays the same requests under another config (the what-if)", () => {
    const requests = at([0, 0, 0, 2000]);
    expect(kinds(bucket, requests)).toEqual(["admitted", "admitted", "admitted", "admitted"]);
    expect(kinds({ ...bucket, capacity: 2 }, requests)).toEqual(["admitted", "admitted", "refused", "admitted"]);
  });
});

// Never more admitted over [t0, t1] than capacity + rate × (t1 - t0) / period (the bucket's bound).
test.prop(
  [
    fc.integer({ min: 1, max: 20 }),
    fc.integer({ min: 1, max: 10 }),
    fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 60 }),
  ],
  { numRuns: 200 },
)("the simulation never admits more than a token bucket allows", (rate, capacity, gaps) => {
  const config: RateLimitConfig = { kind: "token bucket", rate, period: SECOND, capacity };
  let t = 0;
  const requests = gaps.map((gap, i) => ({ id: i + 1, t: (t += gap), count: 1, reserve: false }));
  const admitted = simulate(config, requests)
    .decisions.filter((d) => d.outcome.kind === "admitted")
    .map((d) => d.request.t);
  for (let i = 0; i < admitted.length; i++) {
    for (let j = i; j < admitted.length; j++) {
      const span = (admitted[j] ?? 0) - (admitted[i] ?? 0);
      expect(j - i + 1).toBeLessThanOrEqual(capacity + (rate * span) / SECOND + 1e-9);
    }
  }
});
