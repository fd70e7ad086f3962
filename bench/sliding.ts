// Section 6 of `npm run bench` (`--only sliding`): the sliding window's accuracy. On the same
// arrivals it measures the most admitted in any window of one period for the three kinds (a burst
// at the seam), the sliding window's errors against an exact sliding log per traffic shape, the
// same with the weighted previous count rounded other ways (a side table: the decision wrapped,
// the library unchanged), and the time per `limit` call against a token bucket on convex-test.
// Decisions are the library's own: `decideRateLimit` over one row for an unsharded limit, the
// component's flow on the in-memory store (tools/memory-store.ts) for a sharded one. Time is
// simulated, randomness seeded (bench/sliding-model.ts holds the pure parts).
import type { Clock } from "@sinonjs/fake-timers";
import { MINUTE, SECOND } from "../src/shared/kinds/algebra.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import type { Taken } from "../tools/bounds.js";
import { MemoryStore } from "../tools/memory-store.js";
import { seededRandom, streamSeed } from "../tools/random.js";
import { components, timePerCall } from "./app.js";
import {
  adversarial,
  boundedLogDecider,
  bursty,
  exactLog,
  maxInAligned,
  rowDecider,
  score,
  seamBursts,
  steady,
  storeDecider,
  weightedDecider,
  type Decider,
  type Score,
  type Weigh,
} from "./sliding-model.js";
import { num, pct, table } from "./table.js";
import { MAX_LOG_BYTES, MAX_LOG_ENTRIES } from "../src/shared/kinds/window-log.js";

export type SlidingOptions = {
  seed: number;
  /** Scaled down: fewer simulated periods per shape and fewer timed calls. */
  quick: boolean;
};

/** The limit measured: N tokens per window of W ms. */
const N = 100;
const W = MINUTE;
/** Shards of the sharded rows. */
const SHARDS = 10;
/** The seams of the burst-at-the-seam trace, one every `EVERY` periods, on a background of 0.5 N per W. */
const SEAMS = 20;
const EVERY = 3;

/** A traffic shape: its label and its requests. */
type Shape = { label: string; requests: Taken[] };

function shapes(opts: SlidingOptions, t0: number): Shape[] {
  const periods = opts.quick ? 100 : 500;
  const random = (label: string) => seededRandom(streamSeed(opts.seed, `sliding/${label}`));
  return [
    { label: "steady 0.8x", requests: steady(t0, N, W, periods, 0.8, random("steady0.8")) },
    { label: "steady 2x", requests: steady(t0, N, W, periods, 2, random("steady2")) },
    { label: "bursty", requests: bursty(t0, N, W, periods, random("bursty")) },
    { label: "burst at seam", requests: seamBursts(t0, N, W, SEAMS, EVERY, 0.5, random("seam")) },
    { label: "adversarial", requests: adversarial(t0, N, W, SEAMS, EVERY) },
  ];
}

/** The configs compared, each with its windows aligned to `t0`. */
function configs(t0: number, shards: number) {
  return {
    sliding: { kind: "sliding window", exact: false, rate: N, period: W, start: t0, shards },
    exact: { kind: "sliding window", rate: N, period: W, shards },
    fixed: { kind: "fixed window", rate: N, period: W, capacity: N, start: t0, shards },
    bucket: { kind: "token bucket", rate: N, period: W, capacity: N, shards },
  } satisfies Record<string, RateLimitConfig>;
}

/** A decider for `config`: the one-row decision unsharded, the component's flow on the store sharded. */
function deciderOf(config: RateLimitConfig, opts: SlidingOptions, label: string): Decider {
  return (config.shards ?? 1) === 1
    ? rowDecider(config)
    : storeDecider(config, seededRandom(streamSeed(opts.seed, `sliding/picks/${label}`)));
}

const ofN = (x: number) => `${(x / N).toFixed(2)} N`;
const withPct = (x: number, of: number) => `${num(x)} (${pct(x / of, 2)})`;

function boundLines(): void {
  console.log(`   The exact sliding window (the default) keeps a log per row: in any window of`);
  console.log(`   length W it admits at most N, per shard and in all.`);
  console.log(`   The bound: in any window of length W, the approximate one (exact: false) admits at most`);
  console.log(`   N + P x f < 2N, P <= N being the previous aligned window's count and f the`);
  console.log(`   elapsed fraction of the current one at the window's end (what the current`);
  console.log(`   window admitted by then is <= N - P x (1 - f), and at most P more lie in the`);
  console.log(`   previous one); every aligned window holds <= N. Sharded, each shard keeps its`);
  console.log(`   share of both bounds, so the whole limit keeps them. A fixed window admits up to`);
  console.log(`   capacity + rate = 2N across a seam; a token bucket capacity + rate x W/period = 2N.`);
}

