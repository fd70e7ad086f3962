// withJitter as a pure function: tables of (retryAfter, maxJitterMs, draw) with the wait each
// gives, the inputs it refuses, and a property test of its bounds with fast-check's draws.
import { fc, test as prop } from "@fast-check/vitest";
import { describe, expect, test } from "vitest";
import { DEFAULT_MAX_JITTER_MS, withJitter } from "../src/client/index.js";
import { convexErrorData } from "./setup.js";

/** A `random` that always draws `x`. */
const draws = (x: number) => () => x;

describe("withJitter", () => {
  test("adds up to a second by default", () => {
    expect(DEFAULT_MAX_JITTER_MS).toBe(1_000);
  });

  test.each([
    // [retryAfter, maxJitterMs, draw, wait]
    [1_500, undefined, 0, 1_500], // the lowest draw adds nothing
    [1_500, undefined, 0.5, 2_000], // 1001 whole ms 0..1000, so 0.5 draws floor(500.5) = 500
    [1_500, undefined, 0.999_999, 2_500], // the highest draw adds the whole second
    [1_500, undefined, 1, 2_500], // a draw of exactly 1 counts as the top, not one past it
    [1_499.2, undefined, 0, 1_500], // retryAfter rounds up to whole ms: never early
    [1, 100, 0.5, 51], // floor(0.5 × 101) = 50
    [1_500, 0, 0.999, 1_500], // maxJitterMs 0: no jitter
    [1_500, 10.7, 0.99, 1_510], // a fractional maximum rounds down: 0..10
    [1_500, 10.7, 0, 1_500],
  ])("retryAfter %d, maxJitterMs %s, draw %d: waits %d ms", (retryAfter, maxJitterMs, draw, wait) => {
    expect(withJitter(retryAfter, { random: draws(draw), ...(maxJitterMs === undefined ? {} : { maxJitterMs }) })).toBe(
      wait,
    );
  });

  test.each([undefined, 0])("nothing to wait for (%s) waits 0 and draws nothing", (retryAfter) => {
    const random = () => {
      throw new Error("drew a number");
    };
    expect(withJitter(retryAfter, { random })).toBe(0);
  });

  test.each([
    ["retryAfter", -1, {}],
    ["retryAfter", NaN, {}],
    ["retryAfter", Infinity, {}],
    ["maxJitterMs", 1_000, { maxJitterMs: -1 }],
    ["maxJitterMs", 1_000, { maxJitterMs: Infinity }],
    ["random", 1_000, { random: draws(1.5) }],
    ["random", 1_000, { random: draws(-0.1) }],
    ["random", 1_000, { random: draws(NaN) }],
  ])("a bad %s is an error naming it (retryAfter %d)", async (field, retryAfter, options) => {
    expect(await convexErrorData(() => withJitter(retryAfter, options))).toMatchObject({
      kind: "InvalidRateLimit",
      field,
    });
  });

  prop.prop([
    fc.integer({ min: 1, max: 10 * 60_000 }),
    fc.integer({ min: 0, max: 60_000 }),
    fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  ])("waits a whole number of ms from retryAfter to retryAfter + maxJitterMs", (retryAfter, maxJitterMs, draw) => {
    const wait = withJitter(retryAfter, { maxJitterMs, random: draws(draw) });
    expect(Number.isInteger(wait)).toBe(true);
    expect(wait).toBeGreaterThanOrEqual(retryAfter);
    expect(wait).toBeLessThanOrEqual(retryAfter + maxJitterMs);
  });

  test("each whole ms of the jitter is equally likely", () => {
    // 1,100 draws spread evenly over [0, 1) (midpoints, clear of the edges between values): 11
    // values of jitter, 0..10 ms, 100 draws each.
    const counts = new Array<number>(11).fill(0);
    for (let i = 0; i < 1_100; i++) {
      const wait = withJitter(5_000, { maxJitterMs: 10, random: draws((i + 0.5) / 1_100) });
      counts[wait - 5_000]!++;
    }
    expect(counts).toEqual(new Array<number>(11).fill(100));
  });
});
