// Mutation testing of the pure layer (`npm run test:mutation`): Stryker changes src/shared one
// small edit at a time and runs the tests that reach each edit (a group's own test files, below;
// without a group, every test file of `npm test` but the few vitest.mutation.config.ts names, with
// its reason); an edit no test notices (a surviving mutant) is a missing test or dead code, and
// tools/mutation.mjs compares the survivors with the judged ones in mutation-survivors.json.
// Incremental: a rerun only tests the mutants whose code or covering tests changed since the last run.
// @ts-check

/**
 * The files of src/shared in groups that `npm run test:mutation` (tools/mutation.mjs) runs one after
 * another, in this order (the most used rules first, each group's tests cheap before dear), each
 * with its own incremental file and report: a run cut short keeps the groups it finished, and a
 * rerun only tests what changed in each. Every module of src/shared is in exactly one group
 * (test/mutation-config.test.ts checks it), so none goes unmutated.
 *
 * `tests` are the test files a group runs (globs, taken from vitest.mutation.config.ts's list, less
 * its named exclusions): the files that exercise the group's modules, by importing them or a flow
 * that runs them, and the component tests (convex-test) only where a module's code is reached only
 * through the component. The whole suite's first run with per-test coverage takes over ten minutes
 * a group on 2 shared cores; a list narrower than the whole suite can only leave a mutant alive that
 * another file would have killed, so it can lower a score, never raise it: a score here is a floor.
 */
