// `npm run simulate`: a discrete-event model of a Convex deployment under load on ONE global limit
// key (bench/simulate-model.ts), driven by our real decision code and by @convex-dev/rate-limiter
// 0.4.0's (bench/simulate-upstream.ts) under the same arrivals and seed. It prints, and writes as
// JSON and as an SVG chart, for each QPS × shard count × mode: conflicts per request, requests that
// fail after retries, refusals, over-admission and reads per attempt; the smallest shard count
// that keeps failed requests under 0.1 %; asynchronous mode's worst over-admission beside its
// bound; what `metrics: true` changes (each request also inserts an event, a fold reads and
// deletes them); and issue 21's overload targets beside an independent model of the same cells
// (simulate-check.ts). A transaction that writes nothing is never checked for conflicts, as Convex
// commits it (`--checked-refusals` for the pessimistic reading). It measures and prints; it
// asserts nothing. Run through tools/run.mjs; seeded.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { SECOND } from "../src/shared/kinds/algebra.js";
import { ASYNC_MARGIN } from "../src/shared/flow/flow.js";
import { validateConfig } from "../src/shared/validation/validate.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { APPLY_BATCH } from "../src/component/applier.js";
import { FOLD_BATCH, FOLD_SETTLE_MS } from "../src/component/metrics.js";
import { MAX_STALENESS_MS } from "../src/shared/shards/overload.js";
import { UsageError } from "../tools/usage.js";
import { limitOf, worstExcess } from "../tools/bounds.js";
import { seededRandom, streamSeed } from "../tools/random.js";
import {
  asyncBound,
  batchSnapshot,
  newApplierState,
  oursApplier,
  oursAsynchronous,
  oursFold,
  oursTransactional,
  requestArgs,
  runModel,
  Store,
  type Bound,
  type Driver,
  type ModelParams,
  type RunStats,
  withMetricEvent,
} from "./simulate-model.js";
import { checkCell, type CheckStats } from "./simulate-check.js";
import { chart } from "./simulate-chart.js";
import { upstreamAsynchronous, upstreamConfig, upstreamTransactional, upstreamWorker } from "./simulate-upstream.js";
import { num, pct, table } from "./table.js";
import { PLAN_SERVICE_MS, planFor, printPlan, recommendation } from "./simulate-plan.js";

/** upstream's `worker.BATCH_SIZE`: the most pending updates its worker applies per batch. */
const UPSTREAM_BATCH = 1024;
const NAME = "global";
const IMPLS = ["ours", "upstream"] as const;
const MODES = ["transactional", "asynchronous"] as const;
type Impl = (typeof IMPLS)[number];
type Mode = (typeof MODES)[number];
/** Failed requests under this share count as "keeps up" in the smallest-shards table. */
const FAIL_TARGET = 0.001;

/** The issue's scenario: a token bucket of 200 per second (capacity 200) over 10 shards, at 90 % load. */
const HEADLINE = { rate: 200, load: 0.9, shards: 10 };

/** The sections `--only` names, in the order they print, each with what it prints. */
const SECTION_ABOUT = {
  grid: "every QPS × shard count × mode at --load; the smallest shard count that keeps up",
  headline: `the issue's scenario: ${HEADLINE.rate}/s over ${HEADLINE.shards} shards at ${HEADLINE.load * 100} % load`,
  stress: "the grid over the limit (--stress-load); asynchronous mode's bound",
  metrics: "what metrics: true changes on a hot limit",
  check: "the overload targets in an independent model (bench/simulate-check.ts)",
} as const;
type Section = keyof typeof SECTION_ABOUT;
const SECTIONS = Object.keys(SECTION_ABOUT) as Section[];

type Options = {
  seed: number;
  seconds: number;
  qps: number[];
  shards: number[];
  load: number;
  /** A fixed rate (tokens per second) instead of qps / load. */
  rate: number | null;
  serviceMs: number;
  maxRetries: number;
  backoffMs: number;
  stalenessMs: number;
  applyEveryMs: number;
  /** The stress section's offered load, as a fraction of the limit's rate. */
  stressLoad: number;
  readOnlyConflicts: boolean;
  /** The sections to run (default all). */
  only: Set<Section>;
  /** The implementations to run (default both). */
  impls: Impl[];
  out: string;
  write: boolean;
  /** `--plan`: the sizing rule's table and its cells checked, instead of the sections; `qpsGiven`: --qps was. */
  plan: boolean;
  qpsGiven: boolean;
  /**
   * `--decide-ms`: the work's own time (ms), run after a short limited transaction ("decide short,
   * work later"), whose time is then `serviceMs`; null when the work runs inside it.
   */
  workMs: number | null;
};

