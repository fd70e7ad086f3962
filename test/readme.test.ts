// Keeps the README and docs/*.md honest: every code block marked `<!-- snippet: path#region -->`
// must equal that `// #region` of a typechecked file (a `// …` line standing for lines left out),
// and the fresh-clone commands they name must exist; the README shows every feature file whole.
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";

const root = resolve(__dirname, "..");
const readme = readFileSync(resolve(root, "README.md"), "utf8");
const docs = readdirSync(resolve(root, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => ({ path: `docs/${f}`, text: readFileSync(resolve(root, "docs", f), "utf8") }));
const pages = [{ path: "README.md", text: readme }, ...docs];

const isMarker = (l: string) => /^\/\/ #(end)?region\b/.test(l.trim());

/** The lines between `// #region name` and `// #endregion name`, dedented, without nested regions' markers. */
function region(file: string, name: string): string {
  const lines = readFileSync(resolve(root, file), "utf8").split("\n");
  const start = lines.findIndex((l) => l.trim() === `// #region ${name}`);
  if (start < 0) throw new Error(`${file} has no region ${name}`);
  const end = lines.findIndex((l, i) => i > start && [`// #endregion ${name}`, "// #endregion"].includes(l.trim()));
  if (end < 0) throw new Error(`${file} region ${name} has no end`);
  const body = lines.slice(start + 1, end).filter((l) => !isMarker(l));
  const indent = Math.min(
    ...body.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length),
  );
  return body.map((l) => l.slice(indent)).join("\n").trim();
}

/** Whether `code` is `source` with runs of one or more whole lines each shown as a `// …` line. */
function shows(code: string, source: string): boolean {
  const escape = (l: string) => l.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = code
    .split("\n")
    .map((l) => (l.trim() === "// …" ? "[^\\n]*(?:\\n[^\\n]*)*?" : escape(l)))
    .join("\\n");
  return new RegExp(`^${pattern}$`).test(source);
}

const snippets = pages.flatMap((page) =>
  [...page.text.matchAll(/<!-- snippet: ([^#\s]+)#(\S+) -->\s*```(?:ts|tsx)\n([\s\S]*?)```/g)].map((m) => ({
    page: page.path,
    file: m[1]!,
    name: m[2]!,
    code: m[3]!.trim(),
  })),
);

describe("README and docs", () => {
  test("have snippets taken from typechecked files", () => {
    expect(snippets.length).toBeGreaterThan(3);
  });

  test.each(snippets.map((s) => [`${s.page}: ${s.file}#${s.name}`, s] as const))("%s matches its source", (_, s) => {
    const source = region(s.file, s.name);
    if (s.code.split("\n").some((l) => l.trim() === "// …")) expect(shows(s.code, source), s.code).toBe(true);
    else expect(s.code).toBe(source);
  });

  test("the README shows each feature file of the example whole (example/convex/features)", () => {
    const files = readdirSync(resolve(root, "example", "convex", "features")).map((f) => `example/convex/features/${f}`);
    const shown = snippets.filter((s) => s.page === "README.md" && s.file.startsWith("example/convex/features/"));
    expect(shown.map((s) => s.file).sort()).toEqual(files.sort());
    // Whole: pasted as they are into an app (test/pack.test.ts), nothing left out.
    for (const s of shown) expect(s.code.split("\n").filter((l) => l.trim() === "// …"), s.file).toEqual([]);
  });

  test("the app files the README shows outside example/ (its tsconfig.json) are valid JSON", () => {
    const files = [...readme.matchAll(/<!-- app file: (\S+) -->\s*```json\n([\s\S]*?)```/g)];
    expect(files.map((m) => m[1])).toEqual(["tsconfig.json"]);
    for (const m of files) expect(() => JSON.parse(m[2]!), m[1]).not.toThrow();
  });

  test("every npm script they name exists", () => {
    const scripts = (JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    }).scripts;
    const named = pages.flatMap((p) => [...p.text.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(0);
    for (const script of named) expect(Object.keys(scripts)).toContain(script);
    expect(readme).toContain("npm test");
  });
});
