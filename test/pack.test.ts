// Packaging as a user meets it: `npm pack` a copy of this tree (building via `prepack`), and install the tarball in a fresh app beside what a user installs from the registry (convex, convex-test, vitest, @edge-runtime/vm, typescript, vite, react: the latest of each, as the README and docs/testing.md's bare `npm install` commands get them; nothing borrowed from this project's node_modules). In that install: the app made from test/pack-fixture runs its convex-test suite and tsc; the example app's convex/ folder, the code the guide and docs/testing.md show, runs its whole test suite; and the README's opening example and feature snippets, pasted into an app with the README's tsconfig.json, get convex/_generated offline (tools/app-codegen.mjs) and typecheck. Needs the npm registry (one install, about 10-30 s, shared by the apps).
// @vitest-environment node
import { execFile } from "node:child_process";
import { cpSync, existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const fixture = join(root, "test", "pack-fixture");

/**
 * What a user installs from the registry beside the tarball, unpinned: the latest of each, as
 * `npm install convex` and docs/testing.md's `npm install --save-dev convex-test vitest
 * @edge-runtime/vm` get them. typescript, vite and @types/node for tsc (the fixture's test imports
 * node:module), react and its types
 * for the README's button, convex-helpers for the example's sessions (an app that imports it lists
 * it itself).
 */
const fromRegistry = ["convex", "convex-test", "vitest", "@edge-runtime/vm", "typescript", "vite", "@types/node", "react", "@types/react", "convex-helpers"];

// Paths the copy of the tree leaves out: installs, builds, VCS data, earlier tarballs.
const skipped = new Set(["node_modules", ".git", "dist", "test-artifacts", ".vite"]);

/** Every entry the exports map must have, each with `types` (for TypeScript) and `default` (for the runtime). */
const requiredExports = [".", "./react", "./test", "./convex.config", "./convex.config.js", "./_generated/component.js"];

type Run = { code: number; output: string };

/** run runs a command to completion and returns its exit code and interleaved output. */
function run(cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<Run> {
  // Drop what the outer npm/vitest put in the environment about *this* package and run, so the
  // child tools see only the temporary directory; keep npm_config_* (registry, cache, proxies).
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(VITEST|npm_package_|npm_lifecycle_|npm_config_local_prefix$|INIT_CWD$|NODE_ENV$|TEST$)/i.test(k)) continue;
    env[k] = v;
  }
  env.npm_config_update_notifier = "false";
  env.npm_config_fund = "false";
  env.npm_config_audit = "false";
  env.FORCE_COLOR = "0";
  env.NO_COLOR = "1";
  return new Promise((done) => {
    execFile(cmd, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      const killed = error !== null && error.killed ? `\n(killed after ${timeoutMs} ms)` : "";
      done({ code, output: `$ ${cmd} ${args.join(" ")}  (in ${cwd})\n${stdout}${stderr}${killed}` });
    });
  });
}

