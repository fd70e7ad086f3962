// The sharding benchmark (`npm run bench`): its command line and the sections it runs. It measures
// and prints; it asserts nothing.
//   1. utilization under saturating demand, through the real component on convex-test
//      (bench/utilization.ts);
//   2. refusals of a tight sharded limit vs unsharded and vs simpler shard policies, and the
//      comfort threshold's trade-off between refusals and reads (pure planner simulation,
//      bench/refusals.ts);
//   3. shard rows read and written per call at 50 % load (convex-test transaction metrics),
//      next to @convex-dev/rate-limiter 0.4.0 registered in the same convex-test instance
//      (bench/reads.ts);
//   4. the time per limit call, ours beside upstream's, unsharded (bench/speed.ts);
//   5. rows kept over a simulated month with and without the daily clean-up (bench/cleanup.ts);
//   6. the sliding window's accuracy against an exact sliding log, and its time per call
//      (bench/sliding.ts);
//   7. documents read and written per call with and without `metrics: true`, and the fold's
//      cost (bench/metrics.ts);
//   then bytes read and written per steady call, ours beside upstream's (bench/bytes.ts).
// `--only` names the sections (SECTIONS); `--help` lists them.
// Run through tools/run.mjs (vite provides `import.meta.glob`); time is simulated, randomness seeded.
import upstream from "@convex-dev/rate-limiter/test";
import { COMFORT_FRACTION } from "../src/shared/shards/plan.js";
import { modules } from "../src/test.js";
import { installClock, preload } from "../tools/clock.js";
import { UsageError } from "../tools/usage.js";
import { bytesSection, exactCostSection } from "./bytes.js";
import { cleanupSection } from "./cleanup.js";
import { metricsSection } from "./metrics.js";
import { readsSection } from "./reads.js";
import { refusalsSection } from "./refusals.js";
import { progress, secondsSince } from "./section.js";
import { slidingSection } from "./sliding.js";
import { speedSection } from "./speed.js";
import { utilizationSection } from "./utilization.js";

/** The simulated clock starts here: 2025-01-01T00:00:00Z. */
const T0 = Date.UTC(2025, 0, 1);

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
    ["util", () => utilizationSection(opts, clock, T0)],
    ["refusals", () => refusalsSection(opts, T0)],
    ["reads", () => readsSection(opts, clock, T0)],
    ["speed", () => speedSection(opts, clock, T0)],
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
