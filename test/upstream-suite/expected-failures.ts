// Every @convex-dev/rate-limiter test that fails against this package, and why (npm run
// test:upstream). A listed test must fail with an error matching `because` (its message, plus an
// assertion's actual and expected values, as failureText in vitest-shim.ts writes them): if it
// passes, or fails differently, the run fails. Names are "<file under upstream's src/> > <describe
// names> > <test name>", as vitest's full test name.

/** One reason, and the tests that fail for it. */
export type Entry = {
  tests: string[];
  /** Matched against the failure text; specific enough that another failure doesn't pass for it. */
  because: RegExp;
  why: string;
};

/** Upstream files not run at all: they test upstream's internal modules, which we don't have. */
export const skippedFiles: Record<string, string> = {
  "component/internal.test.ts": "tests upstream's component/internal.ts (its row-level helpers)",
  "component/worker.test.ts": "tests upstream's component/worker.ts (the batch worker behind asynchronous updates)",
};

const kinds = ["token bucket", "fixed window"] as const;
/** The names of a test inside upstream's `describe.each(kinds)(title)`. */
const eachKind = (file: string, title: (kind: string) => string, test: string) =>
  kinds.map((kind) => `${file} > ${title(kind)} > ${test}`);

/**
 * (a) Upstream bugs we fixed: each names the row of docs/differences.md's "Differences from
 * @convex-dev/rate-limiter" table (its first cell) that documents the difference.
 */
