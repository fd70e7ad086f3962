// Mutation testing of the pure layer (`npm run test:mutation`): Stryker changes src/shared one
// small edit at a time and runs the default vitest project's tests that reach each edit; an edit
// no test notices (a surviving mutant) is a missing test or dead code. Incremental: a rerun only
// tests the mutants whose code or covering tests changed since the last run.
// @ts-check

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
const config = {
  testRunner: "vitest",
  vitest: {
    configFile: "vitest.config.ts",
    // Component tests reach src/shared through convex-test's import.meta.glob, which vitest's
    // import graph doesn't follow: pick tests by file and by per-test coverage instead.
    related: false,
  },
  mutate: ["src/shared/**/*.ts"],
  // The default project's tests that exercise src/shared: the pure layer's own (flows over the
  // in-memory store, properties, tables), and the small convex-test files that are the only
  // tests of some of it (metrics, limitAll's merge, credit, dry runs, failing closed). The big
  // component, client and React files reach the same code through convex-test, far more slowly;
  // a mutant only they would kill survives here, and is then a missing test of the pure layer.
  testFiles: [
    "test/algebra.test.ts",
    "test/config-change-property.test.ts",
    "test/config-change.test.ts",
    "test/credit.test.ts",
    "test/dry-run.test.ts",
    "test/fail-closed.test.ts",
    "test/flow.test.ts",
    "test/fractions.test.ts",
    "test/idle.test.ts",
    "test/jitter.test.ts",
    "test/limit-all.test.ts",
    "test/metrics.test.ts",
    "test/properties.test.ts",
    "test/reservations.test.ts",
    "test/shards.test.ts",
    "test/sliding.test.ts",
    "test/split.test.ts",
    "test/validation.test.ts",
    "test/whole-flow.test.ts",
  ],
  coverageAnalysis: "perTest",
  incremental: true,
  incrementalFile: "reports/mutation/incremental.json",
  // Two cores, shared with other work: a worker each.
  concurrency: 2,
  // A mutant that loops forever is stopped after 10 s plus twice the tests' own time: generous on
  // a busy machine, short enough that the few such mutants don't dominate the run.
  timeoutMS: 10_000,
  timeoutFactor: 2,
  // Mutants in code that runs only when a module loads (validators, constants) would each need a
  // full reload and every test: validators are checked by the component tests, not run here.
  ignoreStatic: true,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};

export default config;