/** What `npm run simulate -- --help` prints. */
export const USAGE = `usage: npm run simulate -- [--quick] [options]

How many shards, and which mode, for your traffic: every run first prints the sizing rule's
recommendation for its --qps and --service (your mutation's time from the limit's read to its
commit, 25 ms by default), and its grid measures it:
  npm run simulate -- --qps <your peak QPS> --service <ms> --only grid
in its table "Smallest shard count with failed requests under ${pct(FAIL_TARGET, 1)}".
  npm run simulate -- --plan
prints the rule's table over peak QPS × mutation time, as docs/hot-limits.md has it in
"The sizing rule", and runs its cells at 90, 150 and 300 % load. docs/hot-limits.md has the
smallest-shards table for 10 to 1,000 QPS, in "Choosing shards and modes", and what to choose
under overload, in "What to choose".

  (default)          20 s of model time per cell, every section (a few minutes)
  --quick            2 s per cell (CI: only that it runs matters, not its numbers)
  --seconds N        model seconds of arrivals per cell
  --seed N           seed of every random stream (default 1)
  --qps LIST         offered requests per second (default 10,50,100,200,500,1000)
  --shards LIST      shard counts (default 1,2,5,10,20,50)
  --load F           offered load as a fraction of the limit's rate (default 0.9)
  --rate R           the limit's rate per second instead of qps / load (capacity = rate)
  --service MS       a transaction's time from snapshot to commit (default 25)
  --decide-ms MS     decide short, work later: the limited transaction takes MS ms and the work
                     (--service) runs after it in its own transaction, reading none of the limit's
                     rows (runWhenAllowed, or an action calling limit then the work)
  --retries N        retries after a conflict before a request fails (default 4)
  --backoff MS       each retry waits uniform [0, MS) ms (default 10)
  --staleness MS     stale snapshots lag by uniform [0, MS) ms (default 100)
  --apply-every MS   the applier starts a batch every MS ms (default 50)
  --stress-load F    the overload section's offered load (default 1.5)
  --checked-refusals a transaction that writes nothing is checked for conflicts like any
                     other (pessimistic; default: never, as Convex's committer skips it)
  --free-refusals    the default, kept for old command lines
  --only LIST        run only these sections, comma-separated (default all):
${SECTIONS.map((name) => `      ${name.padEnd(9)} ${SECTION_ABOUT[name]}`).join("\n")}
  --impl LIST        run only these implementations: ours, upstream (default both)
  --out DIR          where simulate-report.json and .svg go (default: the repository root)
  --no-write         print only
  --plan             the sizing rule: its table over peak QPS × mutation time, then its mode and
                     shards run at 90/150/300 % load for --qps (default 200,1000) at
                     ${PLAN_SERVICE_MS.join(", ")} ms; no other section`;

