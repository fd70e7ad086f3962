// The shared seeded randomness (tools/random.ts): mulberry32's pinned draws, its range, and independent, replayable streams.
import { afterEach, describe, expect, test } from "vitest";
import { seedMathRandom, seededRandom, streamSeed } from "../../tools/random.js";

const draws = (next: () => number, n: number) => Array.from({ length: n }, () => next());

describe("seededRandom", () => {
  test("the same seed replays the same draws", () => {
    expect(draws(seededRandom(42), 5)).toEqual(draws(seededRandom(42), 5));
  });

  test("the draws are pinned: a change to the generator would change every seeded test", () => {
    // mulberry32's first draws for seed 1.
    expect(draws(seededRandom(1), 3)).toEqual([0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
  });

  test("different seeds give different draws", () => {
    expect(draws(seededRandom(1), 5)).not.toEqual(draws(seededRandom(2), 5));
  });

  test("every draw is in [0, 1)", () => {
    for (const x of draws(seededRandom(7), 10_000)) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });

  test("seeds are taken mod 2^32, as whole numbers", () => {
    expect(draws(seededRandom(2 ** 32 + 5), 3)).toEqual(draws(seededRandom(5), 3));
  });
});

describe("streamSeed", () => {
  test.each([
    ["the same seed and label give the same stream", 1, "a", 1, "a", true],
    ["another label gives another stream", 1, "a", 1, "b", false],
    ["another seed gives another stream", 1, "a", 2, "a", false],
  ] as const)("%s", (_what, seedA, labelA, seedB, labelB, same) => {
    expect(streamSeed(seedA, labelA) === streamSeed(seedB, labelB)).toBe(same);
  });

  test("is a whole number in [0, 2^32)", () => {
    const s = streamSeed(123, "picks/token bucket/0.5");
    expect(Number.isInteger(s) && s >= 0 && s < 2 ** 32).toBe(true);
  });
});

describe("seedMathRandom", () => {
  const original = Math.random;
  afterEach(() => {
    Math.random = original;
  });

  test("Math.random draws the labelled stream of the seed", () => {
    seedMathRandom(3, "shards");
    expect(draws(Math.random, 4)).toEqual(draws(seededRandom(streamSeed(3, "shards")), 4));
  });
});
