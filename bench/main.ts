// The sharding benchmark (`npm run bench`). It measures and prints; it asserts nothing.
//   1. utilization under saturating demand, through the real component on convex-test;
//   2. refusals of a tight sharded limit vs unsharded and vs simpler shard policies, and the
//      comfort threshold's trade-off between refusals and reads (pure planner simulation);
//   3. shard rows read and written per call at 50 % load (convex-test transaction metrics),
//      next to @convex-dev/rate-limiter 0.4.0 registered in the same convex-test instance;
//   4. the time per limit call, ours beside upstream's, unsharded;
//   5. rows kept over a simulated month with and without the daily clean-up (bench/cleanup.ts);
//   6. the sliding window's accuracy against an exact sliding log, and its time per call
//      (bench/sliding.ts);
//   7. documents read and written per call with and without `metrics: true`, and the fold's
//      cost (bench/metrics.ts);
//   then bytes read and written per steady call, ours beside upstream's (bench/bytes.ts).
// `--only` names the sections (SECTIONS); `--help` lists them.
// Run through tools/run.mjs (vite provides `import.meta.glob`); time is simulated, randomness seeded.
import upstream from "@convex-dev/rate-limiter/test";
import { MINUTE, SECOND } from "../src/shared/kinds/algebra.js";
import { resolvePhase } from "../src/shared/shards/layout.js";
import { COMFORT_FRACTION } from "../src/shared/shards/plan.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { modules } from "../src/test.js";
import { limitOf, maxInWindow, worstExcess } from "../tools/bounds.js";
import { installClock, preload } from "../tools/clock.js";
import { seededRandom, seedMathRandom, streamSeed } from "../tools/random.js";
import { UsageError } from "../tools/usage.js";
import { components, freshApp, timeRounds, type RateLimitCall, type Round } from "./app.js";
import { median, medianInterval, quantile } from "./stats.js";
import { cleanupSection, rowCounter } from "./cleanup.js";
import { poissonArrivals, simulate, type Policy, type SimResult } from "./sim.js";
import { metricsSection } from "./metrics.js";
import { bytesSection, exactCostSection } from "./bytes.js";
import { slidingSection } from "./sliding.js";
import { num, pct, table } from "./table.js";

/** The simulated clock starts here: 2025-01-01T00:00:00Z. */
const T0 = Date.UTC(2025, 0, 1);
const KINDS = ["token bucket", "fixed window"] as const;
type Kind = (typeof KINDS)[number];

type Options = {
  seed: number;
  quick: boolean;
  /** Simulated minutes of saturating demand in section 1. */
  minutes: number;
  /** Simulated minutes of Poisson arrivals per scenario in section 2. */
  simMinutes: number;
  /** Calls per limit in section 3: unmeasured warm-up (creates the shard rows), then measured. */
  warmup: number;
  measured: number;
  /** Users of the simulated month in section 5. */
  users: number;
  sections: Set<string>;
};

/**
 * The sections, in the order they run: the name `--only` takes, and what the section measures
 * under its printed heading (the number it is printed with, where it has one).
 */
export const SECTIONS = [
  { name: "util", about: "1. utilization under saturating demand, 10 shards (convex-test)" },
  { name: "refusals", about: "2. refusals of a tight sharded limit, and the comfort threshold (pure planner)" },
  { name: "reads", about: "3. shard rows read and written per call at 50 % load, ours and upstream's" },
  { name: "speed", about: "4. time per limit call, ours and upstream's, unsharded" },
  { name: "cleanup", about: "5. rows kept over a simulated month, with and without the daily clean-up" },
  { name: "sliding", about: "6. the sliding window's accuracy against an exact log, and its time per call" },
  { name: "metrics", about: "7. documents read and written per call with and without metrics: true" },
  { name: "bytes", about: "bytes read and written per steady call, and the exact sliding window's cost" },
] as const;
type Section = (typeof SECTIONS)[number]["name"];
const NAMES: readonly string[] = SECTIONS.map((s) => s.name);

