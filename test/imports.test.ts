// The house rules on src/ that a reader relies on: no import cycle between our modules (value
// imports; `import type` is erased), and no hand-written file over 450 lines. Generated code
// (`_generated/`) is left out.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";

const SRC = path.resolve(__dirname, "../src");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return entry === "_generated" ? [] : sources(full);
    return /\.tsx?$/.test(entry) ? [full] : [];
  });
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
    const long = files.map((f) => [path.relative(SRC, f), readFileSync(f, "utf8").split("\n").length - 1] as const).filter(([, n]) => n > 450);
    expect(long).toEqual([]);
  });

  test("the cycle check sees a module's value imports and skips its type imports", () => {
    const imports = valueImports(path.join(SRC, "shared/flow/request.ts")).map((f) => path.relative(SRC, f));
    expect(imports).toContain("shared/overrides/overrides.ts");
    expect(imports).not.toContain("shared/shapes/rows.ts");
    // Across lines too.
    expect(valueImports(path.join(SRC, "shared/metrics/metrics-fold.ts")).map((f) => path.relative(SRC, f))).toContain("shared/metrics/metrics.ts");
  });
});