/** 6a. The most admitted in any window of W on the burst-at-the-seam trace, per kind. */
function worstWindows(opts: SlidingOptions, t0: number, seam: Taken[]): void {
  console.log(`\n   a. WORST WINDOW on bursts at the seam: N = ${N} per W = 1 min; ${SEAMS} seams, one every`);
  console.log(`   ${EVERY} min, each with 2N requests in the 0.6 s before a boundary of the aligned`);
  console.log(`   windows and 2N in the 0.6 s after, on Poisson background at 0.5 N per W`);
  console.log(`   (${num(seam.length)} requests). Unsharded: decideRateLimit over one row; ${SHARDS} shards:`);
  console.log(`   the component's flow on the in-memory store.`);
  const rows: string[][] = [];
  const exact = score(seam, exactLog(N, W), N, W);
  rows.push(["exact sliding log (reference)", "", num(exact.admitted), num(exact.worst), ofN(exact.worst), num(maxInAligned(exact.taken, W, t0)), "N"]);
  for (const shards of [1, SHARDS]) {
    const c = configs(t0, shards);
    const kinds: [string, RateLimitConfig, string][] = [
      ["fixed window", c.fixed, "2N"],
      ["token bucket", c.bucket, "2N"],
      ["sliding window, approximate", c.sliding, "< 2N"],
      ["sliding window, exact", c.exact, "N"],
    ];
    for (const [label, config, bound] of kinds) {
      const s = score(seam, deciderOf(config, opts, `seam/${label}/${shards}`), N, W);
      rows.push([label, String(shards), num(s.admitted), num(s.worst), ofN(s.worst), num(maxInAligned(s.taken, W, t0)), bound]);
    }
  }
  console.log();
  console.log(
    table(
      [
        { title: "kind" },
        { title: "shards", right: true },
        { title: "admitted", right: true },
        { title: "worst W", right: true },
        { title: "", right: true },
        { title: "aligned", right: true },
        { title: "bound", right: true },
      ],
      rows,
    ),
  );
  console.log(`   worst W: most admitted in any window of length W (sliding, not aligned);`);
  console.log(`   aligned: most admitted in one aligned window; bound: the worst W can reach.`);
}

function errorRow(label: string, exact: Score, s: Score): string[] {
  const n = s.requests;
  return [
    label,
    num(n),
    num(exact.admitted),
    num(s.admitted),
    withPct(s.wronglyAdmitted, n),
    withPct(s.wronglyRefused, n),
    `${num(s.worst)}`,
  ];
}

const ERROR_COLUMNS = [
  { title: "shape" },
  { title: "requests", right: true },
  { title: "exact", right: true },
  { title: "ours", right: true },
  { title: "wrongly adm.", right: true },
  { title: "wrongly ref.", right: true },
  { title: "worst", right: true },
];

