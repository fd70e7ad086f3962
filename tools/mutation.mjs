// `npm run test:mutation [group…]`: mutation testing of src/shared with Stryker, one group of files
// at a time (stryker.config.mjs), then one table over every group's latest report and the list of
// survivors (reports/mutation/survivors.txt); `--report` prints them without running. Each group is incremental: a rerun tests only the
// mutants whose code or covering tests changed. Property tests run a fifth of their cases
// (FC_QUICK=1) with a fixed seed, so a mutant's verdict is the same on every run.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { groups } from "../stryker.config.mjs";

const reportOnly = process.argv[2] === "--report";
const asked = reportOnly ? [] : process.argv.slice(2);
for (const g of asked) {
  if (!(g in groups)) {
    console.error(`usage: npm run test:mutation [--report | ${Object.keys(groups).join("|")} …]`);
    process.exit(2);
  }
}
for (const group of reportOnly ? [] : asked.length > 0 ? asked : Object.keys(groups)) {
  console.log(`\n== mutation group ${group}: ${groups[group].join(", ")}`);
  const run = spawnSync("npx", ["stryker", "run"], {
    stdio: "inherit",
    env: { ...process.env, MUTATION_GROUP: group, FC_SEED: "20260101", FC_QUICK: "1" },
  });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

/** Stryker's statuses, as the mutation score counts them. */
const DETECTED = new Set(["Killed", "Timeout"]);
const UNDETECTED = new Set(["Survived", "NoCoverage"]);
const rows = [];
const survivors = [];
for (const group of Object.keys(groups)) {
  const file = `reports/mutation/mutation-${group}.json`;
  if (!existsSync(file)) {
    rows.push({ file: `(group ${group} not run)` });
    continue;
  }
  const report = JSON.parse(readFileSync(file, "utf8"));
  // Only the group's own files: a report written before the groups were split may hold others,
  // which their own group's report counts.
  const own = new Set(groups[group].map((f) => `src/shared/${f}.ts`));
  for (const [path, { mutants, source }] of Object.entries(report.files)) {
    if (!own.has(path)) continue;
    const lines = source.split("\n");
    const count = (set) => mutants.filter((m) => set.has(m.status)).length;
    rows.push({ file: path, detected: count(DETECTED), undetected: count(UNDETECTED), total: mutants.length });
    for (const m of mutants.filter((m) => UNDETECTED.has(m.status))) {
      const { start, end } = m.location;
      // The line as mutated (1-based lines, 1-based columns, end exclusive), so the change shows in
      // place; a mutant spanning lines shows its first line and the replacement.
      const original = lines[start.line - 1];
      const mutated =
        start.line === end.line
          ? original.slice(0, start.column - 1) + (m.replacement ?? "") + original.slice(end.column - 1)
          : `${original.slice(0, start.column - 1)}${(m.replacement ?? "").split("\n")[0]} …`;
      survivors.push(`${path}:${start.line}:${start.column} ${m.status} ${m.mutatorName}\n  - ${original.trim()}\n  + ${mutated.trim()}`);
    }
  }
}
const score = (d, u) => (d + u === 0 ? "-" : `${((100 * d) / (d + u)).toFixed(1)}%`);
let detected = 0;
let undetected = 0;
console.log("\nfile                                   score   detected  undetected");
for (const r of rows) {
  if (r.detected === undefined) {
    console.log(r.file);
    continue;
  }
  detected += r.detected;
  undetected += r.undetected;
  console.log(`${r.file.padEnd(38)} ${score(r.detected, r.undetected).padStart(6)} ${String(r.detected).padStart(10)} ${String(r.undetected).padStart(11)}`);
}
console.log(`${"src/shared".padEnd(38)} ${score(detected, undetected).padStart(6)} ${String(detected).padStart(10)} ${String(undetected).padStart(11)}`);
writeFileSync("reports/mutation/survivors.txt", survivors.join("\n") + "\n");
console.log(`\n${survivors.length} survivors (no test failed, or no test ran the code): reports/mutation/survivors.txt`);