/** The options `argv` asks for; null for `--help`, which prints the usage and runs nothing. */
function parseOptions(argv: readonly string[]): Options | null {
  const opts: Options = {
    seed: 1,
    seconds: 20,
    qps: [10, 50, 100, 200, 500, 1000],
    shards: [1, 2, 5, 10, 20, 50],
    load: 0.9,
    rate: null,
    serviceMs: 25,
    maxRetries: 4,
    backoffMs: 10,
    stalenessMs: 100,
    applyEveryMs: 50,
    stressLoad: 1.5,
    readOnlyConflicts: false,
    only: new Set(SECTIONS),
    impls: [...IMPLS],
    out: process.cwd(),
    write: true,
    plan: false,
    qpsGiven: false,
    workMs: null,
  };
  let seconds: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value\n${USAGE}`);
      return v;
    };
    const number = (v: string, ok: (x: number) => boolean, what: string) => {
      const n = Number(v);
      if (!Number.isFinite(n) || !ok(n)) throw new UsageError(`${arg} ${v}: expected ${what}\n${USAGE}`);
      return n;
    };
    const positive = (v: string) => number(v, (x) => x > 0, "a number > 0");
    const whole = (v: string) => number(v, (x) => Number.isSafeInteger(x) && x >= 0, "a whole number");
    const list = (v: string, f: (s: string) => number) => v.split(",").map(f);
    switch (arg) {
      case "--quick":
        seconds ??= 2;
        break;
      case "--seconds":
        seconds = positive(value());
        break;
      case "--seed":
        opts.seed = whole(value());
        break;
      case "--qps":
        opts.qps = list(value(), positive);
        opts.qpsGiven = true;
        break;
      case "--shards":
        opts.shards = list(value(), (s) => number(s, (x) => Number.isInteger(x) && x >= 1, "whole numbers ≥ 1"));
        break;
      case "--load":
        opts.load = number(value(), (x) => x > 0 && x <= 10, "a fraction > 0");
        break;
      case "--rate":
        opts.rate = positive(value());
        break;
      case "--service":
        opts.serviceMs = positive(value());
        break;
      case "--retries":
        opts.maxRetries = whole(value());
        break;
      case "--backoff":
        opts.backoffMs = number(value(), (x) => x >= 0, "a number ≥ 0");
        break;
      case "--staleness":
        opts.stalenessMs = number(value(), (x) => x >= 0, "a number ≥ 0");
        break;
      case "--apply-every":
        opts.applyEveryMs = positive(value());
        break;
      case "--stress-load":
        opts.stressLoad = number(value(), (x) => x > 0 && x <= 10, "a fraction > 0");
        break;
      case "--free-refusals":
        opts.readOnlyConflicts = false;
        break;
      case "--checked-refusals":
        opts.readOnlyConflicts = true;
        break;
      case "--only":
        opts.only = new Set(
          value()
            .split(",")
            .map((v) => {
              if (!(SECTIONS as readonly string[]).includes(v)) throw new UsageError(`--only ${v}: expected one of ${SECTIONS.join(", ")}\n${USAGE}`);
              return v as Section;
            }),
        );
        break;
      case "--impl":
        opts.impls = value()
          .split(",")
          .map((v) => {
            if (!(IMPLS as readonly string[]).includes(v)) throw new UsageError(`--impl ${v}: expected ours or upstream\n${USAGE}`);
            return v as Impl;
          });
        break;
      case "--out":
        opts.out = path.resolve(value());
        break;
      case "--no-write":
        opts.write = false;
        break;
      case "--plan":
        opts.plan = true;
        break;
      case "--decide-ms":
        opts.workMs = positive(value());
        break;
      case "--help":
      case "-h":
        console.log(USAGE);
        return null;
      default:
        throw new UsageError(`unknown option ${arg}\n${USAGE}`);
    }
  }
  opts.seconds = seconds ?? opts.seconds;
  // The model's service is the limited transaction's time: the work after it conflicts with nothing here.
  if (opts.workMs !== null) [opts.serviceMs, opts.workMs] = [opts.workMs, opts.serviceMs];
  return opts;
}

/**
 * A scenario: `qps` offered against a token bucket of `rate` per second (capacity = rate) split
 * over `shards`.
 */
type Scenario = { qps: number; shards: number; rate: number };

/** The limit of a scenario in `mode`. */
function limitConfig({ rate, shards }: Scenario, mode: Mode): RateLimitConfig {
  return {
    kind: "token bucket",
    rate,
    period: SECOND,
    ...(shards === 1 ? {} : { shards }),
    ...(mode === "asynchronous" ? { applyUpdates: "asynchronously" as const } : {}),
  };
}

/** Whether our validation accepts `shards` for the limit (every shard gets a whole token). */
function accepts(config: RateLimitConfig): boolean {
  try {
    validateConfig(config);
    return true;
  } catch {
    return false;
  }
}

/** One cell of the grid, as measured. */
type Cell = {
  impl: Impl;
  mode: Mode;
  qps: number;
  shards: number;
  rate: number;
  requests: number;
  admitted: number;
  refused: number;
  failed: number;
  conflicts: number;
  attempts: number;
  conflictsPerRequest: number;
  failedShare: number;
  refusedShare: number;
  readsPerAttempt: number;
  dependentReadsPerAttempt: number;
  staleShare: number;
  /** The worst excess of admissions over capacity + rate × time, in tokens (≤ 0: never over). */
  worstExcess: number;
  overAdmission: number;
  applierRuns: number;
  applierConflicts: number;
  bound?: Bound;
  /** With metrics: the fold's transactions, those that conflicted, and the events it folded. */
  foldRuns?: number;
  foldConflicts?: number;
  eventsFolded?: number;
};

function cellOf(impl: Impl, mode: Mode, qps: number, config: RateLimitConfig, s: RunStats, opts: Options): Cell {
  const excess = worstExcess(s.admissions, limitOf(config));
  const cell: Cell = {
    impl,
    mode,
    qps,
    shards: config.shards ?? 1,
    rate: config.rate,
    requests: s.requests,
    admitted: s.admitted,
    refused: s.refused,
    failed: s.failed,
    conflicts: s.conflicts,
    attempts: s.attempts,
    conflictsPerRequest: s.conflicts / s.requests,
    failedShare: s.failed / s.requests,
    refusedShare: s.refused / s.requests,
    readsPerAttempt: s.queries / s.attempts,
    dependentReadsPerAttempt: s.dependent / s.attempts,
    staleShare: s.staleDecisions / s.attempts,
    worstExcess: s.admissions.length === 0 ? 0 : excess,
    overAdmission: Math.max(0, excess),
    applierRuns: s.applierRuns,
    applierConflicts: s.applierConflicts,
  };
  if (impl === "ours" && mode === "asynchronous") cell.bound = asyncBound(s.takes, config, opts.stalenessMs + opts.serviceMs);
  return cell;
}

/** How often the model's metrics fold runs (ms): more often than an app's cron, to stress it. */
const FOLD_EVERY_MS = 1000;

/**
 * Runs one implementation in one mode on one scenario, with the scenario's streams. With
 * `metrics` (ours only), every request also inserts a metric event, and a fold runs every
 * {@link FOLD_EVERY_MS}.
 */
async function runCell(impl: Impl, mode: Mode, scenario: Scenario, opts: Options, metrics = false): Promise<Cell | null> {
  const { qps, shards } = scenario;
  const config = limitConfig(scenario, mode);
  if (!accepts(config)) return null;
  // Upstream refuses a sharded asynchronous limit ("can't be sharded"): it runs unsharded only.
  if (impl === "upstream" && mode === "asynchronous" && shards > 1) return null;
  const label = (what: string) => seededRandom(streamSeed(opts.seed, `${what}/${qps}/${scenario.rate}/${shards}/${mode}`));
  const streams = {
    // The same arrivals for every implementation, mode and shard count at one QPS.
    arrivals: seededRandom(streamSeed(opts.seed, `arrivals/${qps}`)),
    backoff: label("backoff"),
    staleness: label("staleness"),
  };
  const decide = label(`decide/${impl}`);
  const params: ModelParams = {
    qps,
    durationMs: opts.seconds * SECOND,
    serviceMs: opts.serviceMs,
    maxRetries: opts.maxRetries,
    backoffMs: opts.backoffMs,
    stalenessMs: opts.stalenessMs,
    applyEveryMs: mode === "asynchronous" ? opts.applyEveryMs : null,
    readOnlyConflicts: opts.readOnlyConflicts,
    foldEveryMs: metrics ? FOLD_EVERY_MS : null,
  };
  const store = new Store();
  const applier = newApplierState();
  let driver: Driver;
  if (impl === "ours") {
    const args = requestArgs(NAME, config);
    driver =
      mode === "transactional"
        ? { request: (now) => oursTransactional(store, args, now, decide) }
        : {
            request: (now, lag) => oursAsynchronous(store, args, now, lag, MAX_STALENESS_MS, decide),
            applier: (now, lag) => oursApplier(store, { name: NAME, config }, applier, now, batchSnapshot(applier, now, lag), APPLY_BATCH),
          };
  } else {
    const up = upstreamConfig(config);
    const args = { name: NAME, config: up, count: 1 };
    driver =
      mode === "transactional"
        ? { request: (now) => upstreamTransactional(store, args, now, decide) }
        : {
            request: (now, lag) => upstreamAsynchronous(store, args, now, lag, decide),
            applier: (now, lag) => upstreamWorker(store, up, applier, now, batchSnapshot(applier, now, lag), UPSTREAM_BATCH),
          };
  }
  const folded = { events: 0 };
  if (metrics) {
    if (impl !== "ours") throw new Error("metrics are ours only");
    const request = driver.request;
    driver = {
      ...driver,
      request: async (now, lag) => withMetricEvent(await request(now, lag)),
      fold: (now) => oursFold(store, now, FOLD_BATCH, FOLD_SETTLE_MS, folded),
    };
  }
  const stats = await runModel(store, driver, params, streams);
  const cell = cellOf(impl, mode, qps, config, stats, opts);
  return metrics ? { ...cell, foldRuns: stats.foldRuns, foldConflicts: stats.foldConflicts, eventsFolded: folded.events } : cell;
}

/**
 * What `metrics: true` changes, ours only: the issue's scenario and a few overload cells run
 * without and with metrics on the same streams, under the model's reading of a refusal (by
 * default Convex's: a transaction that writes nothing is never checked, which a refusal with
 * metrics loses, since its event is a write).
 */
async function metricsCells(opts: Options, headlineQps: number): Promise<{ freeRefusals: boolean; off: Cell; on: Cell }[]> {
  // The issue's scenario in both modes, then the overload targets: each mode where it is advised.
  const cells: [Mode, Scenario][] = [
    ...MODES.map((mode): [Mode, Scenario] => [mode, { qps: headlineQps, shards: HEADLINE.shards, rate: HEADLINE.rate }]),
    ...TARGETS.map(({ mode, qps, shards }): [Mode, Scenario] => [mode, { qps, shards, rate: qps / opts.stressLoad }]),
  ];
  const out = [];
  for (const [mode, scenario] of cells) {
    const off = await runCell("ours", mode, scenario, opts);
    const on = await runCell("ours", mode, scenario, opts, true);
    if (off && on) out.push({ freeRefusals: !opts.readOnlyConflicts, off, on });
  }
  return out;
}

function metricsTable(rows: readonly { freeRefusals: boolean; off: Cell; on: Cell }[]): string {
  const pair = (a: string, b: string) => `${a} / ${b}`;
  return table(
    [
      { title: "refusals" },
      { title: "mode" },
      { title: "QPS", right: true },
      { title: "rate/s", right: true },
      { title: "shards", right: true },
      { title: "conflicts/req off / on", right: true },
      { title: "failed off / on", right: true },
      { title: "refused off / on", right: true },
      { title: "fold txns", right: true },
      { title: "fold conflicts", right: true },
      { title: "events folded", right: true },
    ],
    rows.map(({ freeRefusals, off, on }) => [
      freeRefusals ? "never conflict" : "checked",
      on.mode,
      num(on.qps),
      num(on.rate, 0),
      String(on.shards),
      pair(num(off.conflictsPerRequest, 3), num(on.conflictsPerRequest, 3)),
      pair(share(off.failedShare), share(on.failedShare)),
      pair(share(off.refusedShare), share(on.refusedShare)),
      num(on.foldRuns ?? 0),
      num(on.foldConflicts ?? 0),
      `${num(on.eventsFolded ?? 0)} of ${num(on.admitted + on.refused)}`,
    ]),
  );
}

/** A target cell in both models: simulate's (`model`) and the independent check's (simulate-check.ts). */
type CheckRow = {
  mode: Mode;
  qps: number;
  shards: number;
  rate: number;
  load: number;
  model: Cell;
  check: Omit<CheckStats, "admissions"> & { failedShare: number; refusedShare: number; attemptsPerRequest: number; overAdmission: number };
};

/**
 * The issue's targets at the model's load and at the stress load, in both models. The model's cell
 * comes from `cells` when it ran there (the grid or the stress section), else is run here.
 */
async function checkCells(opts: Options, cells: { load: number; cells: readonly Cell[] }[]): Promise<CheckRow[]> {
  const out: CheckRow[] = [];
  for (const { load, cells: ran } of cells) {
    for (const { mode, qps, shards } of TARGETS) {
      const scenario = { qps, shards, rate: opts.rate ?? qps / load };
      const model = find(ran, "ours", mode, qps, shards) ?? (await runCell("ours", mode, scenario, opts));
      if (!model) continue;
      const config = limitConfig(scenario, mode);
      const { admissions, ...c } = checkCell(config, {
        qps,
        seconds: opts.seconds,
        serviceMs: opts.serviceMs,
        maxRetries: opts.maxRetries,
        backoffMs: opts.backoffMs,
        stalenessMs: opts.stalenessMs,
        applyEveryMs: opts.applyEveryMs,
        seed: opts.seed,
      });
      const excess = admissions.length === 0 ? 0 : worstExcess(admissions.map((at) => ({ at, count: 1 })), limitOf(config));
      out.push({
        mode,
        qps,
        shards,
        rate: scenario.rate,
        load,
        model,
        check: {
          ...c,
          failedShare: c.failed / c.requests,
          refusedShare: c.refused / c.requests,
          attemptsPerRequest: c.attempts / c.requests,
          overAdmission: Math.max(0, excess),
        },
      });
    }
  }
  return out;
}

function checkTable(rows: readonly CheckRow[]): string {
  const pair = (a: string, b: string) => `${a} / ${b}`;
  return table(
    [
      { title: "mode" },
      { title: "load", right: true },
      { title: "QPS", right: true },
      { title: "shards", right: true },
      { title: "failed", right: true },
      { title: "refused", right: true },
      { title: "attempts/req", right: true },
      { title: "over-admitted", right: true },
    ],
    rows.map((r) => [
      r.mode,
      pct(r.load, 0),
      num(r.qps),
      String(r.shards),
      pair(share(r.model.failedShare), share(r.check.failedShare)),
      pair(share(r.model.refusedShare), share(r.check.refusedShare)),
      pair(num(r.model.attempts / r.model.requests, 3), num(r.check.attemptsPerRequest, 3)),
      pair(num(r.model.overAdmission, 1), num(r.check.overAdmission, 1)),
    ]),
  );
}

/** The smallest shard count (of those run) whose failed share is under {@link FAIL_TARGET}, per QPS. */
function smallestShards(cells: readonly Cell[], impl: Impl, mode: Mode, opts: Options): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const qps of opts.qps) {
    const ok = cells
      .filter((c) => c.impl === impl && c.mode === mode && c.qps === qps && c.failedShare < FAIL_TARGET)
      .map((c) => c.shards);
    out[String(qps)] = ok.length > 0 ? Math.min(...ok) : null;
  }
  return out;
}

const both = (a: string | undefined, b: string | undefined) => `${a ?? "—"} / ${b ?? "—"}`;
const share = (x: number) => (x === 0 ? "0" : x < 0.0001 ? "<0.01%" : pct(x, 2));
const find = (cells: readonly Cell[], impl: Impl, mode: Mode, qps: number, shards: number) =>
  cells.find((c) => c.impl === impl && c.mode === mode && c.qps === qps && c.shards === shards);

/**
 * The overload targets of issue 21, at the stress load: an unsharded asynchronous limit at 200 and
 * 1,000 QPS, and a transactional one at 200 QPS over 20 shards and 1,000 over 50.
 */
const TARGETS: { mode: Mode; qps: number; shards: number }[] = [
  { mode: "asynchronous", qps: 200, shards: 1 },
  { mode: "asynchronous", qps: 1000, shards: 1 },
  { mode: "transactional", qps: 200, shards: 20 },
  { mode: "transactional", qps: 1000, shards: 50 },
];


/** Runs every implementation and mode over the grid of `opts.qps` × `opts.shards`, at `rateOf(qps)`. */
async function runGrid(opts: Options, rateOf: (qps: number) => number): Promise<Cell[]> {
  const cells: Cell[] = [];
  for (const qps of opts.qps) {
    for (const shards of opts.shards) {
      for (const mode of MODES) {
        for (const impl of opts.impls) {
          const cell = await runCell(impl, mode, { qps, shards, rate: rateOf(qps) }, opts);
          if (cell) cells.push(cell);
        }
      }
    }
  }
  return cells;
}

function gridTable(cells: readonly Cell[], mode: Mode, opts: Options): string {
  const rows: string[][] = [];
  for (const qps of opts.qps) {
    for (const shards of opts.shards) {
      const o = find(cells, "ours", mode, qps, shards);
      const u = find(cells, "upstream", mode, qps, shards);
      if (!o && !u) continue;
      const f = (g: (c: Cell) => string) => both(o && g(o), u && g(u));
      rows.push([
        num(qps),
        String(shards),
        f((c) => share(c.failedShare)),
        f((c) => num(c.conflictsPerRequest, 3)),
        f((c) => share(c.refusedShare)),
        f((c) => num(c.readsPerAttempt, 2)),
        f((c) => num(c.overAdmission, 1)),
      ]);
    }
  }
  return table(
    [
      { title: "QPS", right: true },
      { title: "shards", right: true },
      { title: "failed", right: true },
      { title: "conflicts/req", right: true },
      { title: "refused", right: true },
      { title: "reads/attempt", right: true },
      { title: "over-admitted", right: true },
    ],
    rows,
  );
}

/** Asynchronous mode's worst over-admission beside our bound, per cell; upstream's (unsharded) beside. */
function boundTable(cells: readonly Cell[]): string {
  const rows = cells
    .filter((c) => c.impl === "ours" && c.mode === "asynchronous")
    .map((c) => {
      const up = find(cells, "upstream", "asynchronous", c.qps, 1);
      return [
        num(c.qps),
        String(c.shards),
        num(c.overAdmission, 2),
        num(c.bound!.value, 2),
        num(Math.max(...c.bound!.perShard.map((p) => p.taken)), 0),
        num(c.bound!.perShard[0]!.margin, 2),
        pct(c.staleShare, 1),
        share(c.failedShare),
        up ? num(up.overAdmission, 1) : "—",
      ];
    });
  return table(
    [
      { title: "QPS", right: true },
      { title: "shards", right: true },
      { title: "over", right: true },
      { title: "bound", right: true },
      { title: "max I_i", right: true },
      { title: "m_0", right: true },
      { title: "stale", right: true },
      { title: "failed", right: true },
      { title: "upstream over", right: true },
    ],
    rows,
  );
}

/** The cell with the worst over-admission of ours in asynchronous mode, and any over their bound. */
function worstAsync(cells: readonly Cell[]): { worst: Cell | null; beyond: Cell[] } {
  const mine = cells.filter((c) => c.impl === "ours" && c.mode === "asynchronous");
  const worst = mine.reduce<Cell | null>((w, c) => (w === null || c.overAdmission > w.overAdmission ? c : w), null);
  return { worst, beyond: mine.filter((c) => c.overAdmission > c.bound!.value + 1e-9) };
}

function worstLine(label: string, cells: readonly Cell[]): string {
  const { worst, beyond } = worstAsync(cells);
  if (!worst) return `${label}: no asynchronous cells run.`;
  const up = cells.filter((c) => c.impl === "upstream" && c.mode === "asynchronous");
  const upWorst = up.reduce((m, c) => Math.max(m, c.overAdmission), 0);
  const over =
    beyond.length === 0
      ? "no cell over its bound"
      : `OVER THE BOUND in ${beyond.map((c) => `${c.qps} QPS × ${c.shards} shards (${num(c.overAdmission, 2)} > ${num(c.bound!.value, 2)})`).join(", ")}`;
  return (
    `${label}: ours' worst over-admission ${num(worst.overAdmission, 2)} tokens (${worst.qps} QPS × ${worst.shards} shards, ` +
    `bound there ${num(worst.bound!.value, 2)}); ${over}. Upstream's worst (unsharded): ${num(upWorst, 1)} tokens.`
  );
}