/** must runs a command and throws with its output unless it exits 0. */
async function must(cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<string> {
  const r = await run(cmd, args, cwd, timeoutMs);
  if (r.code !== 0) throw new Error(`exit ${r.code}\n${r.output}`);
  return r.output;
}

let work = "";
let app = "";
let tarball = "";
let installed = "";
/** The version of each package of {@link fromRegistry} that the install got. */
const versions: Record<string, string> = {};

/** appManifest is the package.json of an app that depends on the tarball and on what the install got. */
function appManifest(name: string): Record<string, unknown> {
  return {
    name,
    private: true,
    type: "module",
    dependencies: {
      "convex-rate-limiter": `file:${tarball}`,
      ...Object.fromEntries(fromRegistry.map((p) => [p, `^${versions[p] ?? ""}`])),
    },
  };
}

/** newApp makes an empty app at `dir` sharing the one install (its node_modules) of {@link app}. */
function newApp(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify(appManifest(basename(dir)), null, 2));
  symlinkSync(join(app, "node_modules"), join(dir, "node_modules"), "junction");
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "crl-pack-"));

  // 1. Pack a copy of the working tree, so `prepack` (the build) runs without touching this
  //    tree's dist/ while other tests read it. The copy borrows node_modules for tsc and types.
  const stage = join(work, "stage");
  cpSync(root, stage, {
    recursive: true,
    filter: (src) => !skipped.has(basename(src)) && !src.endsWith(".tgz"),
  });
  symlinkSync(join(root, "node_modules"), join(stage, "node_modules"), "junction");
  const packed = join(work, "packed");
  mkdirSync(packed);
  await must("npm", ["pack", "--pack-destination", packed], stage, 180_000);
  const tgz = readdirSync(packed).filter((f) => f.endsWith(".tgz"));
  expect(tgz, "npm pack wrote exactly one tarball").toHaveLength(1);
  tarball = join(packed, tgz[0] ?? "");

  // 2. A fresh app from the fixture, depending on the tarball; then the user's own dependencies
  //    from the registry, in the same install. No install scripts run: the package has none (see
  //    "runs nothing when installed" below), and esbuild's works without its postinstall.
  app = join(work, "app");
  cpSync(fixture, app, { recursive: true });
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "pack-test-app", private: true, type: "module", dependencies: { "convex-rate-limiter": `file:${tarball}` } }, null, 2),
  );
  await must("npm", ["install", "--no-package-lock", "--no-audit", "--no-fund", "--ignore-scripts", ...fromRegistry], app, 300_000);
  installed = join(app, "node_modules", "convex-rate-limiter");
  for (const name of fromRegistry) {
    const manifest: unknown = JSON.parse(readFileSync(join(app, "node_modules", name, "package.json"), "utf8"));
    versions[name] = isRecord(manifest) && typeof manifest.version === "string" ? manifest.version : "?";
  }
  console.log(`pack.test: installed from the registry: ${fromRegistry.map((p) => `${p}@${versions[p]}`).join(", ")}`);
}, 420_000);

afterAll(() => {
  if (work !== "") rmSync(work, { recursive: true, force: true });
});

/** listFiles lists the files under dir, as /-separated paths relative to it. */
function listFiles(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}

/** isRecord narrows an unknown JSON value to an object. */
function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** A file the README tells a user to put in their app: where it goes, and its contents as shown. */
type Pasted = { path: string; code: string };

/** The README's code blocks copied from `example/`, under `section` (a `## ` heading) or everywhere: where each goes in an app (its path under example/), and its code as shown. */
function readmeSnippets(section?: string): Pasted[] {
  let text = readFileSync(join(root, "README.md"), "utf8");
  if (section !== undefined) {
    const start = text.indexOf(`\n## ${section}`);
    if (start < 0) throw new Error(`README.md has no section ${section}`);
    text = text.slice(start, text.indexOf("\n## ", start + 1));
  }
  return [...text.matchAll(/<!-- snippet: example\/(\S+?)#\S+ -->\s*```tsx?\n([\s\S]*?)```/g)].map((m) => ({
    path: m[1] ?? "",
    code: m[2] ?? "",
  }));
}

/** The files the README shows whole, outside `example/` (its tsconfig.json): each block marked `<!-- app file: path -->`. */
function readmeAppFiles(): Pasted[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  return [...readme.matchAll(/<!-- app file: (\S+) -->\s*```\w*\n([\s\S]*?)```/g)].map((m) => ({ path: m[1] ?? "", code: m[2] ?? "" }));
}

/** paste writes each file into `dir`, making its folders. */
function paste(dir: string, files: Pasted[]): void {
  for (const { path, code } of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), code);
  }
}

