// Vite config of the example UI. Run from the repository root:
//   vite --config example/vite.config.ts          (dev server; `npm run dev` also starts `convex dev`)
//   vite build --config example/vite.config.ts    (builds into example/dist)
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/**
 * Convex's generated server modules read `process.env` as they load, and the offline UI loads them
 * in the page (src/offline/deployment.ts), where there is no `process`. Builds replace
 * `process.env` with `{}` by default; this does the same on the dev server, in those modules only
 * (a global `process` would make other libraries think they run in Node).
 */
function convexEnvInDev(): Plugin {
  return {
    name: "convex-env-in-dev",
    apply: "serve",
    enforce: "post",
    transform(code, id) {
      if (!/\/_generated\/server\.[jt]s(\?|$)/.test(id)) return undefined;
      return { code: code.replace(/\b(?:globalThis\.|global\.)?process\.env\b/g, "{}"), map: null };
    },
  };
}

export default defineConfig({
  root: here("."),
  // `convex dev` writes VITE_CONVEX_URL to .env.local next to convex.json, at the repository root.
  envDir: here(".."),
  plugins: [react(), convexEnvInDev()],
  resolve: {
    // The UI imports the package by its published name, served from this checkout's sources so it
    // never runs a stale dist/. The exact-match patterns leave other subpaths to the exports map.
    alias: [
      { find: /^convex-rate-limiter\/react$/, replacement: here("../src/react/index.ts") },
      { find: /^convex-rate-limiter$/, replacement: here("../src/client/index.ts") },
      // The offline UI runs the component on convex-test in the page (src/offline/deployment.ts);
      // convex-test needs `AsyncLocalStorage`, which browsers lack. Tests and the demo run in
      // Node and never read this config.
      { find: /^node:async_hooks$/, replacement: here("src/offline/asyncHooks.ts") },
    ],
  },
  // The batch worker ships its convex-test `register` as TypeScript with `import.meta.glob`, which
  // the dev server's dependency pre-bundling would leave empty: serve it as source instead.
  optimizeDeps: { exclude: ["@convex-dev/batch-worker"] },
  build: {
    outDir: here("dist"),
    emptyOutDir: true,
    rollupOptions: {
      // The batch worker's convex-test `register` globs its own tests too; the page never loads
      // them, so vitest stays out of the bundle.
      external: ["vitest"],
      onwarn(warning, warn) {
        // Expected with the in-browser deployment, and harmless: its module globs name modules the
        // UI also imports directly, which simply stay in the main chunk.
        if (/dynamic import will not move module into another chunk/.test(warning.message)) return;
        warn(warning);
      },
    },
  },
  server: { host: "127.0.0.1" },
  preview: { host: "127.0.0.1" },
});