export async function main(argv: readonly string[]): Promise<void> {
  const opts = parseOptions(argv);
  if (opts === null) return;
  const started = performance.now();
  if (opts.workMs !== null) {
    console.log(`Decide short, work later: the limited transaction takes ${opts.serviceMs} ms; the work, ${opts.workMs} ms, runs after it in its own`);
    console.log(`transaction, which reads none of the limit's rows and so adds no conflict to the model's.`);
  }
  for (const qps of opts.qps) console.log(`Recommended: ${recommendation(qps, opts.rate ?? qps / opts.load, opts.serviceMs)}`);
  if (opts.plan) return printPlan(opts, (mode, scenario, serviceMs) => runCell("ours", mode, scenario, { ...opts, serviceMs }), started);
  const rateOf = (load: number) => (qps: number) => opts.rate ?? qps / load;
  const grid = opts.only.has("grid") ? await runGrid(opts, rateOf(opts.load)) : [];
  const headlineQps = HEADLINE.rate * HEADLINE.load;
  const headline: Cell[] = [];
  for (const mode of opts.only.has("headline") ? MODES : []) {
    for (const impl of opts.impls) {
      const shards = impl === "upstream" && mode === "asynchronous" ? 1 : HEADLINE.shards;
      const cell = await runCell(impl, mode, { qps: headlineQps, shards, rate: HEADLINE.rate }, opts);
      if (cell) headline.push(cell);
    }
  }
  const stress = opts.only.has("stress") ? await runGrid(opts, rateOf(opts.stressLoad)) : [];
  const metrics = opts.only.has("metrics") ? await metricsCells(opts, headlineQps) : [];
  const check = opts.only.has("check")
    ? await checkCells(opts, [
        { load: opts.load, cells: grid },
        { load: opts.stressLoad, cells: stress },
      ])
    : [];

  const rateText = opts.rate === null ? `rate = QPS / ${opts.load} per second` : `rate = ${opts.rate} per second`;
  console.log(`npm run simulate: one global key, token bucket, ${rateText}, capacity = rate;`);
  console.log(
    `${opts.seconds} s of Poisson arrivals per cell, seed ${opts.seed}; service ${opts.serviceMs} ms, ≤ ${opts.maxRetries} retries, ` +
      `backoff uniform [0, ${opts.backoffMs}) ms, staleness uniform [0, ${opts.stalenessMs}) ms, applier every ${opts.applyEveryMs} ms` +
      (opts.readOnlyConflicts ? "." : "; refusals never conflict."),
  );
  // Only what ran is printed: a section left out by --only prints nothing, not even its heading.
  const ran = (section: Section) => opts.only.has(section);
  console.log(`Sections run: ${SECTIONS.filter(ran).join(", ")}.`);
  if (ran("grid") || ran("stress")) {
    console.log(`Each cell: ours / upstream (@convex-dev/rate-limiter 0.4.0). "—": not run (our validation refuses`);
    console.log(`more shards than whole tokens; upstream refuses a sharded asynchronous limit).`);
  }
  const smallest = Object.fromEntries(
    IMPLS.map((impl) => [impl, Object.fromEntries(MODES.map((mode) => [mode, smallestShards(grid, impl, mode, opts)]))]),
  ) as Record<Impl, Record<Mode, Record<string, number | null>>>;
  if (ran("grid")) printGrid(grid, smallest, opts);
  if (ran("headline")) printHeadline(headline, headlineQps);
  if (ran("stress")) printStress(stress, opts);
  const worst = [
    ...(ran("grid") ? [worstLine(`At ${pct(opts.load, 0)} load`, grid)] : []),
    ...(ran("stress") ? [worstLine(`At ${pct(opts.stressLoad, 0)} load`, stress)] : []),
    ...(ran("headline") ? [worstLine(`The issue's scenario`, headline)] : []),
  ];
  if (worst.length > 0) console.log(`\n${worst.join("\n")}`);
  const overTx = [...grid, ...headline, ...stress].filter((c) => c.mode === "transactional" && c.impl === "ours" && c.overAdmission > 1e-9);
  if (overTx.length > 0) console.log(`Ours over-admitted in transactional mode (a model or code bug): ${overTx.map((c) => `${c.qps}×${c.shards}`).join(", ")}`);
  if (ran("metrics")) printMetrics(metrics, opts);
  if (ran("check")) printCheck(check);

  const runs = grid.length + headline.length + stress.length + metrics.length * 2 + check.length;
  console.log(`\n${runs} runs in ${num((performance.now() - started) / 1000, 1)} s of wall time.`);
  if (opts.write) {
    const json = path.join(opts.out, "simulate-report.json");
    const svg = path.join(opts.out, "simulate-report.svg");
    const { out: _out, write: _write, only, ...settings } = opts;
    const report = {
      command: `npm run simulate -- ${argv.join(" ")}`.trim(),
      model: {
        key: "one global key (no key argument), count 1 per request",
        limit: `token bucket, ${rateText}, capacity = rate; overload section: rate = QPS / ${opts.stressLoad}`,
        ...settings,
        only: [...only],
        maxStalenessMs: MAX_STALENESS_MS,
        asyncMargin: ASYNC_MARGIN,
        applyBatch: APPLY_BATCH,
        upstreamBatch: UPSTREAM_BATCH,
        failTarget: FAIL_TARGET,
        headline: { ...HEADLINE, qps: headlineQps },
      },
      smallestShards: smallest,
      rule: Object.fromEntries(opts.qps.map((qps) => [qps, planFor({ qps, rate: opts.rate ?? qps / opts.load, mutationMs: opts.serviceMs })])),
      grid,
      headline,
      stress,
      metrics,
      check,
    };
    writeFileSync(json, JSON.stringify(report, null, 2) + "\n");
    writeFileSync(svg, chart(grid, stress, opts));
    console.log(`Wrote ${path.relative(process.cwd(), json) || json} and ${path.relative(process.cwd(), svg) || svg}.`);
  }
}

