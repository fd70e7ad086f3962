// What `npm run bench` and `npm run simulate` tell a new user, run as the npm scripts run them
// (tools/run.mjs): --help names the sections --only takes and where "how many shards, which mode"
// is answered, and simulate --only prints the sections that ran and no other's heading.
// @vitest-environment node
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Runs `tools/run.mjs` with `args`, as an npm script does: its exit code and output. */
function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [join(root, "tools", "run.mjs"), ...args], { cwd: root, timeout: 120_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
    });
  });
}

/** The `## ` headings of docs/hot-limits.md, which both helps send the reader to. */
const hotLimitHeadings = readFileSync(join(root, "docs/hot-limits.md"), "utf8")
  .split("\n")
  .filter((l) => l.startsWith("## "))
  .map((l) => l.slice(3));

const BENCH_SECTIONS = ["util", "refusals", "reads", "speed", "cleanup", "sliding", "metrics", "bytes"];
const SIMULATE_SECTIONS = ["grid", "headline", "stress", "metrics", "check"];

describe("--help", () => {
  test("npm run bench -- --help lists each section by the name --only takes, and says where shards and mode are chosen", async () => {
    const { code, stdout } = await run(["bench/main.ts", "--help"]);
    expect(code).toBe(0);
    // One line per section, its name first, as --only spells it.
    for (const name of BENCH_SECTIONS) expect(stdout).toMatch(new RegExp(`^ {4}${name} +\\S`, "m"));
    // No "section 1" the user would have to map to a name.
    expect(stdout).not.toMatch(/section \d/);
    expect(stdout).toContain("npm run simulate -- --qps <your peak QPS>");
    expect(stdout).toContain(`docs/hot-limits.md, "Choosing shards and modes"`);
    expect(hotLimitHeadings).toContain("Choosing shards and modes");
    // It prints the usage and runs nothing.
    expect(stdout).not.toContain("sharding benchmark");
  }, 150_000);

  test("npm run simulate -- --help names the command and docs/hot-limits.md's table, and the sections", async () => {
    const { code, stdout, stderr } = await run(["bench/simulate.ts", "--help"]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toContain("npm run simulate -- --qps <your peak QPS> --service <ms> --only grid");
    expect(stdout).toContain(`"Smallest shard count with failed requests under 0.1%"`);
    expect(stdout).toContain("npm run simulate -- --plan\n");
    expect(stdout).toMatch(/^ {2}--plan +the sizing rule/m);
    for (const heading of ["Choosing shards and modes", "What to choose", "The sizing rule"]) {
      expect(stdout).toContain(`"${heading}"`);
      expect(hotLimitHeadings).toContain(heading);
    }
    for (const name of SIMULATE_SECTIONS) expect(stdout).toMatch(new RegExp(`^ {6}${name} +\\S`, "m"));
    expect(stdout).not.toContain("runs in");
  }, 150_000);
});

describe("simulate prints the sizing rule's recommendation for its --qps and --service", () => {
  test("200 QPS at 50 ms: 50 shards; at 100 ms against a limit of a third of it, asynchronous", async () => {
    const common = ["--only", "headline", "--impl", "ours", "--seconds", "1", "--no-write"];
    const tx = await run(["bench/simulate.ts", "--qps", "200", "--service", "50", ...common]);
    expect(tx.stdout).toContain("Recommended: 200 QPS, rate 222/s, 50 ms mutations: transactional over 50 shards");
    const async = await run(["bench/simulate.ts", "--qps", "200", "--rate", "67", "--service", "100", ...common]);
    expect(async.stdout).toContain("Recommended: 200 QPS, rate 67/s, 100 ms mutations: asynchronous, unsharded.");
  }, 150_000);
});

describe("simulate --only prints only what ran", () => {
  // Small enough to run in a second: two QPS, two shard counts, one model second per cell.
  const small = ["--qps", "10,50", "--shards", "1,5", "--seconds", "1", "--no-write"];
  /** Each section's heading, as simulate prints it. */
  const HEADINGS: Record<string, RegExp> = {
    grid: /^Smallest shard count with failed requests/m,
    headline: /^The issue's scenario: token bucket/m,
    stress: /^Overload: the same grid at/m,
    metrics: /^Metrics \(metrics: true\)/m,
    check: /^The issue's targets in an independent model/m,
  };

  test.each([["grid"], ["headline"], ["grid,headline"]])("--only %s", async (only) => {
    const { code, stdout } = await run(["bench/simulate.ts", "--only", only, ...small]);
    expect(code).toBe(0);
    const chosen = only.split(",");
    expect(stdout).toContain(`Sections run: ${chosen.join(", ")}.`);
    // The table --help sends the reader to is printed under the words it quotes.
    if (chosen.includes("grid")) expect(stdout).toContain("Smallest shard count with failed requests under 0.1% (ours / upstream");
    for (const [section, heading] of Object.entries(HEADINGS)) {
      if (chosen.includes(section)) expect(stdout).toMatch(heading);
      else expect(stdout).not.toMatch(heading);
    }
    // The closing lines of worst over-admission name only the sections run.
    expect(stdout.includes("The issue's scenario: ours' worst")).toBe(chosen.includes("headline"));
    expect(stdout.includes("At 90% load: ours' worst")).toBe(chosen.includes("grid"));
    expect(stdout).not.toContain("At 150% load");
  }, 150_000);
});
