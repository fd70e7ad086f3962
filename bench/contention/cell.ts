// One cell of the contention model: an implementation (ours or upstream's) in a mode, on one
// scenario (QPS, shards, rate), run by the engine on its own seeded streams, and what it measured:
// conflicts, failed requests, refusals, reads, over-admission and, for ours in asynchronous mode,
// the bound on it. Every section of `npm run simulate` and `--plan` run their cells here.
import { SECOND } from "../../src/shared/kinds/algebra.js";
import { ASYNC_MARGIN } from "../../src/shared/flow/flow.js";
import { shardParams } from "../../src/shared/shards/layout.js";
import { validateConfig } from "../../src/shared/validation/validate.js";
import type { RateLimitConfig } from "../../src/shared/shapes/validators.js";
import { limitOf, worstExcess } from "../../tools/bounds.js";
import { seededRandom, streamSeed } from "../../tools/random.js";
import { driverOf, withMetrics } from "./drivers.js";
import { runModel, type CommittedTake, type ModelParams, type RunStats } from "./engine.js";
import { Store } from "./store.js";

export const IMPLS = ["ours", "upstream"] as const;
export const MODES = ["transactional", "asynchronous"] as const;
export type Impl = (typeof IMPLS)[number];
export type Mode = (typeof MODES)[number];

/** The model's settings a cell runs under, as the command line gives them (see options.ts). */
export type CellSettings = {
  seed: number;
  /** Model seconds of arrivals. */
  seconds: number;
  serviceMs: number;
  maxRetries: number;
  backoffMs: number;
  stalenessMs: number;
  applyEveryMs: number;
  readOnlyConflicts: boolean;
};

/**
 * A scenario: `qps` offered against a token bucket of `rate` per second (capacity = rate) split
 * over `shards`.
 */
export type Scenario = { qps: number; shards: number; rate: number };

/** The limit of a scenario in `mode`. */
export function limitConfig({ rate, shards }: Scenario, mode: Mode): RateLimitConfig {
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

/** One cell of the grid, as measured: the run's counts (see RunStats), and the shares and bounds drawn from them. */
export type Cell = {
  impl: Impl;
  mode: Mode;
  qps: number;
  shards: number;
  rate: number;
} & Pick<RunStats, "requests" | "admitted" | "refused" | "failed" | "conflicts" | "attempts" | "applierRuns" | "applierConflicts"> & {
  conflictsPerRequest: number;
  failedShare: number;
  refusedShare: number;
  readsPerAttempt: number;
  dependentReadsPerAttempt: number;
  staleShare: number;
  /** The worst excess of admissions over capacity + rate × time, in tokens (≤ 0: never over). */
  worstExcess: number;
  overAdmission: number;
  bound?: Bound;
  /** With metrics: the fold's transactions, those that conflicted, and the events it folded. */
  foldRuns?: number;
  foldConflicts?: number;
  eventsFolded?: number;
};

function cellOf(impl: Impl, mode: Mode, qps: number, config: RateLimitConfig, s: RunStats, opts: CellSettings): Cell {
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
export const FOLD_EVERY_MS = 1000;

/**
 * Runs one implementation in one mode on one scenario, with the scenario's streams. With
 * `metrics` (ours only), every request also inserts a metric event, and a fold runs every
 * {@link FOLD_EVERY_MS}.
 */
export async function runCell(impl: Impl, mode: Mode, scenario: Scenario, opts: CellSettings, metrics = false): Promise<Cell | null> {
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
  const folded = { events: 0 };
  let driver = driverOf(impl, store, config, decide);
  if (metrics) {
    if (impl !== "ours") throw new Error("metrics are ours only");
    driver = withMetrics(driver, store, folded);
  }
  const stats = await runModel(store, driver, params, streams);
  const cell = cellOf(impl, mode, qps, config, stats, opts);
  return metrics ? { ...cell, foldRuns: stats.foldRuns, foldConflicts: stats.foldConflicts, eventsFolded: folded.events } : cell;
}

/** Asynchronous mode's bound on over-admission in a run: see docs/hot-limits.md, "Choosing shards and modes". */
export type Bound = { deltaMs: number; perShard: { shard: number; taken: number; margin: number }[]; value: number };

/**
 * asyncBound returns Σ_i max(0, I_i − m_i): `I_i` the most tokens taken from shard i by takes
 * committed within any window of `deltaMs`, `m_i` = ASYNC_MARGIN × shard i's capacity.
 */
export function asyncBound(takes: readonly CommittedTake[], config: RateLimitConfig, deltaMs: number): Bound {
  const n = config.shards ?? 1;
  const perShard = Array.from({ length: n }, (_, shard) => {
    const mine = takes.filter((t) => t.shard === shard && t.count > 0).sort((a, b) => a.at - b.at);
    let best = 0;
    let sum = 0;
    let lo = 0;
    for (const t of mine) {
      sum += t.count;
      while (t.at - mine[lo]!.at > deltaMs) sum -= mine[lo++]!.count;
      best = Math.max(best, sum);
    }
    return { shard, taken: best, margin: ASYNC_MARGIN * shardParams(config, 0, shard).capacity };
  });
  return { deltaMs, perShard, value: perShard.reduce((s, p) => s + Math.max(0, p.taken - p.margin), 0) };
}
