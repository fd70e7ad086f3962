// A vitest reporter for npm run test:upstream: after the default report, counts upstream's tests by
// outcome and by expected-failures.ts section, so a green run still says what didn't pass and why.
import type { Reporter, TestModule } from "vitest/node";
import { pendingAsync, skippedFiles } from "./expected-failures.js";

export default class UpstreamSummary implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const upstream = modules.filter((m) => m.project.name === "upstream" && m.moduleId.includes("/rate-limiter/src/"));
    if (upstream.length === 0) return;
    let total = 0;
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const expected = new Map<string, number>();
    for (const module of upstream) {
      for (const test of module.children.allTests()) {
        total++;
        const state = test.result().state;
        const meta = test.meta().upstreamExpected;
        if (state === "failed") failed++;
        else if (state === "skipped" || state === "pending") skipped++;
        else if (meta) {
          const key = meta.readmeRow ? `${meta.section}: docs/differences.md row ${meta.readmeRow}` : `${meta.section}: ${meta.why}`;
          expected.set(key, (expected.get(key) ?? 0) + 1);
        } else passed++;
      }
    }
    const blocked = Object.values(pendingAsync.files).reduce((n, f) => n + f.blocked.length, 0);
    const pendingFiles = Object.keys(pendingAsync.files);
    const lines = [
      "",
      "Upstream suite (@convex-dev/rate-limiter's own tests, against ours):",
      `  ${total} run in ${upstream.length} files: ${passed} passed, ${total - passed - failed - skipped} failed as expected, ${failed} failed, ${skipped} skipped`,
      ...[...expected].map(([why, n]) => `    ${n} × ${why}`),
      ...(pendingFiles.length === 0
        ? []
        : [`  not run: ${blocked} tests in ${pendingFiles.join(", ")}, which can't load yet (${pendingAsync.section})`]),
      `  files skipped (they test upstream's internal modules): ${Object.keys(skippedFiles).join(", ")}`,
      "",
    ];
    console.log(lines.join("\n"));
  }
}