export const upstreamBugsFixed: (Entry & { readmeRow: string })[] = [
  {
    readmeRow: "`count` above `capacity`",
    tests: [
      ...eachKind("component/lib.test.ts", (k) => `rateLimit ${k}`, "consume too much"),
      ...eachKind("component/lib.test.ts", (k) => `rateLimit ${k}`, "consume too much reserved"),
    ],
    because:
      /^AssertionError: expected \[Function\] to throw error including 'Rate limit simple count (2 exceeds 1|4 exceeds 3)\.'[^]*\nactual: \{"kind":"InvalidRateLimit","field":"count","value":"[24]"[^\n]*can never succeed/,
    why: "upstream throws a plain Error ('Rate limit simple count 2 exceeds 1.'); ours throws an InvalidRateLimit ConvexError naming `count`",
  },
  {
    readmeRow: "`count` above `capacity`",
    tests: [
      "shared.test.ts > calculateRateLimit > token bucket with over-consumption",
      "react/index.test.ts > useRateLimit > handles fixed window rate limits correctly",
    ],
    because: /^ConvexError: \{"kind":"InvalidRateLimit","field":"count","value":"1[25]".*exceeds the capacity \(10\)/,
    why:
      "a count above capacity (15 or 12 of 10) can never succeed; upstream's calculateRateLimit (and the hook's " +
      "check) still promise a retry time, ours throw the same InvalidRateLimit error as the component",
  },
  {
    readmeRow: "`getValue` on a sharded limit",
    tests: eachKind("component/getValue.test.ts", (k) => `getValue ${k}`, "get value with sampleShards parameter"),
    because: /^AssertionError: expected 2 to be 10/,
    why: "a fresh 5-shard limit of 10: upstream reports one shard holding all 10; ours the shard's own 2 (its share)",
  },
  {
    readmeRow: "`useRateLimit` before the clock offset is known",
    tests: ["react/index.test.ts > useRateLimit > handles clock skew correctly"],
    because: /^AssertionError: expected \d+ to be close to \d+, received difference is 5000, but expected 50/,
    why:
      "no getServerTimeMutation, data stamped 5 s ahead: upstream assumes the clocks agree and waits the 5 s too; " +
      "ours takes the data's ts as the server's time on arrival, so retryAt is 5 s earlier on the browser clock",
  },
  {
    readmeRow: '`applyUpdates: "asynchronously"`',
    tests: ["client/index.test.ts > asynchronous > rejected asynchronous calls consume nothing"],
    because: /^AssertionError: expected (?:\+?0|0\.\d+) to be less than 0\n[^]*at: client\/index\.test\.ts:194$/,
    why:
      "four calls on a capacity of 3: upstream decides all four on a stale value and overshoots into debt; ours " +
      "decides exactly near the limit, refuses the fourth, and never goes below 0",
  },
  {
    readmeRow: "`getValue` of an asynchronous limit before the worker ran",
    tests: ["client/index.test.ts > asynchronous > limit and reset queue their writes instead of applying them"],
    // 0 left, plus what 1 ms refills at 10 an hour (1/360000): convex-test's clock moves with
    // commits, so the third take and the read after it run 1 ms after the first (see frozenClock).
    because: /^AssertionError: expected 0\.0000027777777777959756 to be 3 \/\/ Object.is equality[^]*\nat: client\/index\.test\.ts:171$/,
    why:
      "three takes recorded, the worker not run yet: upstream's getValue reports the last applied state (3 left); " +
      "ours counts the recorded takes (0 left, plus the 1/360000 token that 1 ms of convex-test's moving clock refills)",
  },
];

/** (b) Internal details: the test asserts upstream's internals or a representation, not behaviour. */
export const internalDetails: Entry[] = [
  {
    tests: [
      "client/index.test.ts > asynchronous > reserve lets an asynchronous limit go into debt",
      "client/index.test.ts > asynchronous > hookAPI resolves its configured key against an asynchronous limit",
    ],
    because: /^AssertionError: expected -?1\.\d+ to be -?[12] \/\/ Object.is equality/,
    why:
      "getValue's (value, ts): upstream returns the stored row's, ours the state evaluated at query time; draining " +
      "(vi.runAllTimers) also runs batch-worker's own scheduled follow-ups, which moved the fake clock 2 minutes, so " +
      "ours includes that refill (-2 + 10/h × 2 min)",
  },
  {
    tests: ["component/lib.test.ts > asynchronous configs > can't be applied by rateLimit"],
    because: /to throw error including 'Rate limit config for async[^]*\nactual: Component "batchWorker" is not registered/,
    why:
      "which function takes an asynchronous config: upstream's client sends it to lib.enqueueUpdates and lib.rateLimit " +
      "refuses it; ours decides and records it in lib.rateLimit, which then needs the batchWorker child component that " +
      "this test's bare convexTest(schema, modules) doesn't register",
  },
  {
    tests: ["component/lib.test.ts > asynchronous configs > can't be queued when updates are applied transactionally"],
    because: /Expected a Convex function exported from module "lib" as `enqueueUpdates`, but there is no such export/,
    why: "calls upstream's internal queue mutation lib.enqueueUpdates, which our component doesn't have",
  },
  {
    tests: ["shared.test.ts > calculateRateLimit > fixed window with existing state in next window"],
    // Line 168 is `expect(result.windowStart).toBe(windowStart)`; `value` and `ts` match.
    because: /^AssertionError: expected \d+ to be \d+ \/\/ Object.is equality\n[^]*\nat: shared.test.ts:168$/,
    why:
      "calculateRateLimit's `windowStart` for a row from an earlier window: upstream returns the stored row's window " +
      "start, ours the start of the window containing `now` (as documented); both give the same phase, which is " +
      "all upstream reads it for (getValue's config.start)",
  },
];

/**
 * (c) Upstream tests that assume convex-test's clock stands still across top-level calls, as it did
 * before 0.0.70: they fail the same way against upstream's own code on convex-test 0.0.70 (checked
 * with its src/ unredirected: these tests, and only these, fail, with these very values). Since
 * 0.0.70 a call runs at max(Date.now(), the last commit rounded up to the ms) and a commit at a
 * frozen instant takes the last one + 1 ns, so with fake timers frozen the third call and every
 * later one run 1 ms after the first, as a deployment's transactions never run behind a commit
 * they can see. The bodies are upstream's and stay untouched; the values are exact.
 */
export const frozenClock: Entry[] = [
  {
    tests: ["client/index.test.ts > transactional > limit consumes the rate limit"],
    // Line 277: `expect(await valueOf(t, "strict")).toBe(0)` after three takes of a bucket of 3.
    because: /^AssertionError: expected 0\.0000027777777777959756 to be \+0 \/\/ Object.is equality[^]*\nat: client\/index\.test\.ts:277$/,
    why:
      "three takes of a bucket of 3 at 10 an hour, then getValue expects exactly 0: the third take and the read " +
      "run 1 ms after the first on convex-test 0.0.70's moving clock, so 1 ms of refill (1/360000 token) is there",
  },
];

/**
 * Differences that are neither: bugs in ours, to fix in src/ (then delete the entry; the run says
 * when). Listed so the suite can run in CI meanwhile.
 */
export const oursToFix: Entry[] = [];

/**
 * Pending: tests that can't pass yet because a feature is still being built; not counted as failing
 * for good. Delete entries as they start to pass (the run says when). Asynchronous mode, pending
 * when this suite was written, landed in 45918be; nothing is pending now.
 */
export const pendingAsync = {
  section: "pending: asynchronous mode",
  /**
   * Files that can't load yet, e.g. because a module-level `new RateLimiter(...)` refuses a config:
   * not run, but expected-failures.check.ts loads each and checks it still fails with `loadError`.
   * Delete a file's entry once it loads; its tests then run, and any that still fail go in `tests`
   * below (or another section).
   */
  files: {} as Record<string, { loadError: RegExp; why: string; blocked: string[] }>,
  /** Tests that run, and fail only because the feature is missing. */
  tests: [] as Entry[],
};

/** A listed test, with the section it is listed in. */
export type Listed = Entry & {
  section: "upstream bug fixed" | "internal detail" | "frozen clock" | "ours to fix" | "pending: asynchronous mode";
  readmeRow?: string;
};

const listed: Listed[] = [
  ...upstreamBugsFixed.map((e) => ({ ...e, section: "upstream bug fixed" as const })),
  ...internalDetails.map((e) => ({ ...e, section: "internal detail" as const })),
  ...frozenClock.map((e) => ({ ...e, section: "frozen clock" as const })),
  ...oursToFix.map((e) => ({ ...e, section: "ours to fix" as const })),
  ...pendingAsync.tests.map((e) => ({ ...e, section: "pending: asynchronous mode" as const })),
];

const byName = new Map<string, Listed>();
for (const entry of listed) {
  for (const name of entry.tests) {
    if (byName.has(name)) throw new Error(`expected-failures.ts lists "${name}" twice`);
    byName.set(name, entry);
  }
}

/** The entry listing the test `name` (a full name, as in the lists above), if any. */
export function expectedFor(name: string): Listed | undefined {
  return byName.get(name);
}

/** Every test name listed as run-and-fail (not the blocked tests of pending files). */
export function listedNames(): string[] {
  return [...byName.keys()];
}

const marker = "@convex-dev/rate-limiter/src/";

/** A path under upstream's `src/`, as the lists name files: "component/lib.test.ts". */
export function upstreamFile(filepath: string): string {
  const i = filepath.lastIndexOf(marker);
  return i < 0 ? filepath : filepath.slice(i + marker.length);
}
