// What `npm run simulate` writes unless --no-write: simulate-report.json (the command, the model's
// settings, the smallest shard counts, the sizing rule's plan per QPS, and every cell of every
// section) and simulate-report.svg (chart.ts), to --out.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { ASYNC_MARGIN } from "../../src/shared/flow/flow.js";
import { planFor } from "../../src/shared/metrics/heat.js";
import { MAX_STALENESS_MS } from "../../src/shared/shards/overload.js";
import { APPLY_BATCH } from "../../src/component/applier.js";
import { UPSTREAM_BATCH } from "./drivers.js";
import { chart } from "./chart.js";
import type { Options } from "./options.js";
import { rateText, type Results, type Smallest } from "./report.js";
import { FAIL_TARGET, HEADLINE, HEADLINE_QPS } from "./sections.js";

/** Writes the report of a run of `argv` to `opts.out`, and says where. */
export function writeReport(argv: readonly string[], opts: Options, results: Results, smallestShards: Smallest): void {
  const json = path.join(opts.out, "simulate-report.json");
  const svg = path.join(opts.out, "simulate-report.svg");
  const { out: _out, write: _write, only, ...settings } = opts;
  const { grid, headline, stress, metrics, check } = results;
  const report = {
    command: `npm run simulate -- ${argv.join(" ")}`.trim(),
    model: {
      key: "one global key (no key argument), count 1 per request",
      limit: `token bucket, ${rateText(opts)}, capacity = rate; overload section: rate = QPS / ${opts.stressLoad}`,
      ...settings,
      only: [...only],
      maxStalenessMs: MAX_STALENESS_MS,
      asyncMargin: ASYNC_MARGIN,
      applyBatch: APPLY_BATCH,
      upstreamBatch: UPSTREAM_BATCH,
      failTarget: FAIL_TARGET,
      headline: { ...HEADLINE, qps: HEADLINE_QPS },
    },
    smallestShards,
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
