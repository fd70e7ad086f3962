// The house rules on src/ that a reader relies on: no import cycle between our modules (value
// imports; `import type` is erased), and no hand-written file over 450 lines, in bench/ and tools/
// too. Generated code (`_generated/`) is left out.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";

const ROOT = path.resolve(__dirname, "..");
const SRC = path.join(ROOT, "src");

/** The source files under `dir` whose names match `ext`, `_generated/` left out. */
function sources(dir: string, ext = /\.tsx?$/): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return entry === "_generated" ? [] : sources(full, ext);
    return ext.test(entry) ? [full] : [];
  });
}

/** The files of `files` over 450 lines, by path from `root`, with their line counts. */
function overLong(files: readonly string[], root: string): (readonly [string, number])[] {
  return files.map((f) => [path.relative(root, f), readFileSync(f, "utf8").split("\n").length - 1] as const).filter(([, n]) => n > 450);
}

/** The modules of src/ that `file` imports values from (its `import type` lines left out). */
function valueImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(?!type\b)([^;]*?)\s+from\s+"(\.[^"]+)";/gms)) {
    // `import { type A, type B }` imports nothing at run time.
    const names = m[1]!;
    if (/^\{[^}]*\}$/s.test(names.trim()) && names.replace(/[{}\s]/g, "").split(",").filter(Boolean).every((n) => n.startsWith("type"))) continue;
    out.push(path.resolve(path.dirname(file), m[2]!.replace(/\.js$/, ".ts")));
  }
  return out.map((f) => (statSync(f, { throwIfNoEntry: false }) ? f : f.replace(/\.ts$/, ".tsx")));
}

describe("src/", () => {
  const files = sources(SRC);

  test("has no import cycle between its modules", () => {
    const graph = new Map(files.map((f) => [f, valueImports(f).filter((to) => to.startsWith(SRC) && !to.includes("_generated"))]));
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, "open");
      stack.push(f);
      for (const to of graph.get(f) ?? []) {
        if (state.get(to) === "open") cycles.push([...stack.slice(stack.indexOf(to)), to].map((x) => path.relative(SRC, x)).join(" → "));
        else if (!state.has(to)) visit(to);
      }
      stack.pop();
      state.set(f, "done");
    };
    for (const f of files) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  test("has no hand-written file over 450 lines", () => {
    expect(overLong(files, SRC)).toEqual([]);
  });

  test("the cycle check sees a module's value imports and skips its type imports", () => {
    const imports = valueImports(path.join(SRC, "shared/flow/request.ts")).map((f) => path.relative(SRC, f));
    expect(imports).toContain("shared/overrides/overrides.ts");
    expect(imports).not.toContain("shared/shapes/rows.ts");
    // Across lines too.
    expect(valueImports(path.join(SRC, "shared/metrics/metrics-fold.ts")).map((f) => path.relative(SRC, f))).toContain("shared/metrics/metrics.ts");
  });
});

describe.each(["bench", "tools"])("%s/", (dir) => {
  test("has no file over 450 lines", () => {
    const files = sources(path.join(ROOT, dir), /\.(tsx?|mts|mjs)$/);
    expect(files.length).toBeGreaterThan(5);
    expect(overLong(files, ROOT)).toEqual([]);
  });
});
