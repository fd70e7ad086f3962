// `npm run demo`: runs the example app's own Convex functions in-process on convex-test with a
// simulated clock, through scripted traffic, and reports what the rate limiter decided: a chart,
// a summary and checks per scenario on stdout, and an HTML report. `--help` lists the options.
//
// It is a program, not a test: tools/run.mjs loads it through vite's module runner (convex-test
// needs `import.meta.glob`), and @sinonjs/fake-timers (tools/clock.ts) drives the clock:
//   node tools/run.mjs example/demo/main.ts [options]
import { writeFileSync } from "node:fs";
import path from "node:path";
import { modules as componentModules } from "convex-rate-limiter/test";
import { installClock, preload } from "../../tools/clock.js";
import { duration, num } from "./format.js";
import { parseArgs, reportPathError, type ScenarioId } from "./options.js";
import { Progress } from "./progress.js";
import { renderReport } from "./report.js";
import { apiCalls, generations, llm, messages, overrides, seam, signups, T0, type RunContext } from "./scenarios.js";
import { closingText, scenarioText, useColor } from "./text.js";
import type { ScenarioResult } from "./types.js";

/** The example app's modules, loaded up front (see `preload`). */
const appModules = import.meta.glob("../convex/**/*.*s");

/** Each scenario's runner; sign-ups report two variants. */
const RUNNERS: Record<ScenarioId, (ctx: RunContext) => Promise<ScenarioResult[]>> = {
  messages: async (ctx) => [await messages(ctx)],
  signups: (ctx) => signups(ctx),
  llm: async (ctx) => [await llm(ctx)],
  api: async (ctx) => [await apiCalls(ctx)],
  seam: async (ctx) => [await seam(ctx)],
  generations: async (ctx) => [await generations(ctx)],
  overrides: async (ctx) => [await overrides(ctx)],
};

/**
 * Ends the program with `code`. The launcher exits 0 once `main` returns, so a failed check or a
 * bad argument has to end it here. Output written so far is not lost: on Linux, writes to a
 * terminal, a file or a pipe are synchronous.
 */
function exit(code: number): never {
  process.exit(code);
}

/** Runs the demo with `argv`, the arguments after the entry. */
export async function main(argv: readonly string[]): Promise<void> {
  const started = performance.now();
  const parsed = parseArgs(argv);
  if (parsed.kind === "help") {
    console.log(parsed.text);
    return;
  }
  if (parsed.kind === "error") {
    process.stderr.write(`demo: ${parsed.message}\nrun \`npm run demo -- --help\` for the options\n`);
    exit(2);
  }
  const opts = parsed.options;
  const unwritable = opts.report === null ? null : reportPathError(opts.report, process.cwd());
  if (unwritable !== null) {
    process.stderr.write(`demo: ${unwritable}\n`);
    exit(2);
  }
  const text = { width: opts.width, color: useColor(process.stdout, process.env) };
  const progress = new Progress(process.stderr, () => performance.now());
  const out = (lines: readonly string[]) => process.stdout.write(lines.map((l) => `${l}\n`).join(""));

  out([
    `convex-rate-limiter demo: the example app's Convex functions on convex-test,`,
    `simulated clock from ${new Date(T0).toISOString()}, seed ${opts.seed}${opts.fast ? ", fast" : ""}.`,
    "",
  ]);
  progress.start("loading the example app");
  await preload(appModules);
  await preload(componentModules);
  progress.done("loaded");

  const count = opts.scenarios.reduce((n, id) => n + (id === "signups" ? 2 : 1), 0);
  const results: ScenarioResult[] = [];
  const clock = installClock(T0);
  // Each scenario seeds Math.random (see Run in scenarios.ts); the real one comes back at the end.
  const random = Math.random;
  try {
    for (const id of opts.scenarios) {
      progress.start(id);
      const produced = await RUNNERS[id]({ clock, opts, progress });
      const calls = produced.reduce((s, r) => s + r.calls, 0);
      const wall = produced.reduce((s, r) => s + r.wallMs, 0);
      progress.done(`${num(calls)} calls in ${duration(wall)}`);
      for (const r of produced) {
        results.push(r);
        out(scenarioText(r, results.length, count, text));
      }
    }
  } finally {
    clock.uninstall();
    Math.random = random;
  }

  const report = opts.report === null ? null : path.resolve(process.cwd(), opts.report);
  const wallMs = performance.now() - started;
  if (report !== null) {
    const html = renderReport(results, {
      command: `npm run demo${argv.length > 0 ? ` -- ${argv.join(" ")}` : ""}`,
      seed: opts.seed,
      clockStart: T0,
      wallMs,
      calls: results.reduce((s, r) => s + r.calls, 0),
    });
    try {
      writeFileSync(report, html);
    } catch (e) {
      // Checked before running; this is the directory changing under a running demo.
      process.stderr.write(`demo: could not write the report: ${e instanceof Error ? e.message : String(e)}\n`);
      exit(2);
    }
  }
  out(closingText(results, { wallMs, report: report === null ? null : path.relative(process.cwd(), report) || report }, text));
  const failed = results.flatMap((r) => r.checks.filter((c) => !c.ok).map((c) => `${r.title}: ${c.name}: ${c.detail}`));
  if (opts.check && failed.length > 0) {
    process.stderr.write(`demo: --check: ${failed.length} invariant${failed.length === 1 ? "" : "s"} violated:\n`);
    for (const f of failed) process.stderr.write(`  ${f}\n`);
    exit(1);
  }
}
