// Runs a TypeScript program that needs vite (convex-test's `import.meta.glob`) outside vitest:
//
//   node tools/run.mjs [--heartbeat S] entry.ts [args...]   (npm run bench and npm run demo use it)
//
// It starts a vite dev server in middleware mode (no HTTP listener, no websocket, no file
// watching, no HMR), opens a module runner over its SSR environment and imports the entry
// through it. The runner stays open until the entry's `main` (if it exports one) has finished,
// because convex-test imports the component's modules lazily, on first use; vite's one-shot
// `runnerImport` would close it too early ("module runner has been closed").
//
// The entry sees its own arguments as `process.argv.slice(2)`, as if run directly, and may
// export `main(args: string[]): Promise<void>`, which is awaited. Exit code 1 on error; 2 with no
// entry, or when the entry throws a `UsageError` (tools/usage.ts), whose message alone is printed.
// `--heartbeat S` prints the time elapsed to stderr every S seconds, for a long program that
// prints nothing until it is done (npm run simulate).
import { Worker } from "node:worker_threads";
import { createServer, createServerModuleRunner } from "vite";
import path from "node:path";
import { selfAlias } from "./self-alias.mjs";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
let argv = process.argv.slice(2);
let heartbeat = 0;
if (argv[0] === "--heartbeat") {
  heartbeat = Number(argv[1]);
  argv = argv.slice(2);
}
const [first, ...args] = argv;
if (first === undefined || !/\.(m?ts|tsx)$/.test(first) || !(heartbeat >= 0)) {
  console.error("usage: node tools/run.mjs [--heartbeat seconds] entry.ts [args...]");
  process.exit(2);
}
const entry = path.resolve(first);
process.argv = [process.argv[0] ?? "node", entry, ...args];

const server = await createServer({
  root,
  configFile: false,
  logLevel: "warn",
  server: { middlewareMode: true, hmr: false, ws: false, watch: null },
  appType: "custom",
  optimizeDeps: { noDiscovery: true, include: [] },
  // These ship their convex-test `register()` as TypeScript source, which Node can't load, so vite
  // transforms them like our own code (the benchmark measures the package we replace side by side).
  ssr: { noExternal: ["@convex-dev/rate-limiter", "@convex-dev/batch-worker"] },
  // The package's own entry points resolve to its source, as in the tests.
  resolve: { alias: selfAlias(root) },
});
const runner = createServerModuleRunner(server.environments.ssr, { hmr: false });
// With no watcher and no HMR, a module once fetched never changes, so a repeated import needn't
// ask the server again. Besides speed, this matters inside a convex-test transaction: each fetch
// arms a `setTimeout` (the transport's time limit), which convex-test forbids in queries and
// mutations, so a nested `ctx.runMutation` would fail while importing the module it calls.
// (`cachedModule` and `evaluatedModules` are vite 7 internals; without them, skip the shortcut.)
if (
  typeof runner.cachedModule === "function" &&
  typeof runner.evaluatedModules?.getModuleByUrl === "function"
) {
  const fetchModuleInfo = runner.cachedModule.bind(runner);
  runner.cachedModule = async (url, importer) => {
    const known = runner.evaluatedModules.getModuleByUrl(url);
    return known?.meta ? known : fetchModuleInfo(url, importer);
  };
}
let code = 0;
// The heartbeat runs in a worker thread writing straight to stderr (fd 2): the program may keep its
// own thread busy for minutes without yielding, and may fake its clock (tools/clock.ts).
const beat =
  heartbeat > 0
    ? new Worker(
        `const { writeSync } = require("node:fs");
        const { workerData } = require("node:worker_threads");
        const started = Date.now();
        setInterval(() => writeSync(2, "  ... still running: " + Math.round((Date.now() - started) / 1000) + " s\\n"), workerData * 1000);`,
        { eval: true, workerData: heartbeat },
      )
    : undefined;
beat?.unref();
try {
  const mod = await runner.import(entry);
  if (typeof mod.main === "function") await mod.main(args);
} catch (e) {
  if (e instanceof Error && e.name === "UsageError") {
    console.error(e.message);
    code = 2;
  } else {
    console.error(e);
    code = 1;
  }
} finally {
  await beat?.terminate();
  await runner.close();
  await server.close();
}
process.exit(code || Number(process.exitCode ?? 0));
