// The shard planner at its edges (src/shared/shards/plan.ts), pure with explicit instants: a reservation split over a pair that leaves the debt on the second shard only, and which shards getValue's sample picks for given draws.
import { describe, expect, test } from "vitest";
import type { Params } from "../src/shared/kinds/algebra.js";
import { planTwo, sampleDistinct } from "../src/shared/shards/plan.js";

/** A token bucket shard of 10 tokens refilling 10 per 1000 ms, up to 5 reserved. */
const p: Params = { kind: "token bucket", rate: 10, period: 1000, capacity: 10, maxReserved: 5, phase: 0 };

describe("planTwo: a reservation whose debt lands on one shard", () => {
  test("0.5 and 0 reserve 1: the first keeps whole tokens (0), the second owes 0.5, repaid in 50 ms", () => {
    const plan = planTwo({ shard: 0, state: { value: 0.5, ts: 0 }, p }, { shard: 1, state: { value: 0, ts: 0 }, p }, 0, 1, true);
    // `+ 0`: the first shard's 0 comes out of Math.round(-0.25) as -0, the same number to every reader.
    const writes = plan.writes.map((w) => ({ shard: w.shard, state: { value: w.state.value + 0, ts: w.state.ts } }));
    expect({ ...plan, writes }).toStrictEqual({
      ok: true,
      retryAfter: 50,
      writes: [
        { shard: 0, state: { value: 0, ts: 0 } },
        { shard: 1, state: { value: -0.5, ts: 0 } },
      ],
      shards: [0, 1],
    });
  });
});

describe("sampleDistinct: k distinct shards of n from k draws", () => {
  test.each([
    // [why, n, k, draws, picks]
    ["the first draw 0 keeps shard 0; the second, 0.5 of the 3 left, picks shard 2", 4, 2, [0, 0.5], [0, 2]],
    ["the first draw 0.5 of 4 picks shard 2; the second, 0.5 of the 3 left (1, 0, 3), picks shard 0", 4, 2, [0.5, 0.5], [2, 0]],
    ["k above n picks every shard", 3, 5, [0, 0, 0], [0, 1, 2]],
  ] as [string, number, number, number[], number[]][])("%s", (_why, n, k, draws, picks) => {
    const left = [...draws];
    expect(sampleDistinct(n, k, () => left.shift()!)).toEqual(picks);
  });
});