/** 6b. The sliding window's errors against an exact sliding log, per shape, unsharded and sharded. */
function errors(opts: SlidingOptions, t0: number, all: Shape[]): void {
  const periods = opts.quick ? 100 : 500;
  console.log(`\n   b. ERRORS against an exact sliding log (N = ${N} per W = 1 min), on the same arrivals.`);
  console.log(`   steady: Poisson at 0.8x and 2x the limit over ${periods} min; bursty: Poisson bursts (one`);
  console.log(`   per W on average) of 1 to 1.5N spread over up to W/10, on Poisson at 0.2N per W;`);
  console.log(`   burst at seam: the trace of table a; adversarial: N in the last ms of an aligned`);
  console.log(`   window, then 2N spread evenly over the next, ${SEAMS} times, every ${EVERY} min.`);
  const exacts = all.map((shape) => score(shape.requests, exactLog(N, W), N, W));
  for (const shards of [1, SHARDS]) {
    for (const which of ["sliding", "exact"] as const) {
      const config = configs(t0, shards)[which];
      const rows = all.map((shape, i) =>
        errorRow(shape.label, exacts[i]!, score(shape.requests, deciderOf(config, opts, `errors/${which}/${shape.label}/${shards}`), N, W)),
      );
      const kind = which === "exact" ? "exact" : "approximate";
      console.log(`\n   sliding window, ${kind}, ${shards === 1 ? "unsharded (decideRateLimit over one row)" : `${shards} shards (the component's flow, in-memory store)`}`);
      console.log(table(ERROR_COLUMNS, rows));
    }
  }
  console.log(`   exact: admitted by the reference sliding log; ours: admitted by the sliding window.`);
  console.log(`   The exact window, unsharded, decides as the reference does up to 32 takes a window, and`);
  console.log(`   past that merges its log (table e); sharded, each shard keeps its share exactly, so`);
  console.log(`   it refuses some the whole log would admit, never more.`);
  console.log(`   wrongly adm.: ours admitted, though its own admissions in (t - W, t] then`);
  console.log(`   exceed N (the exact log, on ours' admitted history, would refuse); wrongly ref.:`);
  console.log(`   ours refused, though that log would admit. worst: most ours admitted in any`);
  console.log(`   window of length W, against N = ${N}. Percentages are of requests. Under overload`);
  console.log(`   or a burst most requests are refused, and each refused while ours' window holds`);
  console.log(`   less than N counts, so compare exact and ours for the tokens it costs.`);
}

/** The roundings of the previous window's weighted count compared in 6c. */
const VARIANTS: { label: string; weigh: Weigh }[] = [
  { label: "exact (library)", weigh: (w) => w },
  { label: "rounded up", weigh: (w) => Math.ceil(w) },
  { label: "to nearest", weigh: (w) => Math.round(w) },
  { label: "rounded down", weigh: (w) => Math.floor(w) },
  { label: "unweighted", weigh: (_, prev) => prev },
];

/** 6c. The side table: the weighted previous count rounded other ways. */
function roundings(t0: number, all: Shape[]): void {
  console.log(`\n   c. ROUNDING of the previous window's weighted count P x (1 - f), unsharded, whole`);
  console.log(`   counts: the library's row with the decision wrapped (the library is unchanged).`);
  const config = configs(t0, 1).sliding;
  const results = VARIANTS.map((v) =>
    all.map((shape) => score(shape.requests, v.label === "exact (library)" ? rowDecider(config) : weightedDecider(config, v.weigh), N, W)),
  );
  const columns = [{ title: "variant" }, ...all.map((s) => ({ title: s.label, right: true }))];
  const show = (f: (s: Score) => string) => VARIANTS.map((v, i) => [v.label, ...results[i]!.map(f)]);
  console.log(`\n   wrongly admitted / wrongly refused`);
  console.log(table(columns, show((s) => `${num(s.wronglyAdmitted)} / ${num(s.wronglyRefused)}`)));
  console.log(`\n   admitted, and the worst window of W`);
  console.log(table(columns, show((s) => `${num(s.admitted)}, ${num(s.worst)}`)));
  console.log(`   rounded up: ceil(P x (1 - f)); with whole counts, rate - taken - x >= count`);
  console.log(`   holds exactly when it holds for ceil(x), so it decides as exact does. to nearest,`);
  console.log(`   rounded down (as @upstash/ratelimit floors it): admit up to one token more.`);
  console.log(`   unweighted: the previous window counted in full (taken + P <= N - count): never`);
  console.log(`   over N in any window, at the cost of the refusals shown.`);
}

/** The bounds on a row's log compared in 6e: entries, and bytes (Infinity: none). */
const LOG_BOUNDS: { entries: number; bytes: number }[] = [
  { entries: 8, bytes: Infinity },
  { entries: 16, bytes: Infinity },
  { entries: 24, bytes: Infinity },
  { entries: 32, bytes: Infinity },
  { entries: MAX_LOG_ENTRIES, bytes: MAX_LOG_BYTES },
  { entries: 48, bytes: Infinity },
  { entries: 64, bytes: Infinity },
  { entries: Infinity, bytes: Infinity },
];

/**
 * 6e. The exact window's frontier: the bytes of a row's log against its admissions, for logs kept
 * to fewer or more entries (merged into later ones past the bound), unsharded.
 */
function frontier(all: Shape[]): void {
  console.log(`\n   e. THE EXACT WINDOW'S LOG: bytes against admissions (N = ${N} per W = 1 min, unsharded).`);
  console.log(`   Past its bound, a log merges the entry cheapest to count later (tokens x ms) into the next.`);
  const exacts = all.map((shape) => score(shape.requests, exactLog(N, W), N, W).admitted);
  const rows = LOG_BOUNDS.map(({ entries, bytes }) => {
    const sizes: number[] = [];
    const shares = all.map((shape, i) => {
      const s = score(shape.requests, boundedLogDecider(N, W, entries, bytes, sizes), N, W);
      if (s.wronglyAdmitted > 0) throw new Error(`a log bounded to ${entries} entries admitted over the rate`);
      return s.admitted / exacts[i]!;
    });
    const mean = sizes.reduce((a, b) => a + b, 0) / sizes.length;
    const label = `${entries === Infinity ? "every take" : `${entries} entries`}${Number.isFinite(bytes) ? `, ${bytes} bytes (library)` : ""}`;
    return [label, ...shares.map((x) => pct(x, 2)), pct(Math.min(...shares), 2), mean.toFixed(0), String(Math.max(...sizes))];
  });
  console.log(
    table(
      [{ title: "log kept to" }, ...all.map((s) => ({ title: s.label, right: true })), { title: "least", right: true }, { title: "bytes", right: true }, { title: "most", right: true }],
      rows,
    ),
  );
  console.log(`   Each shape's admissions against the reference sliding log's; bytes: the log's mean size as`);
  console.log(`   stored after each admission (its row adds about 134 bytes; a token bucket's row is about`);
  console.log(`   128), and the most. At higher rates an entry takes more bytes: see the bytes section.`);
}

/**
 * The µs per call of the component's flow on the in-memory store, for each of `configs` (in their
 * order): the decision without convex-test, `calls` calls each `every` ms apart, in `rounds`
 * rounds, the order rotating, after 1 000 unmeasured calls each (the JIT warms up). Each round is
 * timed in the process's CPU time (user and system), not the wall clock, and each kind's fastest
 * round counts: on a machine shared with other work, a round the scheduler paused, or slowed,
 * says nothing of the decision.
 */
function flowTime(configs: readonly RateLimitConfig[], t0: number, { calls, rounds, every }: { calls: number; rounds: number; every: number }): number[] {
  const random = seededRandom(1);
  const run = (config: RateLimitConfig, n: number) => {
    const store = new MemoryStore();
    let now = t0;
    const started = process.cpuUsage();
    for (let i = 0; i < n; i++) store.limit({ name: "speed", key: "k", config }, (now += every), random);
    const used = process.cpuUsage(started);
    return (used.user + used.system) / 1000;
  };
  for (const config of configs) run(config, 1000);
  const best = configs.map(() => Infinity);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < configs.length; k++) {
      const i = (k + round) % configs.length;
      best[i] = Math.min(best[i]!, run(configs[i]!, calls / rounds));
    }
  }
  return best.map((ms) => (1000 * ms) / (calls / rounds));
}

