// The workload of `npm run simulate`: what each section runs, cell by cell. The grid (every QPS ×
// shard count × mode at a load), the scenario, the overload targets of issue 21, the same
// cells with and without metrics, and the targets in the independent check (check.ts) beside the
// model. Each cell is run by cell.ts; what they print is report.ts's.
import { limitOf, worstExcess } from "../../tools/bounds.js";
import { limitConfig, MODES, runCell, type Cell, type CellSettings, type Impl, type Mode, type Scenario } from "./cell.js";
import { checkCell, type CheckStats } from "./check.js";

/** Failed requests under this share count as "keeps up" in the smallest-shards table. */
export const FAIL_TARGET = 0.001;

/** The scenario: a token bucket of 200 per second (capacity 200) over 10 shards, at 90 % load. */
export const HEADLINE = { rate: 200, load: 0.9, shards: 10 };
/** The offered QPS of the scenario. */
export const HEADLINE_QPS = HEADLINE.rate * HEADLINE.load;

/** The sections `--only` names, in the order they print, each with what it prints. */
export const SECTION_ABOUT = {
  grid: "every QPS × shard count × mode at --load; the smallest shard count that keeps up",
  headline: `the issue's scenario: ${HEADLINE.rate}/s over ${HEADLINE.shards} shards at ${HEADLINE.load * 100} % load`,
  stress: "the grid over the limit (--stress-load); asynchronous mode's bound",
  metrics: "what metrics: true changes on a hot limit",
  check: "the overload targets in an independent model (bench/contention/check.ts)",
} as const;
export type Section = keyof typeof SECTION_ABOUT;
export const SECTIONS = Object.keys(SECTION_ABOUT) as Section[];

/** What the sections run over, beside each cell's settings: the grid's axes, the implementations and the loads. */
export type Workload = CellSettings & {
  qps: number[];
  shards: number[];
  /** A fixed rate (tokens per second) instead of qps / load. */
  rate: number | null;
  /** The stress section's offered load, as a fraction of the limit's rate. */
  stressLoad: number;
  impls: Impl[];
};

/**
 * The overload targets of issue 21, at the stress load: an unsharded asynchronous limit at 200 and
 * 1,000 QPS, and a transactional one at 200 QPS over 20 shards and 1,000 over 50.
 */
export const TARGETS: { mode: Mode; qps: number; shards: number }[] = [
  { mode: "asynchronous", qps: 200, shards: 1 },
  { mode: "asynchronous", qps: 1000, shards: 1 },
  { mode: "transactional", qps: 200, shards: 20 },
  { mode: "transactional", qps: 1000, shards: 50 },
];

/** The cell of `impl` in `mode` at `qps` over `shards` among `cells`, if it ran. */
export const find = (cells: readonly Cell[], impl: Impl, mode: Mode, qps: number, shards: number) =>
  cells.find((c) => c.impl === impl && c.mode === mode && c.qps === qps && c.shards === shards);

/** Runs every implementation and mode over the grid of `opts.qps` × `opts.shards`, at `rateOf(qps)`. */
export async function runGrid(opts: Workload, rateOf: (qps: number) => number): Promise<Cell[]> {
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

/** The scenario, each implementation in each mode (upstream's asynchronous mode unsharded). */
export async function headlineCells(opts: Workload): Promise<Cell[]> {
  const cells: Cell[] = [];
  for (const mode of MODES) {
    for (const impl of opts.impls) {
      const shards = impl === "upstream" && mode === "asynchronous" ? 1 : HEADLINE.shards;
      const cell = await runCell(impl, mode, { qps: HEADLINE_QPS, shards, rate: HEADLINE.rate }, opts);
      if (cell) cells.push(cell);
    }
  }
  return cells;
}

/** A cell run without and with metrics, under the model's reading of a refusal. */
export type MetricsRow = { freeRefusals: boolean; off: Cell; on: Cell };

/**
 * What `metrics: true` changes, ours only: the scenario and a few overload cells run
 * without and with metrics on the same streams, under the model's reading of a refusal (by
 * default Convex's: a transaction that writes nothing is never checked, which a refusal with
 * metrics loses, since its event is a write).
 */
export async function metricsCells(opts: Workload): Promise<MetricsRow[]> {
  // The scenario in both modes, then the overload targets: each mode where it is advised.
  const cells: [Mode, Scenario][] = [
    ...MODES.map((mode): [Mode, Scenario] => [mode, { qps: HEADLINE_QPS, shards: HEADLINE.shards, rate: HEADLINE.rate }]),
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

/** A target cell in both models: simulate's (`model`) and the independent check's (check.ts). */
export type CheckRow = Pick<Cell, "mode" | "qps" | "shards" | "rate"> & {
  load: number;
  model: Cell;
  check: Omit<CheckStats, "admissions"> & { failedShare: number; refusedShare: number; attemptsPerRequest: number; overAdmission: number };
};

/**
 * The targets at the model's load and at the stress load, in both models. The model's cell
 * comes from `cells` when it ran there (the grid or the stress section), else is run here.
 */
export async function checkCells(opts: Workload, cells: { load: number; cells: readonly Cell[] }[]): Promise<CheckRow[]> {
  const out: CheckRow[] = [];
  for (const { load, cells: ran } of cells) {
    for (const { mode, qps, shards } of TARGETS) {
      const scenario = { qps, shards, rate: opts.rate ?? qps / load };
      const model = find(ran, "ours", mode, qps, shards) ?? (await runCell("ours", mode, scenario, opts));
      if (!model) continue;
      const config = limitConfig(scenario, mode);
      const { admissions, ...c } = checkCell(config, { ...opts, qps });
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