export const groups = {
  overload: {
    modules: ["shards/overload"],
    tests: ["test/overload.test.ts", "test/overload-edges.test.ts", "test/shards-read-on.test.ts", "test/shards.test.ts", "test/flow.test.ts", "test/whole-flow.test.ts", "test/verdict.test.ts"],
  },
  plan: {
    modules: ["shards/plan"],
    tests: ["test/shards.test.ts", "test/plan-edges.test.ts", "test/shards-read-on.test.ts", "test/overload.test.ts", "test/overload-edges.test.ts", "test/flow.test.ts", "test/whole-flow.test.ts", "test/fractions.test.ts", "test/reservations.test.ts", "test/stranded-reservations.test.ts", "test/plan-kills.test.ts"],
  },
  request: {
    modules: ["flow/request", "flow/settle", "flow/limit-all"],
    tests: ["test/verdict.test.ts", "test/limit-all-merge.test.ts", "test/request-edges.test.ts", "test/settle.test.ts", "test/settle-exact.test.ts", "test/settle-calendar.test.ts", "test/flow.test.ts", "test/whole-flow.test.ts", "test/flows-table.test.ts", "test/network-resolution.test.ts", "test/overrides.test.ts", "test/override-property.test.ts", "test/request-kills.test.ts", "test/async-relayout-view.test.ts"],
  },
  // The kinds' algebra, in three groups (the first run of all six modules together, 724 mutants,
  // was past 20 minutes at half way on the shared cores): a row's state as of an instant and the
  // windows in time; the decisions and waits on them; the numbers under them.
  state: {
    modules: ["kinds/state", "kinds/windows"],
    // The first run on the first four alone scored 62.7 %: the sliding window's slide and debt
    // (leftAfter) and the exact window's log paths are tested in the files after them.
    tests: [
      "test/algebra.test.ts",
      "test/algebra-edges.test.ts",
      "test/exact-window.test.ts",
      "test/wait-algebra.test.ts",
      "test/exact-window-bounded.test.ts",
      "test/whole-flow.test.ts",
      "test/react-sliding.test.tsx",
      "test/sliding.test.ts",
      // Debts repaid past float precision, log-less exact rows, logs kept as the same bytes, calendar windows.
      "test/state-edges.test.ts",
    ],
  },
  algebra: {
    modules: ["kinds/algebra", "kinds/predict"],
    tests: [
      "test/algebra.test.ts",
      "test/algebra-edges.test.ts",
      "test/algebra-kills.test.ts",
      "test/algebra-cost.test.ts",
      "test/predict-edges.test.ts",
      "test/extreme-rates.test.ts",
      "test/wait-algebra.test.ts",
      "test/exact-window.test.ts",
      "test/react.test.tsx",
    ],
  },
  numbers: {
    modules: ["core/split", "core/math"],
    tests: ["test/split.test.ts", "test/split-edges.test.ts", "test/algebra.test.ts", "test/fractions.test.ts"],
  },
  // The exact sliding window's log: its entries (window-log), and its bytes (window-log-bytes),
  // in two groups so each runs on a core of its own (852 mutants together, 90 minutes on one).
  "window-log": {
    modules: ["kinds/window-log"],
    tests: ["test/exact-window.test.ts", "test/exact-window-bounded.test.ts", "test/wait-algebra.test.ts", "bench/sliding-model.test.ts",
      // The pure files that reach the log through the algebra, the state, a take's cost and credit.
      "test/state-edges.test.ts", "test/algebra-kills.test.ts", "test/algebra-cost.test.ts", "test/request-kills.test.ts", "test/credit-value-kills.test.ts", "test/layout-kills.test.ts",
      // Each of the module's functions at its documented bounds, and against naive references.
      "test/window-log-kills.test.ts"],
  },
  "window-log-bytes": {
    modules: ["kinds/window-log-bytes"],
    tests: ["test/window-log-bytes-kills.test.ts", "test/exact-window.test.ts", "test/exact-window-bounded.test.ts", "test/wait-algebra.test.ts", "bench/sliding-model.test.ts",
      "test/state-edges.test.ts", "test/algebra-kills.test.ts", "test/algebra-cost.test.ts", "test/request-kills.test.ts", "test/credit-value-kills.test.ts", "test/layout-kills.test.ts"],
  },
  // Overrides, blocks and lockouts: what is in force for a request, and an override's writes.
  overrides: {
    modules: ["overrides/overrides", "admin/override-writes"],
    // The admin functions (setOverride, removeOverride, network entries) and their checks are
    // reached only through the component: its client tests, which the pure ones left at 54.5 %.
    tests: [
      "test/overrides.test.ts",
      "test/overrides-edges.test.ts",
      "test/override-property.test.ts",
      "test/network-resolution.test.ts",
      "test/react-blocked.test.tsx",
      "test/overrides-client.test.ts",
      "test/networks.test.ts",
      "test/networks-clear.test.ts",
      // setOverride's checks of bad overrides and targets, and calendar quotas' overrides (windowOverride).
      "test/override-writes-edges.test.ts",
      // Rows read together that carry different overrides, or equal ones; a key target's stored form.
      "test/overrides-carried.test.ts",
    ],
  },
  // Keys from the request: IP addresses and networks.
  networks: {
    modules: ["overrides/address"],
    tests: ["test/address.test.ts", "test/address-edges.test.ts", "test/network-resolution.test.ts", "test/networks-property.test.ts", "test/networks.test.ts"],
  },
  layout: {
    modules: ["shards/layout", "shards/terms"],
    tests: ["test/layout-table.test.ts", "test/row-of.test.ts", "test/shards.test.ts", "test/flow.test.ts", "test/config-change-property.test.ts", "test/calendar-algebra.test.ts", "test/exact-window-bounded.test.ts", "test/settle.test.ts", "test/settle-exact.test.ts", "test/config-change.test.ts", "test/layout-kills.test.ts", "test/terms-kills.test.ts", "test/kind-change-debt.test.ts"],
  },
  // Calendar quotas: which period of a zone's calendar holds an instant, and when it ends.
  calendar: {
    modules: ["core/calendar"],
    tests: ["test/calendar-algebra.test.ts", "test/calendar-edges.test.ts", "test/calendar-cost.test.ts", "test/react-calendar.test.tsx"],
  },
  metrics: {
    modules: ["metrics/metrics", "metrics/metrics-fold", "admin/cleanup"],
    tests: ["test/metrics-fold.test.ts", "test/cleanup-flow.test.ts", "test/metrics.test.ts", "test/waiting-metrics.test.ts", "test/metrics-kills.test.ts", "test/admin.test.ts", "test/cleanup-cursor.test.ts", "test/fold-retention.test.ts"],
  },
  flows: {
    modules: ["flow/apply", "flow/value", "flow/credit", "admin/idle", "flow/jitter"],
    tests: ["test/flows-table.test.ts", "test/idle.test.ts", "test/flow.test.ts", "test/whole-flow.test.ts", "test/credit.test.ts", "test/async.test.ts",
      "test/credit-value-kills.test.ts",
      "test/overrides.test.ts",
      "test/idle-jitter-apply-kills.test.ts",
      "test/jitter.test.ts",
      "test/cleanup-flow.test.ts",
      "test/async-relayout-view.test.ts",
    ],
  },
  // The sizing rule and the "too hot" report.
  heat: {
    modules: ["metrics/heat"],
    tests: ["test/heat.test.ts", "test/heat-edges.test.ts", "bench/contention/plan.test.ts"],
  },
  // Concurrency limits (leases).
  concurrency: {
    modules: ["flow/concurrency"],
    tests: ["test/concurrency.test.ts", "test/concurrency-property.test.ts", "test/react-concurrency.test.tsx", "test/concurrency-client.test.ts", "test/concurrency-kills.test.ts", "test/exact-instants.test.ts", "test/metrics.test.ts", "test/react-hookapi.test.ts"],
  },
  // Waiting until allowed: runWhenAllowed, waitUntilAllowed and cancelRun's decisions, reached
  // only through the component.
  waiting: {
    modules: ["flow/wait"],
    tests: ["test/waiting*.test.ts", "test/wait-algebra.test.ts",
      // waitFlow's and runAtFlow's edges, pure: messages, the key's phase, a tier's block, refusals' writes; a take logged behind queued work.
      "test/wait-kills.test.ts", "test/request-kills.test.ts"],
  },
  // A key's rows as the flows see them: the reads (view), the writes, asynchronous takes and the
  // details' arithmetic, one file each.
  view: {
    modules: ["flow/view", "flow/writes", "flow/takes", "flow/details", "shapes/rows", "shapes/stored", "shards/shard", "flow/flow"],
    tests: ["test/flow.test.ts", "test/whole-flow.test.ts", "test/settle.test.ts", "test/flows-table.test.ts", "test/row-of.test.ts", "test/properties.test.ts",
      "test/rows-kills.test.ts",
      "test/request-edges.test.ts", "test/overrides.test.ts", "test/credit-value-kills.test.ts", "test/overrides-carried.test.ts",
      "test/view-writes-kills.test.ts", "test/async-relayout-view.test.ts"],
  },
  // Input checks: their tests run on convex-test (validation.test.ts), the dearest groups.
  validate: {
    modules: ["validation/validate"],
    tests: [
      "test/validate-messages.test.ts",
      "test/validation.test.ts",
      "test/algebra.test.ts",
      // The checks the first run left uncovered: waiting's config (the kinds it refuses), a
      // lockout's and a calendar's fields, a tier's name, through the flows and the client.
      "test/waiting-refused-kinds.test.ts",
      "test/overrides.test.ts",
      "test/override-writes-edges.test.ts",
      "test/calendar-client.test.ts",
      "test/predict-shape.test.ts",
      "test/request-kills.test.ts",
      "test/wait-algebra.test.ts",
      // The pure checks' edges: unshowable values, calendar and waiting refusals, boundary values.
      "test/validate-kills.test.ts",
    ],
  },
  shape: {
    modules: ["validation/validate-config"],
    tests: [
      "test/validate-config-kills.test.ts",
      // A fixed window's calendar from untyped code: each nested field checked and named.
      "test/calendar-window-shape.test.ts",
      "test/config-shape.test.ts",
      "test/validate-messages.test.ts",
      "test/validation.test.ts",
      "test/calendar-algebra.test.ts",
      // Calendar quotas' and concurrency limits' configs as the client checks them, and overrides'.
      "test/calendar-client.test.ts",
      "test/concurrency-client.test.ts",
      "test/override-writes-edges.test.ts",
      "test/predict-shape.test.ts",
    ],
  },
  validators: {
    modules: ["shapes/validators", "shapes/value-validators", "shapes/concurrency-validators", "shapes/limit-all-validators", "shapes/error-validators", "shapes/heat-validators", "shapes/calendar-validators", "shapes/override-validators"],
    tests: ["test/validation.test.ts", "test/validate-messages.test.ts", "test/returns.test.ts", "test/shapes-kills.test.ts"],
  },
};

