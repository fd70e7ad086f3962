// What a program run by bench/run.mjs needs to drive convex-test outside vitest: a simulated
// clock, seeded randomness, and module preloading.
import { install, type Clock, type FakeMethod } from "@sinonjs/fake-timers";
import { seededRandom as prng } from "../test/model.js";

/** A PRNG (mulberry32) yielding uniform numbers in [0, 1), fully determined by its seed. */
export { prng };

/**
 * The timers faked by {@link installClock}. `Date` is what the component reads. The timer
 * functions make convex-test's scheduled functions (it arms them with `setTimeout`) fire on the
 * simulated clock, via `clock.tickAsync(ms)` and `t.finishInProgressScheduledFunctions()`.
 * Left real: `queueMicrotask` and `nextTick` (promise plumbing), and `performance`/`hrtime`
 * (measuring how long the program itself took).
 */
export const FAKED = [
  "Date",
  "setTimeout",
  "clearTimeout",
  "setInterval",
  "clearInterval",
  "setImmediate",
  "clearImmediate",
] as const satisfies readonly FakeMethod[];

/**
 * installClock replaces the clock with a simulated one starting at `now` (ms since the epoch).
 * Move it with `clock.setSystemTime(ms)` (no timers fire) or `await clock.tickAsync(ms)` (timers
 * fire at their own instants). Call `clock.uninstall()` at the end.
 */
export function installClock(now: number): Clock {
  // Timers armed before the install (vite's) are cleared through the real clearTimeout.
  return install({ now, toFake: [...FAKED], shouldClearNativeTimers: true });
}

/**
 * Derives the seed of one independent stream from the run's seed and a label, so every scenario
 * replays on its own, whatever ran before it.
 */
export function streamSeed(seed: number, label: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Replaces `Math.random` (which the component draws its shards from) with a seeded stream. */
export function seedMathRandom(seed: number, label: string): void {
  Math.random = prng(streamSeed(seed, label));
}

/**
 * Imports a convex-test module map (an `import.meta.glob` result) up front. convex-test imports a
 * function's module when the function is first called; inside a transaction (a nested
 * `ctx.runMutation` from `t.run`) that first import would go through vite's module runner,
 * which arms a `setTimeout` that convex-test forbids there. Config and test files are skipped:
 * they only run inside Convex or vitest.
 */
export async function preload(modules: Record<string, () => Promise<unknown>>): Promise<void> {
  for (const [path, load] of Object.entries(modules)) {
    if (/convex\.config\.|\.test\.|\.test-d\./.test(path)) continue;
    await load();
  }
}
