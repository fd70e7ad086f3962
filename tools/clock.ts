// A simulated clock and module preloading, for programs that drive convex-test outside vitest (run by tools/run.mjs).
import { install, type Clock, type FakeMethod } from "@sinonjs/fake-timers";

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
 * preload imports a convex-test module map (an `import.meta.glob` result) up front. convex-test
 * imports a function's module when the function is first called; inside a transaction (a nested
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
