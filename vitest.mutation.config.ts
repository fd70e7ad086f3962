// The vitest configuration Stryker runs (`npm run test:mutation`, stryker.config.mjs): the default
// project's tests of the pure layer, without the type tests (tsc would run with every mutant, and a
// mutant of src/shared can't change a type test's verdict without failing the typecheck anyway).
import { defineConfig } from "vitest/config";
import { selfAlias } from "./tools/self-alias.mjs";
import { root } from "./test/upstream-suite/plugin.js";

/** The test files that reach src/shared without a Convex backend, or through small convex-test files. */
export const mutationTestFiles = [
  "test/algebra-edges.test.ts",
  "test/algebra.test.ts",
  "test/cleanup-flow.test.ts",
  "test/concurrency-client.test.ts",
  "test/concurrency-property.test.ts",
  "test/config-change-property.test.ts",
  "test/config-change.test.ts",
  "test/config-shape.test.ts",
  "test/credit.test.ts",
  "test/dry-run.test.ts",
  "test/exact-window.test.ts",
  "test/fail-closed.test.ts",
  "test/flow.test.ts",
  "test/flows-table.test.ts",
  "test/fractions.test.ts",
  "test/idle.test.ts",
  "test/jitter.test.ts",
  "test/layout-table.test.ts",
  "test/limit-all.test.ts",
  "test/metrics-fold.test.ts",
  "test/metrics.test.ts",
  "test/overload.test.ts",
  "test/properties.test.ts",
  "test/reservations.test.ts",
  "test/settle.test.ts",
  "test/shards.test.ts",
  "test/sliding.test.ts",
  "test/split.test.ts",
  "test/validate-messages.test.ts",
  "test/validation.test.ts",
  "test/verdict.test.ts",
  "test/whole-flow.test.ts",
];

export default defineConfig({
  resolve: { alias: selfAlias(root) },
  test: {
    name: "mutation",
    environment: "edge-runtime",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    include: mutationTestFiles,
    server: { deps: { inline: ["convex-test"] } },
  },
});