/** The group this run mutates (MUTATION_GROUP, set by tools/mutation.mjs), or all of src/shared. */
const group = process.env.MUTATION_GROUP;
if (group !== undefined && !(group in groups)) throw new Error(`MUTATION_GROUP: no group ${group}`);
const suffix = group === undefined ? "" : `-${group}`;

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
const config = {
  testRunner: "vitest",
  vitest: {
    // The group's test files (MUTATION_GROUP), or the default project's less named exclusions, no
    // type tests: see vitest.mutation.config.ts.
    configFile: "vitest.mutation.config.ts",
    // Component tests reach src/shared through convex-test's import.meta.glob, which vitest's
    // import graph doesn't follow: pick tests by per-test coverage instead.
    related: false,
  },
  mutate: group === undefined ? ["src/shared/**/*.ts"] : groups[group].modules.map((f) => `src/shared/${f}.ts`),
  coverageAnalysis: "perTest",
  // The first run is every test file of the group, with coverage per test: more than Stryker's
  // 5 minutes for the groups with component tests, on 2 shared cores.
  dryRunTimeoutMinutes: 60,
  incremental: true,
  incrementalFile: `reports/mutation/incremental${suffix}.json`,
  // Two cores, shared with other work: one worker, so the run leaves the other core to the rest.
  concurrency: 1,
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
  // Not copied into the sandbox: other groups' sandboxes (two groups may run at once, each with
  // its own --tempDirName), the reports and the test artifacts.
  ignorePatterns: ["/.stryker-tmp*", "/reports", "/test-artifacts"],
  cleanTempDir: "always",
};

export default config;
