// Offline codegen for a Convex app, for tests that build an app from scratch (test/pack.test.ts):
//
//   node tools/app-codegen.mjs [appDir]       (appDir defaults to the current directory)
//
// `npx convex codegen` needs a deployment for an app with components. Without one,
// `convex codegen --system-udfs --typecheck disable` still writes convex/_generated (api, server,
// dataModel) from the app's own modules, with one thing missing: the `components` export, which
// only a deployment's codegen writes. This adds it: it bundles convex/convex.config.ts with the
// esbuild convex itself uses, reads which components `app.use` installs under which names, and
// types each `components.<name>` by its package's `_generated/component.js` entry, as Convex's
// own codegen does. `--init` also writes Convex's default convex/tsconfig.json, as `npx convex
// dev` does in a new project. It needs `convex` in the app's package.json and node_modules.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * appCodegen generates `appDir`/convex/_generated offline, `components` included.
 * @param {string} appDir the app's root: its package.json, node_modules and convex/ are there
 * @returns {Promise<string[]>} the names of the components installed
 */
export async function appCodegen(appDir) {
  const appRequire = createRequire(path.join(appDir, "package.json"));
  const convexDir = path.dirname(appRequire.resolve("convex/package.json"));
  execFileSync(
    process.execPath,
    [path.join(convexDir, "bin", "main.js"), "codegen", "--system-udfs", "--typecheck", "disable", "--init"],
    { cwd: appDir, stdio: "pipe" },
  );
  const children = await installedComponents(path.join(appDir, "convex", "convex.config.ts"), convexDir);
  const generated = path.join(appDir, "convex", "_generated");
  const js = path.join(generated, "api.js");
  const plain = 'import { anyApi } from "convex/server";';
  const source = readFileSync(js, "utf8");
  if (!source.includes(plain)) throw new Error(`${js} doesn't import anyApi as expected`);
  writeFileSync(
    js,
    `${source.replace(plain, 'import { anyApi, componentsGeneric } from "convex/server";')}\nexport const components = componentsGeneric();\n`,
  );
  const types = children.map(
    ({ name, from }) => `  ${name}: import("${from}/_generated/component.js").ComponentApi<"${name}">;`,
  );
  const dts = path.join(generated, "api.d.ts");
  writeFileSync(dts, `${readFileSync(dts, "utf8")}\nexport declare const components: {\n${types.join("\n")}\n};\n`);
  return children.map((c) => c.name);
}

/**
 * The components `config` (an app's convex.config.ts) installs: each one's name and the module
 * it came from, without its `/convex.config` suffix (e.g. `convex-rate-limiter`).
 * @param {string} config
 * @param {string} convexDir where the `convex` package is installed (its esbuild is used)
 * @returns {Promise<Array<{ name: string; from: string }>>}
 */
async function installedComponents(config, convexDir) {
  const esbuild = await import(pathToFileURL(createRequire(path.join(convexDir, "package.json")).resolve("esbuild")).href);
  const out = mkdtempSync(path.join(tmpdir(), "app-codegen-"));
  try {
    const outfile = path.join(out, "convex.config.mjs");
    await esbuild.build({
      entryPoints: [config],
      outfile,
      bundle: true,
      format: "esm",
      platform: "node",
      logLevel: "error",
      plugins: [
        {
          // `use` needs to know where each component's definition came from, which Convex's
          // bundler records; here, a wrapper around each imported definition records it.
          name: "component-origin",
          setup(build) {
            // Every level: a component's own convex.config installs its children with `use` too.
            build.onResolve({ filter: /\/convex\.config(\.[cm]?js)?$/ }, (args) =>
              args.namespace === "file" && /convex\.config\.[cm]?[jt]s$/.test(args.importer)
                ? { path: args.path, namespace: "origin", pluginData: args.resolveDir }
                : undefined,
            );
            build.onLoad({ filter: /.*/, namespace: "origin" }, (args) => ({
              contents: [
                `import definition from ${JSON.stringify(args.path)};`,
                `export default { ...definition, defaultName: definition._name, componentDefinitionPath: ${JSON.stringify(args.path)} };`,
              ].join("\n"),
              resolveDir: args.pluginData,
              loader: "js",
            }));
          },
        },
      ],
    });
    const app = (await import(pathToFileURL(outfile).href)).default;
    /** @type {Array<[string, { componentDefinitionPath: string }]>} */
    const children = app._childComponents ?? [];
    return children.map(([name, definition]) => {
      const from = definition.componentDefinitionPath.replace(/\/convex\.config(\.[cm]?js)?$/, "");
      // A relative path is relative to convex/; the generated api sits one folder below it.
      return { name, from: from.startsWith(".") ? path.posix.join("..", from) : from };
    });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = await appCodegen(path.resolve(process.argv[2] ?? "."));
  console.log(`convex/_generated written, with components: ${names.join(", ") || "(none)"}`);
}
