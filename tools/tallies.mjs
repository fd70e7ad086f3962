// Measures the random tallies that property tests check to show they weren't vacuous (see
// recordTally in tools/fast-check.ts): runs the files that record one `--times` times, each run
// drawing new cases as CI's would, and prints each count's mean, standard deviation, least value
// and the value 5 standard deviations below the mean.
//
//   npm run test:tallies -- [--times N] [test files...]   (default: 20 runs of every tallied file; the thresholds were set from 24)
//
// A threshold should sit at or below the "5 sd below" column; see RUN_SHARE's comment in
// tools/fast-check.ts.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
let args = process.argv.slice(2);
let times = 20;
if (args[0] === "--times") {
  times = Number(args[1]);
  args = args.slice(2);
}
if (!(Number.isInteger(times) && times >= 2) || args.some((a) => a.startsWith("-"))) {
  console.error("usage: npm run test:tallies -- [--times N (at least 2)] [test files...]");
  process.exit(2);
}
const files =
  args.length > 0
    ? args
    : execFileSync("git", ["grep", "-l", "recordTally(", "--", "test", "example", "bench"], { cwd: root, encoding: "utf8" })
        .split("\n")
        .filter((f) => /\.test\.tsx?$/.test(f));
const dir = mkdtempSync(path.join(tmpdir(), "tallies-"));
const out = path.join(dir, "tallies.jsonl");
const vitest = path.join(root, "node_modules", "vitest", "vitest.mjs");
try {
  for (let i = 1; i <= times; i++) {
    process.stderr.write(`run ${i} of ${times}\n`);
    const run = spawnSync(process.execPath, [vitest, "run", "--project", "default", "--typecheck.enabled=false", ...files], {
      cwd: root,
      env: { ...process.env, TALLY_OUT: out },
      encoding: "utf8",
    });
    if (run.status !== 0) process.stderr.write(`run ${i} failed:\n${run.stdout.slice(-3000)}\n`);
  }
  const counts = new Map();
  for (const line of readFileSync(out, "utf8").split("\n").filter(Boolean)) {
    const { tally, ...rest } = JSON.parse(line);
    for (const [count, value] of Object.entries(rest)) {
      const key = `${tally}.${count}`;
      counts.set(key, [...(counts.get(key) ?? []), value]);
    }
  }
  const rows = [["count", "runs", "mean", "sd", "least", "5 sd below"]];
  for (const [key, values] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1));
    rows.push([key, values.length, mean.toFixed(1), sd.toFixed(1), Math.min(...values), Math.floor(mean - 5 * sd)].map(String));
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  "));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
