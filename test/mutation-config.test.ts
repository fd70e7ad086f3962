// Mutation testing tells the truth about src/shared: every module of it is in exactly one Stryker group (stryker.config.mjs), and the tests Stryker runs are the default project's own, by the same globs, less named exclusions that each exist and give a reason.
// @vitest-environment node
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, test } from "vitest";
import { mutationExclusions, mutationInclude } from "../vitest.mutation.config.js";

const root = path.resolve(import.meta.dirname, "..");

/** stryker.config.mjs's groups (a JavaScript module, loaded by its path: tsc has no types for it). */
async function strykerGroups(): Promise<Record<string, string[]>> {
  const config = (await import(pathToFileURL(path.join(root, "stryker.config.mjs")).href)) as { groups: Record<string, string[]> };
  return config.groups;
}

describe("stryker.config.mjs's groups", () => {
  test("every module of src/shared is in exactly one group, and every module named exists", async () => {
    const groups = await strykerGroups();
    // Modules by their path under src/shared, without ".ts": "flow/request".
    const modules = (readdirSync(path.join(root, "src/shared"), { recursive: true }) as string[])
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
      .map((f) => f.slice(0, -3).split(path.sep).join("/"))
      .sort();
    const grouped = Object.values(groups).flat();
    expect([...grouped].sort()).toEqual(modules);
    expect(new Set(grouped).size).toBe(grouped.length);
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
