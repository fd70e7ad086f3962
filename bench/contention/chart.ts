// The SVG chart `npm run simulate` writes (simulate-report.svg): failed requests and conflicts per
// request by shard count, each QPS a line, ours solid and upstream's dashed, at the model's load
// and over the limit. The drawing is svg.ts's.
import { IMPLS, type Cell, type Mode } from "./cell.js";
import type { Options } from "./options.js";
import { chartSvg, type LegendEntry, type Panel } from "./svg.js";

/** chart draws the grid's and the overload section's cells. */
export function chart(grid: readonly Cell[], stress: readonly Cell[], opts: Options): string {
  const colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
  const color = (qps: number) => colors[opts.qps.indexOf(qps) % colors.length]!;
  const series = (cells: readonly Cell[], mode: Mode, y: (c: Cell) => number) =>
    IMPLS.flatMap((impl) =>
      opts.qps.map((qps) => ({
        label: `${impl} ${mode}, ${qps} QPS`,
        color: color(qps),
        dashed: impl === "upstream",
        points: cells
          .filter((c) => c.impl === impl && c.mode === mode && c.qps === qps)
          .sort((a, b) => a.shards - b.shards)
          .map((c): [number, number] => [c.shards, y(c)]),
      })),
    );
  const pctFmt = (y: number) => `${+(y * 100).toPrecision(2)}%`;
  const plain = (y: number) => String(+y.toPrecision(2));
  const load = `${Math.round(opts.load * 100)}% load`;
  const stressed = `${Math.round(opts.stressLoad * 100)}% load`;
  const panels: Panel[] = [
    { title: `Transactional, ${load}: requests failed`, yMin: 1e-4, yMax: 1, format: pctFmt, series: series(grid, "transactional", (c) => c.failedShare) },
    { title: `Asynchronous, ${load}: requests failed`, yMin: 1e-4, yMax: 1, format: pctFmt, series: series(grid, "asynchronous", (c) => c.failedShare) },
    { title: `Transactional, ${load}: conflicts per request`, yMin: 1e-3, yMax: 10, format: plain, series: series(grid, "transactional", (c) => c.conflictsPerRequest) },
    { title: `Asynchronous, ${load}: conflicts per request`, yMin: 1e-3, yMax: 10, format: plain, series: series(grid, "asynchronous", (c) => c.conflictsPerRequest) },
    { title: `Transactional, ${stressed}: requests failed`, yMin: 1e-4, yMax: 1, format: pctFmt, series: series(stress, "transactional", (c) => c.failedShare) },
    { title: `Asynchronous, ${stressed}: over-admitted tokens`, yMin: 0.1, yMax: 1000, format: plain, series: series(stress, "asynchronous", (c) => c.overAdmission) },
  ];
  const legend: LegendEntry[] = [
    ...opts.qps.map((qps) => ({ label: `${qps} QPS`, color: color(qps), dashed: false })),
    { label: "ours (solid)", color: "#000", dashed: false },
    { label: "upstream 0.4.0 (dashed)", color: "#000", dashed: true },
  ];
  const notes = [
    `One global key; token bucket, rate = QPS / load per second, capacity = rate. ${opts.seconds} s of Poisson arrivals per cell, seed ${opts.seed}.`,
    `Service ${opts.serviceMs} ms, up to ${opts.maxRetries} retries, backoff uniform [0, ${opts.backoffMs}) ms; stale snapshots uniform [0, ${opts.stalenessMs}) ms old; applier every ${opts.applyEveryMs} ms.`,
    `Upstream's asynchronous mode can't be sharded: one point, at 1 shard. Values below an axis are drawn on it.`,
  ];
  return chartSvg("npm run simulate: a hot global limit under optimistic concurrency", opts.shards, panels, legend, notes);
}
