// Mutation testing of the pure layer (`npm run test:mutation`): Stryker changes src/shared one
// small edit at a time and runs the tests that reach each edit (every test file of `npm test` but
// the few vitest.mutation.config.ts names, with its reason); an edit no test notices (a surviving
// mutant) is a missing test or dead code. Incremental: a rerun only tests the mutants whose code
// or covering tests changed since the last run.
// @ts-check

/**
 * The files of src/shared in groups that `npm run test:mutation` (tools/mutation.mjs) runs one after
 * another, each with its own incremental file and report: a run cut short keeps the groups it
 * finished, and a rerun only tests what changed in each. Every module of src/shared is in exactly
 * one group (test/mutation-config.test.ts checks it), so none goes unmutated.
 */
export const groups = {
  verdict: ["flow/request", "shards/overload", "flow/settle", "flow/limit-all", "admin/cleanup", "metrics/metrics-fold", "metrics/metrics"],
  plan: ["shards/plan"],
  view: ["flow/view", "shapes/rows", "shapes/stored", "shards/shard", "flow/flow"],
  layout: ["shards/layout", "shards/terms"],
  algebra: ["kinds/algebra", "kinds/state", "kinds/windows", "kinds/predict", "core/split", "core/math", "kinds/window-log", "kinds/window-log-bytes"],
  // Calendar quotas: which period of a zone's calendar holds an instant, and when it ends.
  calendar: ["core/calendar"],
  flows: ["flow/apply", "flow/value", "flow/credit", "admin/idle", "flow/jitter"],
  // Waiting until allowed: runWhenAllowed, waitUntilAllowed and cancelRun's decisions.
  waiting: ["flow/wait"],
  // The sizing rule and the "too hot" report.
  heat: ["metrics/heat"],
  // Overrides, blocks and lockouts: what is in force for a request, and an override's writes.
  overrides: ["overrides/overrides", "admin/override-writes"],
  // Keys from the request: IP addresses and networks.
  networks: ["overrides/address"],
  // Input checks, in four groups: their tests run on convex-test (validation.test.ts), so each
  // group takes the better part of an hour on 2 cores, and a run cut short keeps those it finished.
  validate: ["validation/validate"],
  shape: ["validation/validate-config"],
  validators: ["shapes/validators", "shapes/value-validators", "shapes/concurrency-validators", "shapes/limit-all-validators", "shapes/error-validators", "shapes/heat-validators", "shapes/calendar-validators", "shapes/override-validators"],
  concurrency: ["flow/concurrency"],
};

/** The group this run mutates (MUTATION_GROUP, set by tools/mutation.mjs), or all of src/shared. */
const group = process.env.MUTATION_GROUP;
if (group !== undefined && !(group in groups)) throw new Error(`MUTATION_GROUP: no group ${group}`);
const suffix = group === undefined ? "" : `-${group}`;

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
const config = {
  testRunner: "vitest",
  vitest: {
    // The default project's test files less named exclusions, no type tests: see vitest.mutation.config.ts.
    configFile: "vitest.mutation.config.ts",
    // Component tests reach src/shared through convex-test's import.meta.glob, which vitest's
    // import graph doesn't follow: pick tests by per-test coverage instead.
    related: false,
  },
  mutate: group === undefined ? ["src/shared/**/*.ts"] : groups[group].map((f) => `src/shared/${f}.ts`),
  coverageAnalysis: "perTest",
  // The first run is every test file of the suite, with coverage per test: far more than Stryker's
  // 5 minutes on 2 shared cores.
  dryRunTimeoutMinutes: 60,
  incremental: true,
  incrementalFile: `reports/mutation/incremental${suffix}.json`,
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
  htmlReporter: { fileName: `reports/mutation/mutation${suffix}.html` },
  jsonReporter: { fileName: `reports/mutation/mutation${suffix}.json` },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};

export default config;
