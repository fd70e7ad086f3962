// The vitest configuration Stryker runs (`npm run test:mutation`, stryker.config.mjs): the test
// files of the group it mutates (MUTATION_GROUP; stryker.config.mjs's `groups` say which and why a
// narrower list is honest), or without a group every test file of the default project (`npm test`),
// taken by the same globs; either way less the files named in `mutationExclusions`, each with the
// reason no mutant of src/shared could change its verdict.
// Type tests (*.test-d.ts) are not run: tsc would run with every mutant, and a mutant of runtime
// code can't change a type test's verdict without failing the typecheck anyway. Stryker then runs,
// for each mutant, the tests that covered its code in the first run (`coverageAnalysis: "perTest"`).
import { defineConfig } from "vitest/config";
import { selfAlias } from "./tools/self-alias.mjs";
import { root } from "./test/upstream-suite/plugin.js";
import { groups } from "./stryker.config.mjs";

/** The test files of the default project (vitest.config.ts), by the same globs. */
export const mutationInclude = ["test/**/*.test.ts", "test/**/*.test.tsx", "example/**/*.test.ts", "example/**/*.test.tsx", "bench/**/*.test.ts"];

/** The test files left out of mutation testing, each with its reason. */
export const mutationExclusions: Readonly<Record<string, string>> = {
  "test/pack.test.ts":
    "packs the built package (dist/, built by `prepack` before any mutant exists) and installs it in a fresh app: it runs none of the mutated src/shared, and takes minutes",
  "test/readme.test.ts": "compares the README and docs with regions of source files, as text: it runs no code of src/shared",
  "test/imports.test.ts":
    "reads src/ as text (import cycles, the 450-line rule): Stryker's instrumented copy holds every mutant of a file at once, so it would fail on the copy's length, not on a behaviour",
  "test/names.test.ts": "asks the TypeScript compiler what it says about misspelled names: a mutant of runtime code changes no type",
};

/** The Stryker group being run (tools/mutation.mjs sets it), if any. */
const mutationGroup = process.env.MUTATION_GROUP as keyof typeof groups | undefined;

export default defineConfig({
  resolve: { alias: selfAlias(root) },
  test: {
    name: "mutation",
    environment: "edge-runtime",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    include: mutationGroup === undefined ? mutationInclude : groups[mutationGroup]!.tests,
    exclude: ["**/node_modules/**", ...Object.keys(mutationExclusions)],
    server: { deps: { inline: ["convex-test"] } },
  },
});