/** runVitest runs the app's vitest in `dir` and returns its exit code, counts and output. */
async function runVitest(dir: string) {
  const vitest = join(dir, "node_modules", "vitest", "vitest.mjs");
  const report = join(dir, "vitest-report.json");
  rmSync(report, { force: true });
  const r = await run(process.execPath, [vitest, "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`], dir, 300_000);
  const parsed: unknown = existsSync(report) ? JSON.parse(readFileSync(report, "utf8")) : undefined;
  const counts = isRecord(parsed)
    ? {
        files: Array.isArray(parsed.testResults) ? parsed.testResults.length : undefined,
        passed: parsed.numPassedTests,
        failed: parsed.numFailedTests,
        suites: parsed.numFailedTestSuites,
      }
    : undefined;
  return { code: r.code, counts, output: r.output };
}

describe("the packed package, installed in a fresh app", () => {
  test("installs the user's own dependencies from the registry, none borrowed from this project", () => {
    for (const name of fromRegistry) {
      const dir = join(app, "node_modules", name);
      expect(lstatSync(dir).isSymbolicLink(), name).toBe(false);
      expect(relative(app, realpathSync(dir)).startsWith(".."), name).toBe(false);
    }
  });

  test("ships the TypeScript source behind ./test and a built client, and no tests", () => {
    // A nested node_modules would hold the package's own dependencies, not its files.
    const files = listFiles(installed).filter((f) => !f.startsWith("node_modules/"));
    for (const f of [
      "package.json",
      "src/test.ts", // ./test is shipped as source: vite must transform its import.meta.glob
      "src/component/lib.ts", // ...and the modules that glob loads
      "src/component/schema.ts",
      "src/component/_generated/server.ts",
      "dist/client/index.js",
      "dist/component/convex.config.js",
    ]) {
      expect(files, f).toContain(f);
    }
    // `files` ships dist and src only (npm adds package.json and any README or LICENSE).
    expect(files.filter((f) => !/^(dist|src)\/|^package\.json$|^(README|LICENSE)/i.test(f))).toEqual([]);
  });

  test("runs nothing when installed: no install scripts, and dist/ shipped built", () => {
    const pkg: unknown = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    if (!isRecord(pkg)) throw new Error("package.json is not an object");
    const scripts = isRecord(pkg.scripts) ? Object.keys(pkg.scripts) : [];
    // npm runs these on install (prepare for git and folder installs, and warns of them for a
    // tarball); the build is prepack's, which runs only when packing.
    expect(scripts.filter((s) => ["preinstall", "install", "postinstall", "prepare"].includes(s))).toEqual([]);
    expect(scripts).toContain("prepack");
    expect(existsSync(join(installed, "dist", "client", "index.d.ts"))).toBe(true);
  });

  test("has every exports entry with types and default, each pointing at a shipped file", () => {
    const pkg: unknown = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    if (!isRecord(pkg) || !isRecord(pkg.exports)) throw new Error("package.json has no exports map");
    expect(pkg.type).toBe("module");
    const exportsMap = pkg.exports;
    expect(Object.keys(exportsMap)).toEqual(expect.arrayContaining(requiredExports));
    const missing: string[] = [];
    for (const [entry, target] of Object.entries(exportsMap)) {
      if (!isRecord(target)) {
        missing.push(`${entry}: not a { types, default } object`);
        continue;
      }
      for (const condition of ["types", "default"]) {
        const file = target[condition];
        if (typeof file !== "string") missing.push(`${entry}: no "${condition}"`);
        else if (!existsSync(join(installed, file))) missing.push(`${entry} ${condition}: ${file} is not in the tarball`);
      }
    }
    expect(missing).toEqual([]);
  });

  // docs/testing.md's setup (vitest.config.mts) must work whatever the app's package type.
  test.each([
    ['with "type": "module"', "module"],
    ['without "type" (CommonJS by default)', undefined],
  ])("runs the app's convex-test suite through convex-rate-limiter/test, %s", async (_, type) => {
    const manifest = join(app, "package.json");
    const pkg: unknown = JSON.parse(readFileSync(manifest, "utf8"));
    if (!isRecord(pkg)) throw new Error("the app's package.json is not an object");
    writeFileSync(manifest, JSON.stringify({ ...pkg, type }, null, 2));
    const r = await runVitest(app);
    const counts = r.counts === undefined ? undefined : { passed: r.counts.passed, failed: r.counts.failed, suites: r.counts.suites };
    // Three tests in test/pack-fixture/convex/limits.spec.ts; a failure to import counts as a failed suite.
    expect({ code: r.code, counts }, r.output).toEqual({
      code: 0,
      counts: { passed: 3, failed: 0, suites: 0 },
    });
    // No warning about the module type (Node's "Reparsing as ES module", or CommonJS/ESM mix-ups).
    expect(r.output).not.toMatch(/warning|CommonJS|Reparsing/i);
  }, 240_000);

  test("typechecks the app against the installed package's types", async () => {
    const tsc = join(app, "node_modules", "typescript", "bin", "tsc");
    const r = await run(process.execPath, [tsc, "--project", "tsconfig.json"], app, 180_000);
    expect(r.code, r.output).toBe(0);
  }, 240_000);
});

describe("the README's examples, pasted into a fresh app", () => {
  const opening = readmeSnippets("At a glance");
  const features = readmeSnippets().filter((f) => f.path.startsWith("convex/features/"));
  const configs = readmeAppFiles();
  let readmeApp = "";

  beforeAll(async () => {
    // What a new user has: an app with the tarball installed, the files pasted as the README shows
    // them (the opening example's six, each feature's file, and its tsconfig.json), and
    // convex/_generated as `npx convex dev` writes it (made offline, by tools/app-codegen.mjs, with
    // Convex's own codegen and its default convex/tsconfig.json).
    readmeApp = join(work, "readme-app");
    newApp(readmeApp);
    paste(readmeApp, [...opening, ...features, ...configs]);
    await must(process.execPath, [join(root, "tools", "app-codegen.mjs"), readmeApp], readmeApp, 60_000);
  }, 120_000);

  test("the opening example is six files, from the component's install to a React button", () => {
    expect(opening.map((f) => f.path)).toEqual([
      "convex/convex.config.ts",
      "convex/limits.ts",
      "convex/schema.ts",
      "convex/signups.ts",
      "src/useNow.ts",
      "src/live/SignUpButton.tsx",
    ]);
  });

  test("every feature has a whole file of its own, and the app a tsconfig.json", () => {
    expect(features.map((f) => f.path).sort()).toEqual(
      readdirSync(join(root, "example", "convex", "features")).map((f) => `convex/features/${f}`).sort(),
    );
    expect(configs.map((f) => f.path)).toEqual(["tsconfig.json"]);
  });

  test.each([
    ["`npx tsc --noEmit` with the README's tsconfig.json: the Convex functions and the React button", []],
    ["the Convex functions under the convex/tsconfig.json Convex writes", ["--project", join("convex", "tsconfig.json")]],
  ])("typechecks: %s", async (_, project) => {
    const tsc = join(readmeApp, "node_modules", "typescript", "bin", "tsc");
    const r = await run(process.execPath, [tsc, "--noEmit", ...project], readmeApp, 180_000);
    expect(r.code, r.output).toBe(0);
  }, 240_000);
});

describe("the example app's convex/ folder (the guide's and docs/testing.md's code), in a fresh app", () => {
  let guideApp = "";
  const tests = readdirSync(join(root, "example", "convex"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".test.ts"));

  beforeAll(async () => {
    // The folder as it is, but for its _generated (written here as a user's `npx convex dev`
    // would), with the vitest config docs/testing.md shows (test/pack-fixture's).
    guideApp = join(work, "guide-app");
    newApp(guideApp);
    cpSync(join(root, "example", "convex"), join(guideApp, "convex"), {
      recursive: true,
      filter: (src) => basename(src) !== "_generated",
    });
    cpSync(join(fixture, "vitest.config.mts"), join(guideApp, "vitest.config.mts"));
    // Two of its tests import helpers of this repository's (tools/bounds.ts, tools/random.ts) by
    // `../../tools/`: from the app's convex/, that is a tools/ folder beside the app.
    for (const helper of new Set(
      tests.flatMap((f) => [...readFileSync(join(root, "example", "convex", f), "utf8").matchAll(/from "\.\.\/\.\.\/tools\/(\w+)\.js"/g)].map((m) => m[1] ?? "")),
    )) {
      mkdirSync(join(work, "tools"), { recursive: true });
      cpSync(join(root, "tools", `${helper}.ts`), join(work, "tools", `${helper}.ts`));
    }
    await must(process.execPath, [join(root, "tools", "app-codegen.mjs"), guideApp], guideApp, 60_000);
  }, 120_000);

  test("runs its whole test suite with the registry's convex-test and vitest", async () => {
    const r = await runVitest(guideApp);
    expect({ code: r.code, counts: r.counts }, r.output).toEqual({
      code: 0,
      counts: { files: tests.length, passed: expect.any(Number), failed: 0, suites: 0 },
    });
  }, 360_000);

  test("typechecks under the convex/tsconfig.json Convex writes", async () => {
    const tsc = join(guideApp, "node_modules", "typescript", "bin", "tsc");
    const r = await run(process.execPath, [tsc, "--noEmit", "--project", join("convex", "tsconfig.json")], guideApp, 180_000);
    expect(r.code, r.output).toBe(0);
  }, 240_000);
});
