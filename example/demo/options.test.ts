// The demo's command line (options.ts): defaults, each option, --fast defaults and the errors, table-driven; the report path check on a scratch directory.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { DEFAULT_REPORT, minutesFor, parseArgs, reportPathError, SCENARIOS, USAGE, type Options } from "./options.js";

function run(argv: string[]): Options {
  const parsed = parseArgs(argv);
  if (parsed.kind !== "run") throw new Error(`expected options, got ${JSON.stringify(parsed)}`);
  return parsed.options;
}

describe("parseArgs", () => {
  test("no arguments: every scenario, seed 1, a report at the default path, no check", () => {
    expect(run([])).toEqual({
      scenarios: [...SCENARIOS],
      seed: 1,
      fast: false,
      check: false,
      report: DEFAULT_REPORT,
      width: 80,
      minutes: undefined,
      users: 3,
      signups: 400,
      requests: 14,
      load: 2,
    });
  });

  test.each([
    ["one scenario", ["--scenario", "llm"], { scenarios: ["llm"] }],
    ["a list, put in running order", ["--scenario", "api,messages"], { scenarios: ["messages", "api"] }],
    ["all", ["--scenario", "all"], { scenarios: [...SCENARIOS] }],
    ["--opt=value form", ["--seed=7"], { seed: 7 }],
    ["--check and --fast", ["--check", "--fast"], { check: true, fast: true }],
    ["--fast shrinks the defaults", ["--fast"], { users: 2, signups: 200, requests: 16 }],
    ["an explicit value beats --fast", ["--fast", "--users", "5"], { users: 5 }],
    ["--report PATH", ["--report", "out/r.html"], { report: "out/r.html" }],
    ["--no-report", ["--no-report"], { report: null }],
    ["--minutes takes fractions", ["--minutes", "0.5"], { minutes: 0.5 }],
    ["--load", ["--load", "3.5"], { load: 3.5 }],
    ["--width", ["--width", "100"], { width: 100 }],
  ])("%s", (_what, argv, expected) => {
    expect(run(argv)).toMatchObject(expected);
  });

  test.each([
    ["an unknown option", ["--frobnicate"], "unknown argument --frobnicate"],
    ["an unknown scenario", ["--scenario", "nope"], "unknown scenario nope"],
    ["a missing value", ["--seed"], "--seed needs a value"],
    ["an option where a value should be", ["--report", "--fast"], "--report needs a value"],
    ["a negative seed", ["--seed", "-1"], "expected a whole number"],
    ["a fractional user count", ["--users", "1.5"], "expected a whole number"],
    ["a width too narrow for the charts", ["--width", "20"], "from 40 to 300"],
    ["not a number", ["--load", "lots"], "expected a number"],
  ])("%s is an error", (_what, argv, message) => {
    const parsed = parseArgs(argv);
    expect(parsed.kind).toBe("error");
    if (parsed.kind === "error") expect(parsed.message).toContain(message);
  });

  test("--help wins and returns the usage, which fits 80 columns", () => {
    expect(parseArgs(["--fast", "--help"])).toEqual({ kind: "help", text: USAGE });
    for (const line of USAGE.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    for (const s of SCENARIOS) expect(USAGE).toContain(s);
  });
});

describe("minutesFor", () => {
  test.each([
    ["signups", { minutes: undefined, fast: false }, 180], // the normal default
    ["signups", { minutes: undefined, fast: true }, 120], // the fast default
    ["api", { minutes: 2, fast: true }, 2], // --minutes beats both
    ["seam", { minutes: undefined, fast: true }, 100], // room for one burst at the turn of an hour
    ["seam", { minutes: undefined, fast: false }, 340], // three, two hours apart
  ] as const)("%s with %o runs %d minutes", (id, opts, minutes) => {
    expect(minutesFor(id, opts)).toBe(minutes);
  });
});

describe("reportPathError", () => {
  // A scratch directory holding a file and a subdirectory; the demo writes nothing here.
  const root = mkdtempSync(path.join(tmpdir(), "demo-report-"));
  writeFileSync(path.join(root, "old.html"), "");
  mkdirSync(path.join(root, "sub"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test.each([
    ["a new file in an existing directory", "new.html", null],
    ["an existing report, overwritten", "old.html", null],
    ["a relative path into a subdirectory", "sub/r.html", null],
    ["an absolute path", path.join(root, "abs.html"), null],
  ])("%s can be written", (_what, report, expected) => {
    expect(reportPathError(report, root)).toBe(expected);
  });

  test.each([
    ["a missing directory", "/no/such/dir/x.html", "--report /no/such/dir/x.html: no such directory /no/such/dir"],
    ["a directory that is a file", "old.html/x.html", `--report old.html/x.html: ${path.join(root, "old.html")} is not a directory`],
    ["a path that is a directory", "sub", "--report sub: is a directory"],
  ])("%s is one line naming the problem", (_what, report, message) => {
    expect(reportPathError(report, root)).toBe(message);
  });
});
