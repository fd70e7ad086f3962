// The shared simulated clock and preloading (tools/clock.ts): what installClock fakes and leaves real, and which modules preload imports.
import { describe, expect, test } from "vitest";
import { installClock, preload } from "../../tools/clock.js";

const T0 = Date.UTC(2025, 0, 1);

describe("installClock", () => {
  test("Date reads the simulated clock, and timers fire at their own simulated instants", async () => {
    const clock = installClock(T0);
    try {
      expect(Date.now()).toBe(T0);
      const fired: number[] = [];
      setTimeout(() => fired.push(Date.now()), 1000);
      setTimeout(() => fired.push(Date.now()), 3000);
      await clock.tickAsync(3000);
      expect(fired).toEqual([T0 + 1000, T0 + 3000]); // each at its own instant
      setTimeout(() => fired.push(Date.now()), 1000);
      clock.setSystemTime(T0 + 10_000); // moves Date and fires nothing
      expect(Date.now()).toBe(T0 + 10_000);
      expect(fired).toHaveLength(2);
    } finally {
      clock.uninstall();
    }
    expect(Date.now()).toBeGreaterThan(T0); // the real clock is back
  });

  test("promise plumbing stays real: a microtask runs without moving the clock", async () => {
    const clock = installClock(T0);
    try {
      let ran = false;
      queueMicrotask(() => (ran = true));
      await Promise.resolve();
      expect(ran).toBe(true);
      expect(Date.now()).toBe(T0);
    } finally {
      clock.uninstall();
    }
  });
});

describe("preload", () => {
  test("imports function modules and skips config, test and type-test files", async () => {
    const loaded: string[] = [];
    const load = (path: string) => async () => void loaded.push(path);
    const paths = ["./lib.ts", "./convex.config.ts", "./lib.test.ts", "./types.test-d.ts", "./test.setup.ts"];
    await preload(Object.fromEntries(paths.map((p) => [p, load(p)])));
    expect(loaded).toEqual(["./lib.ts", "./test.setup.ts"]);
  });
});