/** Prints the grid section: each mode's table at `--load`, and the smallest shard counts that keep up. */
function printGrid(grid: readonly Cell[], smallest: Record<Impl, Record<Mode, Record<string, number | null>>>, opts: Options): void {
  console.log();
  for (const mode of MODES) console.log(`${mode}\n${gridTable(grid, mode, opts)}\n`);
  const show = (n: number | null | undefined) => (n === null || n === undefined ? "none" : String(n));
  console.log(`Smallest shard count with failed requests under ${pct(FAIL_TARGET, 1)} (ours / upstream; "none": none run did)`);
  console.log(
    table(
      [{ title: "QPS", right: true }, ...MODES.map((m) => ({ title: m, right: true }))],
      opts.qps.map((qps) => [num(qps), ...MODES.map((m) => both(show(smallest.ours[m][qps]), show(smallest.upstream[m][qps])))]),
    ),
  );
}

/** Prints the headline section: the issue's scenario, each implementation in each mode. */
function printHeadline(headline: readonly Cell[], headlineQps: number): void {
  console.log(
    `\nThe issue's scenario: token bucket ${HEADLINE.rate}/s, capacity ${HEADLINE.rate}, ${HEADLINE.shards} shards, ` +
      `${num(headlineQps)} QPS (${pct(HEADLINE.load, 0)} load); upstream's asynchronous mode unsharded`,
  );
  console.log(
    table(
      [
        { title: "impl" },
        { title: "mode" },
        { title: "shards", right: true },
        { title: "failed", right: true },
        { title: "conflicts/req", right: true },
        { title: "refused", right: true },
        { title: "over-admitted", right: true },
        { title: "bound", right: true },
      ],
      headline.map((c) => [
        c.impl,
        c.mode,
        String(c.shards),
        pct(c.failedShare, 2),
        num(c.conflictsPerRequest, 3),
        share(c.refusedShare),
        num(c.overAdmission, 2),
        c.bound ? num(c.bound.value, 2) : "",
      ]),
    ),
  );
}

