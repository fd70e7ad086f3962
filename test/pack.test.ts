// Packaging as a user meets it: `npm pack` a copy of this tree (building via `prepack`), install the tarball in a temporary app made from test/pack-fixture, and run that app's convex-test suite and tsc; and paste the README's opening example into a second fresh app, generate its convex/_generated offline (tools/app-codegen.mjs) and typecheck it. No network: after `npm ci`, it runs with the registry unreachable.
// @vitest-environment node
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const fixture = join(root, "test", "pack-fixture");

// What the temporary app takes from this project's node_modules instead of the registry: the
// user's own dev dependencies (installing them again would be slow).
const borrowed = ["convex", "convex-test", "vitest", "vite", "@edge-runtime/vm", "typescript"];

// The test needs no network once `npm ci` has run here: the package's own runtime dependencies
// (its package.json `dependencies`: convex-helpers, @convex-dev/batch-worker) are linked from this
// project's node_modules into the app before `npm install --offline`, which then finds them in
// place and only unpacks the tarball. Only what `dependencies` declares is linked, so a
// dependency declared only in devDependencies still breaks the app, as it would for a user.

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

/** link makes this project's installed copy of package `name` the temporary app's (default: `app`). */
function link(name: string, into = app): void {
  const from = join(root, "node_modules", name);
  if (!existsSync(from)) throw new Error(`${from} is missing: run npm ci in ${root}`);
  const to = join(into, "node_modules", name);
  mkdirSync(dirname(to), { recursive: true });
  symlinkSync(from, to, "junction");
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

  // 2. A fresh app from the fixture, depending on the tarball alone.
  app = join(work, "app");
  cpSync(fixture, app, { recursive: true });
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "pack-test-app", private: true, type: "module", dependencies: { "convex-rate-limiter": `file:${tarball}` } }, null, 2),
  );

  // 3. Install it, offline. The package's runtime dependencies are linked in first (see the top
  //    of this file); npm never links a package's dependencies into anything but the app, so this
  //    tree's node_modules is only read. Peers (convex) are borrowed below rather than fetched,
  //    hence legacy-peer-deps. The package has no install scripts (see "runs nothing when
  //    installed" below), so none are lost.
  for (const name of runtimeDependencies()) link(name);
  await must(
    "npm",
    ["install", "--offline", "--legacy-peer-deps", "--no-package-lock", "--no-audit", "--no-fund", "--ignore-scripts"],
    app,
    180_000,
  );
  installed = join(app, "node_modules", "convex-rate-limiter");
  for (const name of borrowed) {
    // The package brought its own copy: keep it, as a user would.
    if (!existsSync(join(app, "node_modules", name))) link(name);
  }
}, 420_000);

afterAll(() => {
  if (work !== "") rmSync(work, { recursive: true, force: true });
});

/** The package's runtime dependencies: its package.json `dependencies`. */
function runtimeDependencies(): string[] {
  const manifest: unknown = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  return isRecord(manifest) && isRecord(manifest.dependencies) ? Object.keys(manifest.dependencies) : [];
}

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

/** The files of the README's opening example ("At a glance"): where each goes in an app, and its code as shown. */
function openingExample(): { path: string; code: string }[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const start = readme.indexOf("\n## At a glance");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  return [...section.matchAll(/<!-- snippet: example\/(\S+?)#\S+ -->\s*```tsx?\n([\s\S]*?)```/g)].map((m) => ({
    path: m[1] ?? "",
    code: m[2] ?? "",
  }));
}

describe("the packed package, installed in a fresh app", () => {
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
    const vitest = join(app, "node_modules", "vitest", "vitest.mjs");
    const report = join(work, "vitest-report.json");
    rmSync(report, { force: true });
    const r = await run(
      process.execPath,
      [vitest, "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`],
      app,
      180_000,
    );
    const parsed: unknown = existsSync(report) ? JSON.parse(readFileSync(report, "utf8")) : undefined;
    const counts = isRecord(parsed)
      ? { passed: parsed.numPassedTests, failed: parsed.numFailedTests, suites: parsed.numFailedTestSuites }
      : undefined;
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

describe("the README's opening example, pasted into a fresh app", () => {
  const files = openingExample();
  let paste = "";

  beforeAll(async () => {
    // What a new user has: an app with the tarball installed, the six files pasted as the README
    // shows them, and convex/_generated as `npx convex dev` writes it (made offline, by
    // tools/app-codegen.mjs, with Convex's own codegen and its default convex/tsconfig.json).
    paste = join(work, "readme-app");
    mkdirSync(paste);
    writeFileSync(
      join(paste, "package.json"),
      JSON.stringify({ name: "readme-app", private: true, type: "module", dependencies: { "convex-rate-limiter": `file:${tarball}` } }, null, 2),
    );
    for (const name of runtimeDependencies()) link(name, paste);
    await must(
      "npm",
      ["install", "--offline", "--legacy-peer-deps", "--no-package-lock", "--no-audit", "--no-fund", "--ignore-scripts"],
      paste,
      180_000,
    );
    for (const name of [...borrowed, "react", "@types/react"]) {
      if (!existsSync(join(paste, "node_modules", name))) link(name, paste);
    }
    // The app's own dependencies, as a Convex + React app lists them (codegen looks for convex).
    writeFileSync(
      join(paste, "package.json"),
      JSON.stringify(
        {
          name: "readme-app",
          private: true,
          type: "module",
          dependencies: { convex: "^1.48.0", "convex-rate-limiter": `file:${tarball}`, react: "^19.0.0" },
          devDependencies: { "@types/react": "^19.0.0", typescript: "^5.9.0" },
        },
        null,
        2,
      ),
    );
    for (const { path, code } of files) {
      mkdirSync(dirname(join(paste, path)), { recursive: true });
      writeFileSync(join(paste, path), code);
    }
    await must(process.execPath, [join(root, "tools", "app-codegen.mjs"), paste], paste, 60_000);
    // The React side's config: strict, as a Vite + React app's is, unused names included.
    writeFileSync(
      join(paste, "tsconfig.json"),
      JSON.stringify(
        {
          compilerOptions: {
            target: "ES2022",
            lib: ["ES2022", "DOM", "DOM.Iterable"],
            module: "ESNext",
            moduleResolution: "bundler",
            jsx: "react-jsx",
            strict: true,
            noUnusedLocals: true,
            noUnusedParameters: true,
            verbatimModuleSyntax: true,
            isolatedModules: true,
            skipLibCheck: true,
            noEmit: true,
            types: [],
          },
          include: ["src"],
        },
        null,
        2,
      ),
    );
  }, 420_000);

  test("is six files, from the component's install to a React button", () => {
    expect(files.map((f) => f.path)).toEqual([
      "convex/convex.config.ts",
      "convex/limits.ts",
      "convex/schema.ts",
      "convex/signups.ts",
      "src/useNow.ts",
      "src/live/SignUpButton.tsx",
    ]);
  });

  test.each([
    ["the Convex functions, under the convex/tsconfig.json Convex writes", join("convex", "tsconfig.json")],
    ["the React button and what it imports, under a strict app config", "tsconfig.json"],
  ])("typechecks: %s", async (_, project) => {
    const tsc = join(paste, "node_modules", "typescript", "bin", "tsc");
    const r = await run(process.execPath, [tsc, "--project", project], paste, 180_000);
    expect(r.code, r.output).toBe(0);
  }, 240_000);
});