/** What `npm run bench -- --help` prints. */
export const USAGE = `usage: npm run bench -- [--quick | --full] [--seed N] [--minutes N] [--only LIST]
  (default)    every section, about 3 minutes on one core
  --full       20 simulated minutes in util (240 000 calls: several minutes)
  --quick      scaled down, about 1 minute: 2 simulated minutes in util, 300 per scenario in
               refusals, 400 calls per limit in reads, 1 000 in speed, 1 000 users (100 on
               convex-test) in cleanup, 100 simulated minutes per traffic shape in sliding,
               100 calls per limit in metrics, 20 per case in bytes
  --seed N     seed of every random stream (default 1)
  --minutes N  simulated minutes of saturating demand in util (default 5: 60 000 calls)
  --only LIST  run only these sections, comma-separated (e.g. --only reads,bytes):
${SECTIONS.map((s) => `    ${s.name.padEnd(10)} ${s.about}`).join("\n")}

How many shards, and which mode, for your traffic: this benchmark runs one call at a time and
can't show conflicts. Run npm run simulate -- --qps <your peak QPS> --only grid (a model of
concurrent mutations), and read the table in docs/hot-limits.md, "Choosing shards and modes".`;

function parseOptions(argv: readonly string[]): Options {
  const opts: Options = {
    seed: 1,
    quick: false,
    minutes: 5,
    simMinutes: 2000,
    warmup: 200,
    measured: 1000,
    users: 10_000,
    sections: new Set(NAMES),
  };
  let minutes: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value\n${USAGE}`);
      return v;
    };
    const integer = (v: string) => {
      const n = Number(v);
      if (!Number.isSafeInteger(n) || n < 0)
        throw new UsageError(`${arg} ${v}: expected a whole number\n${USAGE}`);
      return n;
    };
    switch (arg) {
      case "--quick":
        opts.quick = true;
        break;
      case "--full":
        minutes ??= 20;
        break;
      case "--seed":
        opts.seed = integer(value());
        break;
      case "--minutes":
        minutes = integer(value());
        break;
      case "--only": {
        const list = value().split(",");
        const unknown = list.filter((s) => !NAMES.includes(s));
        if (unknown.length > 0) throw new UsageError(`--only: unknown section ${unknown.join(",")}\n${USAGE}`);
        opts.sections = new Set(list);
        break;
      }
      case "--help":
      case "-h":
        console.log(USAGE);
        opts.sections = new Set();
        return opts;
      default:
        throw new UsageError(`unknown argument ${String(arg)}\n${USAGE}`);
    }
  }
  if (opts.quick) Object.assign(opts, { minutes: 2, simMinutes: 300, warmup: 100, measured: 300, users: 1000 });
  if (minutes !== undefined) opts.minutes = Math.max(1, minutes);
  return opts;
}

type Clock = ReturnType<typeof installClock>;
const secondsSince = (start: number) => `${((performance.now() - start) / 1000).toFixed(0)} s`;
const progress = (line: string) => process.stderr.write(`  ... ${line}\n`);

// ---------------------------------------------------------------------------------------------
// 1. Utilization under saturating demand

async function utilization(opts: Options, clock: Clock): Promise<void> {
  const rate = 1000;
  const capacity = 1000;
  const shards = 10;
  const every = 10;
  const calls = (opts.minutes * MINUTE) / every;
  console.log(`\n1. UTILIZATION under saturating demand (convex-test, lib.rateLimit)`);
  console.log(`   rate ${rate}/min, capacity ${capacity}, ${shards} shards; a request of count 1 every`);
  console.log(
    `   ${every} ms for ${opts.minutes} simulated min (${num(calls)} calls per kind, 6x the rate).`,
  );
  console.log(`   Fixed window: start = t0 + 30 s, so ${opts.minutes} refills fall inside the run.`);
  const rows: string[][] = [];
  for (const kind of KINDS) {
    const started = performance.now();
    seedMathRandom(opts.seed, `util/${kind}`);
    clock.setSystemTime(T0);
    const t = freshApp();
    const config: RateLimitConfig =
      kind === "token bucket"
        ? { kind, rate, period: MINUTE, capacity, shards }
        : { kind, rate, period: MINUTE, capacity, shards, start: T0 + 30 * SECOND };
    const admitted: number[] = [];
    for (let i = 0; i < calls; i++) {
      const now = T0 + i * every;
      clock.setSystemTime(now);
      const r = await t.mutation(components.rateLimiter.lib.rateLimit, { name: "util", config });
      if (r.ok) admitted.push(now);
      if ((i + 1) % 10_000 === 0 && i + 1 < calls) progress(`${kind}: ${num(i + 1)} of ${num(calls)} calls, ${secondsSince(started)}`);
    }
    progress(`${kind}: ${num(calls)} calls in ${secondsSince(started)}`);
    const ideal = capacity + rate * opts.minutes;
    const bound = capacity + rate; // any window of one period
    const most = maxInWindow(admitted, MINUTE);
    const limit = limitOf(config, resolvePhase(config, "util", undefined));
    const excess = worstExcess(admitted.map((at) => ({ at, count: 1 })), limit);
    rows.push([
      kind,
      num(admitted.length),
      num(ideal),
      (admitted.length / ideal).toFixed(4),
      num(most),
      num(bound),
      num(Math.max(0, most - bound)),
      excess.toFixed(2),
    ]);
  }
  console.log();
  console.log(
    table(
      [
        { title: "kind" },
        { title: "admitted", right: true },
        { title: "ideal", right: true },
        { title: "util", right: true },
        { title: "max/1min", right: true },
        { title: "bound", right: true },
        { title: "over", right: true },
        { title: "worst int.", right: true },
      ],
      rows,
    ),
  );
  console.log(`   ideal = capacity + rate x minutes; util = admitted / ideal (target >= 0.99).`);
  console.log(`   max/1min: most admitted in any window [t, t+1 min); bound = capacity + rate;`);
  console.log(`   over = max/1min - bound, if positive (target 0). worst int.: the largest`);
  console.log(`   (admitted - allowed) over all intervals between two admissions, any length;`);
  console.log(`   allowed = capacity + rate x periods elapsed (token bucket) or x refills`);
  console.log(`   (fixed window). <= 0: no interval of any length overshoots.`);
}

// ---------------------------------------------------------------------------------------------
// 2. Refusals and the comfort threshold (pure planner simulation)

type Strategy = { label: string; policy: Policy };
const STRATEGIES: Strategy[] = [
  { label: "unsharded (one row)", policy: { kind: "unsharded" } },
  { label: "one random shard", policy: { kind: "one random shard" } },
  { label: "2 choices, no combining", policy: { kind: "two choices, no combining" } },
  { label: "2 choices + combining (upstream)", policy: { kind: "comfort", fraction: 1 } },
  { label: "ours, c=0", policy: { kind: "component", fraction: 0 } },
  { label: "ours, c=0.25", policy: { kind: "component", fraction: 0.25 } },
  { label: "ours, c=0.5", policy: { kind: "component", fraction: 0.5 } },
  { label: "ours, c=1", policy: { kind: "component", fraction: 1 } },
  { label: "ours (component) *", policy: { kind: "component" } },
  { label: "what-if: c=0.5, read 2 more", policy: { kind: "read on", fraction: 0.5, probes: 2 } },
  { label: "what-if: c=0.25, read 2 more", policy: { kind: "read on", fraction: 0.25, probes: 2 } },
];
const LOADS = [0.5, 0.9, 1] as const;

function refusals(opts: Options): void {
  const rate = 60;
  const shards = 10;
  console.log(`\n2. REFUSALS and the COMFORT THRESHOLD c (pure planner, src/shared/shards/plan.ts)`);
  console.log(
    `   rate ${rate}/min, capacity ${rate}, ${shards} shards (${rate / shards} tokens per shard); Poisson arrivals of`,
  );
  console.log(
    `   count 1 at 50/90/100% of the rate, ${num(opts.simMinutes)} simulated min per scenario; every`,
  );
  console.log(`   strategy sees the same arrivals and the same random shard picks.`);
  for (const kind of KINDS) {
    const started = performance.now();
    const config: RateLimitConfig = { kind, rate, period: MINUTE, capacity: rate, shards };
    const results = new Map<string, Map<number, SimResult>>();
    for (const load of LOADS) {
      const arrivals = poissonArrivals(
        T0,
        opts.simMinutes * MINUTE,
        (load * rate) / MINUTE,
        seededRandom(streamSeed(opts.seed, `arrivals/${kind}/${load}`)),
      );
      const run = (policy: Policy) =>
        simulate(config, policy, arrivals, 1, seededRandom(streamSeed(opts.seed, `picks/${kind}/${load}`)));
      for (const s of STRATEGIES) {
        const byLoad = results.get(s.label) ?? new Map<number, SimResult>();
        byLoad.set(load, run(s.policy));
        results.set(s.label, byLoad);
      }
    }
    progress(`${kind}: simulated in ${secondsSince(started)}`);
    const calls = (label: string, load: number) => results.get(label)?.get(load);
    const rows = STRATEGIES.map((s) => [
      s.label,
      ...LOADS.flatMap((load) => {
        const r = calls(s.label, load);
        return r === undefined ? ["", ""] : [pct(r.refused / r.calls, 2), (r.reads / r.calls).toFixed(2)];
      }),
    ]);
    console.log(`\n   ${kind}`);
    console.log(
      table(
        [
          { title: "strategy" },
          ...LOADS.flatMap((load) => [
            { title: `ref${(load * 100).toFixed(0)}%`, right: true },
            { title: "reads", right: true },
          ]),
        ],
        rows,
      ),
    );
  }
  console.log(`   refNN%: share refused at NN% load; reads: shard rows read per call.`);
  console.log(`   c: a second shard is read only when the first would hold < c x its capacity`);
  console.log(`   after serving; then take from the fuller or both (ours: not both on shards of 4 requests'`);
  console.log(`   worth or more, see nearEmptyRule), or refuse. "ours" rows run the`);
  console.log(`   component's own flow with c overridden; * = COMFORT_FRACTION in src/shared/shards/plan.ts:`);
  console.log(`   token bucket ${COMFORT_FRACTION["token bucket"]}, fixed window ${COMFORT_FRACTION["fixed window"]}. Reading a third shard`);
  console.log(`   when the pair refuses would refuse less here but fails more requests under overload`);
  console.log(`   in the contention model (npm run simulate), so the component doesn't.`);
  console.log(`   what-if rows read up to 2 more shards when the pair refuses: they match or beat`);
  console.log(`   upstream's refusals at 100% load, with reads at 50% load still near 1 (the frontier),`);
  console.log(`   but cost more failed requests under overload in npm run simulate.`);
}

// ---------------------------------------------------------------------------------------------
// 4. Time per limit call, ours and upstream, unsharded

/**
 * Times `rateLimit` calls through an app mutation on convex-test, ours and upstream's alternately
 * in rounds (so both see the same machine load), unsharded, at half the rate (see timeRounds):
 * the median round's ms per call, by CPU time and wall clock, and the median of the rounds' ratios
 * with its 95 % confidence interval. Rounds vary by several percent (the collector, the machine),
 * so it takes 60 of them to tell a difference of a percent or two: with 15 rounds of 400 calls,
 * the median ratio of two copies of the same component ranged from 0.97 to 1.02 over five runs.
 */
async function speed(opts: Options, clock: Clock): Promise<void> {
  const calls = opts.quick ? 1000 : 18_000;
  const rounds = opts.quick ? 5 : 60;
  console.log(`\n4. TIME PER limit CALL, unsharded, ours vs upstream (convex-test)`);
  console.log(`   ${rounds} rounds of ${calls / rounds} calls each, alternating; token bucket 60/min at half load.`);
  const config: RateLimitConfig = { kind: "token bucket", rate: 60, period: MINUTE };
  const [ours, theirs] = await timeRounds(
    clock,
    T0,
    [
      { label: "ours", call: (ctx) => ctx.runMutation(components.rateLimiter.lib.rateLimit, { name: "speed", key: "k", config }) },
      { label: "upstream", call: (ctx) => ctx.runMutation(components.upstream.lib.rateLimit, { name: "speed", key: "k", config }) },
    ],
    { calls, rounds, every: 2 * SECOND }, // half of 60/min
  );
  const of = (r: Round[], f: (x: Round) => number) => median(r.map(f)).toFixed(3);
  const ratios = (f: (x: Round) => number) => ours!.map((o, i) => f(o) / f(theirs![i]!));
  const ratio = (f: (x: Round) => number) => median(ratios(f)).toFixed(2);
  const quartiles = (f: (x: Round) => number) => `${quantile(ratios(f), 0.25).toFixed(2)}–${quantile(ratios(f), 0.75).toFixed(2)}`;
  const interval = (f: (x: Round) => number) => medianInterval(ratios(f)).map((x) => x.toFixed(3)).join("–");
  console.log(
    table(
      [{ title: "implementation" }, { title: "CPU ms per call", right: true }, { title: "wall ms per call", right: true }],
      [
        ["ours", of(ours!, (x) => x.cpu), of(ours!, (x) => x.wall)],
        ["upstream (@convex-dev/rate-limiter 0.4.0)", of(theirs!, (x) => x.cpu), of(theirs!, (x) => x.wall)],
        ["ratio ours / upstream (median of rounds)", ratio((x) => x.cpu), ratio((x) => x.wall)],
        [
          // Fewer than 6 rounds (--quick) can't reach 95 %: the interval is then their whole range.
          rounds >= 6 ? "  95 % confidence interval of that median" : "  range of the rounds' ratios (too few for 95 %)",
          interval((x) => x.cpu),
          interval((x) => x.wall),
        ],
        ["  middle half of the rounds' ratios", quartiles((x) => x.cpu), quartiles((x) => x.wall)],
      ],
    ),
  );
  console.log(`   target: ratio <= 1.00 (issue 22). CPU time is this process's, less disturbed by other`);
  console.log(`   work on the machine than the wall clock; each round runs both on fresh apps.`);
}

// ---------------------------------------------------------------------------------------------
// 3. Shard rows read and written per call at 50 % load

async function reads(opts: Options, clock: Clock): Promise<void> {
  console.log(`\n3. SHARD ROWS READ AND WRITTEN per call at 50% load (convex-test metrics)`);
  console.log(`   Poisson arrivals of count 1 at half the rate; ${opts.warmup} calls to warm up (rows get`);
  console.log(`   created), then ${opts.measured} measured, each in its own transaction with`);
  console.log(`   ctx.meta.getTransactionMetrics() read before and after the rateLimit call.`);
  const limits = [
    { label: "ours, unsharded", impl: "ours", rate: 60, shards: 1 },
    { label: "ours, 10 shards", impl: "ours", rate: 60, shards: 10 },
    { label: "upstream, 10 shards", impl: "upstream", rate: 60, shards: 10 },
    { label: "ours, 10 shards", impl: "ours", rate: 1000, shards: 10 },
    { label: "upstream, 10 shards", impl: "upstream", rate: 1000, shards: 10 },
  ] as const;
  for (const kind of KINDS) {
    const started = performance.now();
    const rows: string[][] = [];
    for (const limit of limits) {
      const config: RateLimitConfig & { kind: Kind } = {
        kind,
        rate: limit.rate,
        period: MINUTE,
        capacity: limit.rate,
        shards: limit.shards,
      };
      const label = `${limit.rate}/min ${limit.label}`;
      seedMathRandom(opts.seed, `reads/${kind}/${label}`);
      clock.setSystemTime(T0);
      const t = freshApp();
      const countRows = () =>
        rowCounter(t)(
          limit.impl === "ours" ? "rateLimiter" : "upstream",
          async (ctx) => (await ctx.db.query("rateLimits").collect()).length,
        );
      const call: RateLimitCall =
        limit.impl === "ours"
          ? (ctx) => ctx.runMutation(components.rateLimiter.lib.rateLimit, { name: "reads", config })
          : (ctx) => ctx.runMutation(components.upstream.lib.rateLimit, { name: "reads", config });
      const random = seededRandom(streamSeed(opts.seed, `reads/arrivals/${kind}/${label}`));
      const perMs = (0.5 * limit.rate) / MINUTE;
      let now = T0;
      const totals = { ok: 0, read: 0, written: 0, queries: 0 };
      let rowsBefore = 0;
      for (let i = 0; i < opts.warmup + opts.measured; i++) {
        if (i === opts.warmup) rowsBefore = await countRows();
        now += -Math.log(1 - random()) / perMs;
        clock.setSystemTime(Math.floor(now));
        const m = await t.run(async (ctx) => {
          const before = await ctx.meta.getTransactionMetrics();
          const r = await call(ctx);
          const after = await ctx.meta.getTransactionMetrics();
          return {
            ok: r.ok,
            read: after.documentsRead.used - before.documentsRead.used,
            written: after.documentsWritten.used - before.documentsWritten.used,
            queries: after.databaseQueries.used - before.databaseQueries.used,
          };
        });
        if (i < opts.warmup) continue;
        totals.ok += m.ok ? 1 : 0;
        totals.read += m.read;
        totals.written += m.written;
        totals.queries += m.queries;
      }
      const inserts = (await countRows()) - rowsBefore;
      const patches = totals.written - inserts;
      const n = opts.measured;
      rows.push([
        label,
        pct(totals.ok / n, 0),
        (totals.read / n).toFixed(2),
        (totals.written / n).toFixed(2),
        num(inserts),
        ((totals.read - patches) / n).toFixed(2),
        (totals.queries / n).toFixed(2),
      ]);
    }
    progress(
      `${kind}: ${num(limits.length * (opts.warmup + opts.measured))} calls in ${secondsSince(started)}`,
    );
    console.log(`\n   ${kind}`);
    console.log(
      table(
        [
          { title: "limit" },
          { title: "ok", right: true },
          { title: "read", right: true },
          { title: "written", right: true },
          { title: "ins.", right: true },
          { title: "shard rd", right: true },
          { title: "queries", right: true },
        ],
        rows,
      ),
    );
  }
  console.log(`   Per measured call: read/written = documents, raw (convex-test counts one`);
  console.log(`   extra read per patch); ins. = rows inserted while measuring (writes that are`);
  console.log(`   not patches); shard rd = read - patches: shard rows actually read (target:`);
  console.log(`   well below 2 for ours); queries = index ranges read.`);
  console.log(`   upstream = @convex-dev/rate-limiter 0.4.0, in the same convex-test app.`);
}

// ---------------------------------------------------------------------------------------------

/** Runs the sections asked for and prints their tables. `argv`: the arguments after the entry. */
export async function main(argv: readonly string[]): Promise<void> {
  const opts = parseOptions(argv);
  if (opts.sections.size === 0) return;
  const started = performance.now();
  console.log(`convex-rate-limiter sharding benchmark: measures, asserts nothing`);
  console.log(`command: npm run bench${argv.length > 0 ? ` -- ${argv.join(" ")}` : ""}`);
  console.log(`seed ${opts.seed} (Math.random and every random stream are seeded mulberry32)`);
  console.log(`simulated clock from ${new Date(T0).toISOString()}; COMFORT_FRACTION = ${JSON.stringify(COMFORT_FRACTION)}`);
  // Both components' modules are loaded before any stream is seeded: vite's module runner draws
  // Math.random for each module it fetches, which would shift the seeded stream of whichever
  // section first loaded them, and so make its figures depend on the sections run before it.
  await preload(modules);
  await preload(upstream.modules);
  const clock = installClock(T0);
  const sections: [Section, () => unknown][] = [
    ["util", () => utilization(opts, clock)],
    ["refusals", () => refusals(opts)],
    ["reads", () => reads(opts, clock)],
    ["speed", () => speed(opts, clock)],
    ["cleanup", () => cleanupSection({ seed: opts.seed, users: opts.users, checkUsers: opts.quick ? 100 : 300, days: 30 }, clock, T0)],
    ["sliding", () => slidingSection({ seed: opts.seed, quick: opts.quick }, clock, T0)],
    ["metrics", () => metricsSection({ seed: opts.seed, calls: opts.quick ? 100 : 400 }, clock, T0)],
    [
      "bytes",
      async () => {
        await bytesSection({ calls: opts.quick ? 20 : 100 }, clock, T0);
        await exactCostSection({ calls: opts.quick ? 20 : 100 }, clock, T0);
      },
    ],
  ];
  const chosen = sections.filter(([name]) => opts.sections.has(name));
  if (chosen.length === NAMES.length) {
    progress(`every section: about ${opts.quick ? "1 minute" : "3 minutes"} on one core; progress on stderr, tables on stdout`);
  }
  try {
    for (const [i, [name, section]] of chosen.entries()) {
      progress(`section ${i + 1} of ${chosen.length}, ${name}: starting at ${secondsSince(started)}`);
      await section();
    }
  } finally {
    clock.uninstall();
  }
  console.log(`\nwall time ${secondsSince(started)}`);
}
