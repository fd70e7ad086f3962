// The package's own entry points (`convex-rate-limiter`, `/react`, `/test`, ...) resolved to its
// source, for vite: tests and the programs run by tools/run.mjs see the code as it is, not the last
// build. (test/pack.test.ts checks the built package as users install it.)
import path from "node:path";

/**
 * selfAlias returns vite `resolve.alias` entries mapping the package's exports to `root`'s src/.
 * @param {string} root the repository root
 */
export function selfAlias(root) {
  return [
    { find: /^convex-rate-limiter$/, replacement: path.join(root, "src/client/index.ts") },
    { find: /^convex-rate-limiter\/react$/, replacement: path.join(root, "src/react/index.ts") },
    { find: /^convex-rate-limiter\/test$/, replacement: path.join(root, "src/test.ts") },
    { find: /^convex-rate-limiter\/convex\.config(\.js)?$/, replacement: path.join(root, "src/component/convex.config.ts") },
    {
      find: /^convex-rate-limiter\/_generated\/component(\.js)?$/,
      replacement: path.join(root, "src/component/_generated/component.ts"),
    },
  ];
}
