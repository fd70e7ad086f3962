// Keeps the README honest: every code block marked `<!-- snippet: path#region -->` must equal
// that `// #region` of a typechecked file, and the fresh-clone commands it names must exist.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";

const root = resolve(__dirname, "..");
const readme = readFileSync(resolve(root, "README.md"), "utf8");

/** The lines between `// #region name` and `// #endregion`, dedented. */
function region(file: string, name: string): string {
  const lines = readFileSync(resolve(root, file), "utf8").split("\n");
  const start = lines.findIndex((l) => l.trim() === `// #region ${name}`);
  if (start < 0) throw new Error(`${file} has no region ${name}`);
  const end = lines.findIndex((l, i) => i > start && l.trim().startsWith("// #endregion"));
  if (end < 0) throw new Error(`${file} region ${name} has no end`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(
    ...body.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length),
  );
  return body.map((l) => l.slice(indent)).join("\n").trim();
}

const snippets = [
  ...readme.matchAll(/<!-- snippet: ([^#\s]+)#(\S+) -->\s*```(?:ts|tsx)\n([\s\S]*?)```/g),
].map((m) => ({ file: m[1]!, name: m[2]!, code: m[3]!.trim() }));

describe("README", () => {
  test("has snippets taken from typechecked files", () => {
    expect(snippets.length).toBeGreaterThan(3);
  });

  test.each(snippets.map((s) => [`${s.file}#${s.name}`, s] as const))("%s matches its source", (_, s) => {
    expect(s.code).toBe(region(s.file, s.name));
  });

  test("every npm script it names exists", () => {
    const scripts = (JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    }).scripts;
    const named = [...readme.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(0);
    for (const script of named) expect(Object.keys(scripts)).toContain(script);
    expect(readme).toContain("npm test");
  });
});
