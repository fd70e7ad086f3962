// What `npm run simulate` prints: the model's settings, then each section that ran as tables (the
// grid per mode and its smallest shard counts, the issue's scenario, the overload grid and
// asynchronous mode's bound, metrics off and on, the check beside the model), and the closing
// lines on over-admission. Only what ran is printed. The file it writes is write.ts's.
import { ASYNC_MARGIN } from "../../src/shared/flow/flow.js";
import { FOLD_BATCH, FOLD_SETTLE_MS } from "../../src/component/metrics.js";
import { num, pct, share, table } from "../table.js";
import { FOLD_EVERY_MS, IMPLS, MODES, type Cell, type Impl, type Mode } from "./cell.js";
import type { Options } from "./options.js";
import { FAIL_TARGET, find, HEADLINE, HEADLINE_QPS, SECTIONS, type CheckRow, type MetricsRow, type Section } from "./sections.js";

/** What the sections measured; a section not run has no cells. */
export type Results = { grid: Cell[]; headline: Cell[]; stress: Cell[]; metrics: MetricsRow[]; check: CheckRow[] };

/** Per implementation and mode, the smallest shard count that kept up at each QPS (see {@link smallestShards}). */
export type Smallest = Record<Impl, Record<Mode, Record<string, number | null>>>;

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

/** smallest is {@link smallestShards} for every implementation and mode. */
export function smallest(grid: readonly Cell[], opts: Options): Smallest {
  return Object.fromEntries(
    IMPLS.map((impl) => [impl, Object.fromEntries(MODES.map((mode) => [mode, smallestShards(grid, impl, mode, opts)]))]),
  ) as Smallest;
}

/** The model's settings, in the words the report's header and the JSON's `limit` use. */
export function rateText(opts: Options): string {
  return opts.rate === null ? `rate = QPS / ${opts.load} per second` : `rate = ${opts.rate} per second`;
}

/** Prints every section that ran, under the model's settings. */
export function printReport({ grid, headline, stress, metrics, check }: Results, smallest: Smallest, opts: Options): void {
  console.log(`npm run simulate: one global key, token bucket, ${rateText(opts)}, capacity = rate;`);
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
  if (ran("grid")) printGrid(grid, smallest, opts);
  if (ran("headline")) printHeadline(headline);
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
}

/** Two measures of one cell side by side: "a / b"; with `both`, "—" for a cell not run. */
const pair = (a: string, b: string) => `${a} / ${b}`;
const both = (a: string | undefined, b: string | undefined) => pair(a ?? "—", b ?? "—");

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

function metricsTable(rows: readonly MetricsRow[]): string {
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

function checkTable(rows: readonly CheckRow[]): string {
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

/** Prints the grid section: each mode's table at `--load`, and the smallest shard counts that keep up. */
function printGrid(grid: readonly Cell[], smallest: Smallest, opts: Options): void {
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
function printHeadline(headline: readonly Cell[]): void {
  console.log(
    `\nThe issue's scenario: token bucket ${HEADLINE.rate}/s, capacity ${HEADLINE.rate}, ${HEADLINE.shards} shards, ` +
      `${num(HEADLINE_QPS)} QPS (${pct(HEADLINE.load, 0)} load); upstream's asynchronous mode unsharded`,
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
function printMetrics(metrics: readonly MetricsRow[], opts: Options): void {
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
      `\nThe issue's targets in an independent model (bench/contention/check.ts: its own event loop in 1 ms ticks, store, conflict\n` +
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
