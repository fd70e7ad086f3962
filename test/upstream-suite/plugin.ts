// A vite plugin that runs @convex-dev/rate-limiter's own tests, from node_modules and unchanged,
// against this package: it re-points the relative imports of upstream's files at our modules (or
// at the small adapters next to this file) and their `vitest` import at ./vitest-shim.ts.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "vite";

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root. */
export const root = path.resolve(here, "../..");

/** Upstream's `src/` in node_modules, where its tests live. */
export const upstreamSrc = path.join(
  path.dirname(createRequire(import.meta.url).resolve("@convex-dev/rate-limiter/package.json")),
  "src",
);

/**
 * Upstream's modules (relative to its `src/`) and what they become. `null` keeps upstream's own
 * file: its tests and test setup, never its implementation. Any other upstream module resolves to
 * a stub that throws when loaded, so no upstream code runs in place of ours by accident.
 */
const redirects: Record<string, string | null> = {
  "client/index.ts": "src/client/index.ts",
  "react/index.ts": "src/react/index.ts",
  "component/schema.ts": "src/component/schema.ts",
  "component/_generated/api.ts": "src/component/_generated/api.ts",
  "component/_generated/component.ts": "src/component/_generated/component.ts",
  "test.ts": "src/test.ts",
  // Upstream's shared.ts is our src/shared/*, re-exported under its names.
  "shared.ts": "test/upstream-suite/shared.ts",
  // The component tests' setup globs upstream's component modules: use ours instead.
  "component/setup.test.ts": "test/upstream-suite/component-setup.ts",
  // The client tests' setup registers the component through `../test.js` (ours, above), with the
  // client test module itself as the app's functions: kept as it is.
  "client/setup.test.ts": null,
  "client/index.test.ts": null,
};

const unmapped = "\0upstream-unmapped:";

function isUpstream(file: string | undefined): file is string {
  return file !== undefined && file.startsWith(upstreamSrc + path.sep);
}

export function upstreamSuite(): Plugin {
  return {
    name: "upstream-suite",
    enforce: "pre",
    resolveId(source, importer) {
      const from = importer?.split("?")[0];
      if (!isUpstream(from)) return null;
      if (source === "vitest") return path.join(here, "vitest-shim.ts");
      if (!source.startsWith(".")) return null;
      const target = path.relative(upstreamSrc, path.resolve(path.dirname(from), source)).replace(/\.js$/, ".ts");
      if (!(target in redirects)) {
        // A module a test imports but we don't map; only an error if something loads it (globs
        // list every sibling module, lazily).
        if (target.endsWith(".test.ts")) return null;
        return unmapped + target;
      }
      const to = redirects[target];
      return to === null || to === undefined ? path.join(upstreamSrc, target) : path.join(root, to);
    },
    load(id) {
      if (!id.startsWith(unmapped)) return null;
      const target = id.slice(unmapped.length);
      return `throw new Error(${JSON.stringify(
        `upstream module ${target} has no counterpart here: map it in test/upstream-suite/plugin.ts`,
      )});`;
    },
  };
}