/** Prints the stress section: the grid over the limit, and asynchronous mode's over-admission beside its bound. */
function printStress(stress: readonly Cell[], opts: Options): void {
  console.log(`\nOverload: the same grid at ${pct(opts.stressLoad, 0)} load (rate = QPS / ${opts.stressLoad}), where asynchronous mode's margin is tested`);
  for (const mode of MODES) console.log(`${mode}\n${gridTable(stress, mode, opts)}\n`);
  console.log(
    `Asynchronous mode at ${pct(opts.stressLoad, 0)} load: worst over-admission (tokens) beside ours' bound Σ max(0, I_i − m_i),\n` +
      `I_i the most tokens taken from shard i within δ = staleness + service = ${opts.stalenessMs + opts.serviceMs} ms, m_i = ${ASYNC_MARGIN} × shard i's capacity`,
  );
  console.log(boundTable(stress));
}

/** Prints the metrics section: each cell with metrics off and on. */
function printMetrics(metrics: Parameters<typeof metricsTable>[0], opts: Options): void {
  console.log(
    `\nMetrics (metrics: true), ours: each request also inserts an event; a fold every ${FOLD_EVERY_MS} ms reads up to ${FOLD_BATCH} events`,
  );
  console.log(`created over ${FOLD_SETTLE_MS} ms before it, adds them to per-minute summaries and deletes them. Same streams off and on.`);
  console.log(
    opts.readOnlyConflicts
      ? `Refusals: "checked", every transaction is checked for conflicts (--checked-refusals).`
      : `Refusals: "never conflict", as Convex commits a transaction that writes nothing (run --checked-refusals for the pessimistic reading).`,
  );
  console.log(metricsTable(metrics));
  console.log(`Requests never read events or summaries, so an event adds no read; but a refusal with metrics is no longer`);
  console.log(`read-only (its event is a write), so it is checked for conflicts like an admission, on whatever it read.`);
}

/** Prints the check section: the overload targets in simulate's model beside the independent one. */
function printCheck(check: readonly CheckRow[]): void {
  if (check.length > 0) {
    console.log(
      `\nThe issue's targets in an independent model (bench/simulate-check.ts: its own event loop in 1 ms ticks, store, conflict\n` +
        `rule and random streams; the same decision code). Each cell: simulate's model / the check.`,
    );
    console.log(checkTable(check));
    const gap = (f: (r: CheckRow) => [number, number]) => Math.max(...check.map((r) => Math.abs(f(r)[0] - f(r)[1])));
    console.log(
      `Largest differences: failed ${pct(gap((r) => [r.model.failedShare, r.check.failedShare]), 2)} points, ` +
        `refused ${pct(gap((r) => [r.model.refusedShare, r.check.refusedShare]), 2)} points, ` +
        `attempts per request ${num(gap((r) => [r.model.attempts / r.model.requests, r.check.attemptsPerRequest]), 3)}.`,
    );
  }
}
