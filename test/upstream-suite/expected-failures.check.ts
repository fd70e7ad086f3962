// Checks expected-failures.ts itself (run with the upstream suite): every name points at a real
// upstream file, every row of docs/differences.md's table it cites exists, and each pending file
// still fails to load for the pending reason, so its entry is deleted as soon as it loads.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import {
  frozenClock,
  internalDetails,
  oursToFix,
  pendingAsync,
  skippedFiles,
  upstreamBugsFixed,
  upstreamFile,
} from "./expected-failures.js";
import { failureText, PROBE } from "./failure.js";
import { root, upstreamSrc } from "./plugin.js";

const fileOf = (name: string) => name.split(" > ")[0]!;

describe("expected-failures.ts", () => {
  test("names only upstream test files that exist, and each test once across sections", () => {
    const entries = [...upstreamBugsFixed, ...internalDetails, ...frozenClock, ...oursToFix, ...pendingAsync.tests];
    const names = [
      ...entries.flatMap((e) => e.tests),
      ...Object.values(pendingAsync.files).flatMap((f) => f.blocked),
    ];
    expect(new Set(names).size).toBe(names.length);
    const files = new Set([...names.map(fileOf), ...Object.keys(skippedFiles), ...Object.keys(pendingAsync.files)]);
    for (const file of files) {
      expect(file, file).toMatch(/\.test\.ts$/);
      expect(existsSync(path.join(upstreamSrc, file)), file).toBe(true);
    }
    // A run-and-fail entry can't be in a file that isn't run.
    const notRun = new Set([...Object.keys(skippedFiles), ...Object.keys(pendingAsync.files)]);
    for (const name of entries.flatMap((e) => e.tests)) expect(notRun.has(fileOf(name)), name).toBe(false);
    for (const [file, { blocked }] of Object.entries(pendingAsync.files)) {
      for (const name of blocked) expect(fileOf(name), name).toBe(file);
    }
  });

  test("cites rows that exist in docs/differences.md's differences table", () => {
    const doc = readFileSync(path.join(root, "docs", "differences.md"), "utf8");
    const table = doc.slice(doc.indexOf("## Differences from @convex-dev/rate-limiter"));
    const rows = table.split("\n").filter((l) => l.startsWith("| "));
    for (const { readmeRow } of upstreamBugsFixed) {
      expect(
        rows.some((r) => r.startsWith(`| ${readmeRow} |`) || r.startsWith(`| ${readmeRow} † |`)),
        readmeRow,
      ).toBe(true);
    }
  });
});

describe.each(Object.entries(pendingAsync.files))("pending file %s", (file, { loadError }) => {
  test("still fails to load for the pending reason", async () => {
    const g = globalThis as Record<symbol, unknown>;
    g[PROBE] = true; // its test() and describe() calls register nothing
    let error: unknown = undefined;
    try {
      await import(/* @vite-ignore */ path.join(upstreamSrc, file));
    } catch (e) {
      error = e ?? new Error("rejected with nothing");
    } finally {
      delete g[PROBE];
    }
    if (error === undefined) {
      throw new Error(
        `${upstreamFile(file)} loads now: delete its entry from pendingAsync.files in expected-failures.ts ` +
          `(its tests then run; list any that still fail)`,
      );
    }
    expect(failureText(error)).toMatch(loadError);
  });
});
