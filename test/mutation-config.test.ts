// Mutation testing tells the truth about src/shared: every module of it is in exactly one Stryker group (stryker.config.mjs), each group runs test files of the default project that exist and aren't excluded, the exclusions each exist and give a reason, and every judged survivor (mutation-survivors.json) names a module, a verdict and its reason.
// @vitest-environment node
import { existsSync, globSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { groups } from "../stryker.config.mjs";
import { mutationExclusions, mutationInclude } from "../vitest.mutation.config.js";

const root = path.resolve(import.meta.dirname, "..");

describe("stryker.config.mjs's groups", () => {
  test("every module of src/shared is in exactly one group, and every module named exists", () => {
    // Modules by their path under src/shared, without ".ts": "flow/request".
    const modules = (readdirSync(path.join(root, "src/shared"), { recursive: true }) as string[])
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
      .map((f) => f.slice(0, -3).split(path.sep).join("/"))
      .sort();
    const grouped = Object.values(groups).flatMap((g) => g.modules);
    expect([...grouped].sort()).toEqual(modules);
    expect(new Set(grouped).size).toBe(grouped.length);
  });

  test.each(Object.entries(groups))("group %s runs test files of the default project, none excluded", (_, { tests }) => {
    const suite = new Set(globSync(mutationInclude, { cwd: root, exclude: (f) => f.includes("node_modules") }));
    for (const glob of tests) {
      const files = globSync(glob, { cwd: root });
      expect(files, glob).not.toEqual([]);
      for (const file of files) {
        expect(suite.has(file), file).toBe(true);
        expect(mutationExclusions[file], file).toBeUndefined();
      }
    }
  });
});

describe("mutation-survivors.json", () => {
  const { survivors } = JSON.parse(readFileSync(path.join(root, "mutation-survivors.json"), "utf8")) as {
    survivors: { file: string; line: number; mutator: string; original: string; replacement: string; verdict: string; reason: string }[];
  };
  test.each(survivors.map((s) => [`${s.file}:${s.line} ${s.mutator}`, s] as const))("%s is judged, with its reason", (_, s) => {
    expect(existsSync(path.join(root, s.file))).toBe(true);
    expect(["equivalent", "unreachable"]).toContain(s.verdict);
    expect(s.reason.length).toBeGreaterThan(40);
    // The replaced text is still in the file, or the entry is stale.
    expect(readFileSync(path.join(root, s.file), "utf8").replace(/\s+/g, " ")).toContain(s.original.replace(/\s+/g, " "));
  });
});

describe("vitest.mutation.config.ts", () => {
  test("takes the default project's test files by the same globs", async () => {
    const { default: config } = await import("../vitest.config.js");
    const projects = config.test?.projects as { test?: { name?: string; include?: string[] } }[];
    const ours = projects.find((p) => p.test?.name === "default");
    expect(mutationInclude).toEqual(ours?.test?.include);
  });

  test.each(Object.entries(mutationExclusions))("%s is left out for a reason, and exists", (file, reason) => {
    expect(existsSync(path.join(root, file))).toBe(true);
    expect(reason.length).toBeGreaterThan(40);
  });
});
