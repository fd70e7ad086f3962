// Two of the demo's scenarios run whole (with --fast and few simulated minutes) under the demo's own
// clock: the seam scenario's real time is its own, not its lanes' overlapping times added up, and
// the generations scenario counts its deliberate crashes instead of letting convex-test print them.
import { afterEach, expect, test, vi } from "vitest";
import { modules as componentModules } from "convex-rate-limiter/test";
import { installClock, preload } from "../../tools/clock.js";
import { parseArgs } from "./options.js";
import { Progress } from "./progress.js";
import { generations, seam, T0, type RunContext } from "./scenarios.js";

const appModules = import.meta.glob("../convex/**/*.*s");

/** A demo run's context: the simulated clock, `--fast` options and a silent progress line. */
async function context(args: string[]): Promise<{ ctx: RunContext; done: () => void }> {
  await preload(appModules);
  await preload(componentModules);
  const parsed = parseArgs(["--fast", "--no-report", ...args]);
  if (parsed.kind !== "run") throw new Error(`bad arguments: ${JSON.stringify(parsed)}`);
  const clock = installClock(T0);
  const random = Math.random;
  const progress = new Progress({ write: () => true, isTTY: false }, () => performance.now());
  return {
    ctx: { clock, opts: parsed.options, progress },
    done: () => {
      clock.uninstall();
      Math.random = random;
    },
  };
}

afterEach(() => vi.restoreAllMocks());

test("the seam scenario's real time is at most the time it took, though it runs four lanes", async () => {
  const { ctx, done } = await context(["--minutes", "70"]);
  try {
    const before = performance.now();
    const result = await seam(ctx);
    const took = performance.now() - before;
    expect(result.calls).toBeGreaterThan(0);
    expect(result.wallMs).toBeGreaterThan(0);
    expect(result.wallMs).toBeLessThanOrEqual(took);
  } finally {
    done();
  }
}, 120_000);

test("the generations scenario's crashes are counted, said in one line, and not printed", async () => {
  const printed = vi.spyOn(console, "error");
  const { ctx, done } = await context([]);
  try {
    const result = await generations(ctx);
    expect(printed).not.toHaveBeenCalled();
    const row = result.summary.find((r) => r.label === "crashes");
    expect(Number(row?.value)).toBeGreaterThanOrEqual(2); // the 1st and the 3rd, at least
    expect(row?.note).toContain("on purpose");
    expect(result.checks.every((c) => c.ok)).toBe(true);
  } finally {
    done();
  }
}, 120_000);
