// `npm run test:lowest`: the suite on the lowest convex our peer range admits, so the declared
// range is the tested range. It copies the tree (without node_modules, .git and builds) into a
// temporary folder, links this project's node_modules there (hard links: no download, no change
// here), installs `convex@<lowest>` and the newest convex-test whose own peer range admits it in
// that copy only, and runs the default vitest project there with LOWEST_CONVEX set.
//
// What it runs: every runtime test of `npm test` except test/pack.test.ts (it packs and installs
// the package as a user would, against the latest registry versions, which `npm test` covers).
// Tests of what the lowest convex lacks skip themselves there, each naming what it lacks (see
// test/convex-features.ts). The type tests (*.test-d.ts) don't run (vitest.config.ts turns them
// off under LOWEST_CONVEX): our source is typed against
// the latest convex's declarations (`npm run typecheck`), which name what older ones lack
// (`ctx.meta.getSnapshotTs`), and the runtime tests show what an app on the lowest one gets.
//
//   node tools/lowest-convex.mjs [vitest args…]
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const range = pkg.peerDependencies.convex;
const match = /^\^(\d+\.\d+\.\d+)$/.exec(range);
if (!match) throw new Error(`peerDependencies.convex is ${range}: this script understands only ^x.y.z`);
const lowest = match[1];

/** The newest published convex-test whose peer range for convex admits `version`. */
function convexTestFor(version) {
  // One line per published version: `convex-test@0.0.70 '^1.43.0'`.
  const out = execFileSync("npm", ["view", "convex-test@>=0.0.1", "peerDependencies.convex"], { encoding: "utf8" });
  const admits = [...out.matchAll(/^convex-test@(\d+\.\d+\.\d+) '([^']+)'$/gm)]
    .map(([, v, peer]) => ({ v, peer }))
    .filter(({ peer }) => caretAdmits(peer, version));
  admits.sort((a, b) => compare(b.v, a.v));
  if (admits.length === 0) throw new Error(`no convex-test admits convex ${version}`);
  return admits[0].v;
}

/** Whether a `^x.y.z` range admits `version` (0.x ranges as npm reads them). */
function caretAdmits(peer, version) {
  const m = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(peer);
  if (!m) return false;
  const [maj, min] = [Number(m[1]), Number(m[2])];
  const [vmaj, vmin] = version.split(".").map(Number);
  if (compare(version, m.slice(1).join(".")) < 0) return false;
  return maj > 0 ? vmaj === maj : vmaj === 0 && vmin === min;
}

function compare(a, b) {
  const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

const convexTest = convexTestFor(lowest);
console.log(`::: the suite on convex ${lowest} (the lowest of ${range}) with convex-test ${convexTest}`);

const skipped = new Set(["node_modules", ".git", "dist", "test-artifacts", ".vite", ".stryker-tmp", "reports"]);
const copy = mkdtempSync(join(tmpdir(), "convex-rate-limiter-lowest-"));
try {
  cpSync(root, copy, { recursive: true, filter: (src) => src === root || !skipped.has(basename(src)) });
  // Hard links: the copy's node_modules costs no space and no download, and npm replaces the two
  // packages it installs there by new files, leaving this project's own untouched.
  execFileSync("cp", ["-al", join(root, "node_modules"), join(copy, "node_modules")]);
  for (const name of ["convex", "convex-test"]) rmSync(join(copy, "node_modules", name), { recursive: true, force: true });
  execFileSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", `convex@${lowest}`, `convex-test@${convexTest}`], {
    cwd: copy,
    stdio: "inherit",
  });
  const got = JSON.parse(readFileSync(join(copy, "node_modules", "convex", "package.json"), "utf8")).version;
  if (got !== lowest) throw new Error(`installed convex ${got}, not ${lowest}`);
  const run = spawnSync(
    "npx",
    ["vitest", "run", "--project", "default", "--exclude", "test/pack.test.ts", ...process.argv.slice(2)],
    { cwd: copy, stdio: "inherit", env: { ...process.env, LOWEST_CONVEX: lowest } },
  );
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(copy, { recursive: true, force: true });
}
