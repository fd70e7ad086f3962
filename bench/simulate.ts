// `npm run simulate`: a discrete-event model of a Convex deployment under load on ONE global limit
// key, driven by our real decision code and by @convex-dev/rate-limiter 0.4.0's under the same
// arrivals and seed. It prints, and writes as JSON and as an SVG chart, for each QPS × shard count
// × mode: conflicts per request, requests that fail after retries, refusals, over-admission and
// reads per attempt; the smallest shard count that keeps failed requests under 0.1 %; asynchronous
// mode's worst over-admission beside its bound; what `metrics: true` changes (each request also
// inserts an event, a fold reads and deletes them); and issue 21's overload targets beside an
// independent model of the same cells. A transaction that writes nothing is never checked for
// conflicts, as Convex commits it (`--checked-refusals` for the pessimistic reading). It measures
// and prints; it asserts nothing. Run through tools/run.mjs; seeded.
//
// The model is bench/contention/, in parts:
//   store.ts      one key's documents versioned by commit time, and the commit log
//   engine.ts     arrivals, transactions, optimistic commit, conflicts and retries (runModel)
//   applier.ts    asynchronous mode's applier loop, ours and upstream's
//   ours.ts       our limiter under test: the pure flows over the store; metrics.ts, its metrics
//   upstream.ts   upstream's limiter under test, over a fake database
//   unmodelled.ts what the code under test reads and writes that the model's one limit never has
//   drivers.ts    each limiter under test in each mode, as the engine drives it
//   cell.ts       one implementation × mode × scenario run, and what it measured
//   sections.ts   the workload: what each section runs (grid, headline, stress, metrics, check)
//   check.ts      the independent model the check section compares against
//   plan.ts       the sizing rule's recommendation and `--plan`
//   report.ts     the printed tables; write.ts, chart.ts and svg.ts the JSON and the chart
//   options.ts    the command line and --help
//   quiet-shards.ts  a script of its own (node tools/run.mjs bench/contention/quiet-shards.ts): what
//                 reading on past a refused pair costs on quiet shards, in check.ts's model
import { num } from "./table.js";
import { parseOptions } from "./contention/options.js";
import { printPlan, recommendation } from "./contention/plan.js";
import { printReport, smallest } from "./contention/report.js";
import { checkCells, headlineCells, metricsCells, runGrid } from "./contention/sections.js";
import { writeReport } from "./contention/write.js";

/** Runs what `argv` asks for and prints it; writes the report unless --no-write. */
export async function main(argv: readonly string[]): Promise<void> {
  const opts = parseOptions(argv);
  if (opts === null) return;
  const started = performance.now();
  if (opts.workMs !== null) {
    console.log(`Decide short, work later: the limited transaction takes ${opts.serviceMs} ms; the work, ${opts.workMs} ms, runs after it in its own`);
    console.log(`transaction, which reads none of the limit's rows and so adds no conflict to the model's.`);
  }
  for (const qps of opts.qps) console.log(`Recommended: ${recommendation(qps, opts.rate ?? qps / opts.load, opts.serviceMs)}`);
  if (opts.plan) return printPlan(opts, started);
  const rateOf = (load: number) => (qps: number) => opts.rate ?? qps / load;
  const grid = opts.only.has("grid") ? await runGrid(opts, rateOf(opts.load)) : [];
  const headline = opts.only.has("headline") ? await headlineCells(opts) : [];
  const stress = opts.only.has("stress") ? await runGrid(opts, rateOf(opts.stressLoad)) : [];
  const metrics = opts.only.has("metrics") ? await metricsCells(opts) : [];
  const check = opts.only.has("check")
    ? await checkCells(opts, [
        { load: opts.load, cells: grid },
        { load: opts.stressLoad, cells: stress },
      ])
    : [];
  const results = { grid, headline, stress, metrics, check };
  const smallestShards = smallest(grid, opts);
  printReport(results, smallestShards, opts);
  const runs = grid.length + headline.length + stress.length + metrics.length * 2 + check.length;
  console.log(`\n${runs} runs in ${num((performance.now() - started) / 1000, 1)} s of wall time.`);
  if (opts.write) writeReport(argv, opts, results, smallestShards);
}
