// Vite config of the example UI. Run from the repository root:
//   vite --config example/vite.config.ts          (dev server; `npm run dev` also starts `convex dev`)
//   vite build --config example/vite.config.ts    (builds into example/dist)
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here("."),
  // `convex dev` writes VITE_CONVEX_URL to .env.local next to convex.json, at the repository root.
  envDir: here(".."),
  plugins: [react()],
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
  build: {
    outDir: here("dist"),
    emptyOutDir: true,
    rollupOptions: {
      // The batch worker's convex-test `register` globs its own tests too; the page never loads
      // them, so vitest stays out of the bundle.
      external: ["vitest"],
      onwarn(warning, warn) {
        // Expected with the in-browser deployment, and harmless: its module globs name modules the
        // UI also imports directly (they simply stay in the main chunk), and @sinonjs/fake-timers
        // mentions Node's `util`, which it only loads under Node.
        if (/dynamic import will not move module into another chunk/.test(warning.message)) return;
        if (/Module "util" has been externalized/.test(warning.message)) return;
        warn(warning);
      },
    },
  },
  server: { host: "127.0.0.1" },
  preview: { host: "127.0.0.1" },
});