/** 6d. Time per `limit` call, sliding window against token bucket (and fixed window), unsharded. */
async function speed(opts: SlidingOptions, clock: Clock, t0: number): Promise<void> {
  const calls = opts.quick ? 400 : 2000;
  const flowCalls = opts.quick ? 10_000 : 150_000;
  const flowRounds = opts.quick ? 10 : 30;
  const rounds = 5;
  console.log(`\n   d. TIME PER limit CALL (convex-test, wall clock, the machinery of section 4): 60/min,`);
  console.log(`   unsharded, at half load; ${rounds} rounds of ${calls / rounds} calls each, order rotating.`);
  console.log(`   flow: the same calls through the component's flow on the in-memory store (no`);
  console.log(`   convex-test), ${num(flowCalls)} per kind in ${flowRounds} rounds, the fastest round's in CPU`);
  console.log(`   time: the decision's own cost.`);
  const kinds: RateLimitConfig[] = [
    { kind: "token bucket", rate: 60, period: MINUTE },
    { kind: "sliding window", exact: false, rate: 60, period: MINUTE },
    { kind: "sliding window", rate: 60, period: MINUTE },
    { kind: "fixed window", rate: 60, period: MINUTE },
  ];
  const labelOf = (c: RateLimitConfig) => (c.kind === "sliding window" ? `sliding window, ${c.exact === false ? "approximate" : "exact"}` : c.kind);
  const ms = await timePerCall(
    clock,
    t0,
    kinds.map((config) => ({
      label: labelOf(config),
      call: (ctx) => ctx.runMutation(components.rateLimiter.lib.rateLimit, { name: "speed", key: "k", config }),
    })),
    { calls, rounds, every: 2 * SECOND },
  );
  const flow = flowTime(kinds, t0, { calls: flowCalls, rounds: flowRounds, every: 2 * SECOND });
  console.log(
    table(
      [
        { title: "kind" },
        { title: "ms per call", right: true },
        { title: "/ bucket", right: true },
        { title: "flow µs/call", right: true },
        { title: "/ bucket", right: true },
      ],
      kinds.map((c, i) => [labelOf(c), ms[i]!.toFixed(3), (ms[i]! / ms[0]!).toFixed(2), flow[i]!.toFixed(1), (flow[i]! / flow[0]!).toFixed(2)]),
    ),
  );
  console.log(`   The component's functions take the config as one object, so every kind's arguments`);
  console.log(`   are validated alike: the differences are the decisions' own.`);
}

/** Runs section 6 and prints its tables; `t0` is where the simulated clock starts (ms). */
export async function slidingSection(opts: SlidingOptions, clock: Clock, t0: number): Promise<void> {
  const started = performance.now();
  console.log(`\n6. SLIDING WINDOW: ACCURACY against an exact sliding log, and time per call`);
  console.log(`   seed ${opts.seed} (every trace and shard pick is a seeded mulberry32 stream)`);
  boundLines();
  const all = shapes(opts, t0);
  worstWindows(opts, t0, all.find((s) => s.label === "burst at seam")!.requests);
  errors(opts, t0, all);
  roundings(t0, all);
  frontier(all);
  process.stderr.write(`  ... sliding: simulated in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  await speed(opts, clock, t0);
}
