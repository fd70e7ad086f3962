import path from "node:path";
import { defineConfig } from "vitest/config";
import { selfAlias } from "./tools/self-alias.mjs";
import { pendingAsync, skippedFiles } from "./test/upstream-suite/expected-failures.js";
import { root, upstreamSrc, upstreamSuite } from "./test/upstream-suite/plugin.js";

/** @convex-dev/rate-limiter's src/ in node_modules, where its tests are. */
const upstreamDir = path.relative(root, upstreamSrc);

export default defineConfig({
  test: {
    projects: [
      {
        // Our tests: `npm test`.
        resolve: { alias: selfAlias(root) },
        test: {
          name: "default",
          environment: "edge-runtime",
          // No test may depend on the machine's speed: budgets far above any test's run time (the
          // slowest take 1-2 s alone, several times that on a busy machine or under Stryker's
          // instrumentation). Tests that need longer say so themselves.
          testTimeout: 60_000,
          hookTimeout: 60_000,
          include: ["test/**/*.test.ts", "test/**/*.test.tsx", "example/**/*.test.ts", "example/**/*.test.tsx", "bench/**/*.test.ts"],
          server: { deps: { inline: ["convex-test"] } },
          typecheck: {
            // On here: vitest doesn't pass the --typecheck flag on to projects. Off for the lowest
            // convex (npm run test:lowest): our source is typed against the latest convex's declarations.
            enabled: process.env.LOWEST_CONVEX === undefined,
            // Type tests (expectTypeOf, @ts-expect-error) live in *.test-d.ts and are checked by tsc.
            include: ["test/**/*.test-d.ts"],
            tsconfig: "./tsconfig.json",
          },
        },
      },
      {
        // @convex-dev/rate-limiter's own tests, run from node_modules against our code:
        // `npm run test:upstream`. See test/upstream-suite/expected-failures.ts.
        plugins: [upstreamSuite()],
        test: {
          name: "upstream",
          environment: "edge-runtime",
          include: [`${upstreamDir}/**/*.test.ts`, "test/upstream-suite/*.check.ts"],
          exclude: [...Object.keys(skippedFiles), ...Object.keys(pendingAsync.files)].map((f) => `${upstreamDir}/${f}`),
          server: { deps: { inline: ["convex-test"] } },
        },
      },
    ],
  },
});
