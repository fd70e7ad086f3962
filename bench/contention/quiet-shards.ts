// Contention on quiet shards: what reading on past a refused pair (READ_ON_SHARDS, on shards that
// refill a request no faster than once per QUIET_SHARD_MS; src/shared/shards/overload.ts) costs
// under overload. Per-minute limits (capacity = rate), token bucket and exact sliding window,
// sharded as the sizing rule says for the peak (src/shared/metrics/heat.ts, `planFor`), run in
// the independent contention model (bench/contention/check.ts) at 150, 300 and 1,000 % load with
// 25, 50 and 100 ms mutations, 150 s of arrivals (two and a half windows, so an exact window's
// tokens come back where they were taken), summed over the seeds. Run:
//
//   node tools/run.mjs bench/contention/quiet-shards.ts [--seeds 1,2,3,4]
//
// The figures without reading on come from the same command with READ_ON_SHARDS set to 0.
import { checkCell } from "./check.js";
import { planFor } from "../../src/shared/metrics/heat.js";
import { QUIET_SHARD_MS, READ_ON_SHARDS } from "../../src/shared/shards/overload.js";
import type { RateLimitConfig } from "../../src/shared/shapes/validators.js";
import { UsageError } from "../../tools/usage.js";
import { num, table } from "../table.js";

const MINUTE = 60_000;
const RATES_PER_MINUTE = [600, 3000, 6000];
const MUTATION_MS = [25, 50, 100];
const LOADS = [1.5, 3, 10];
const SECONDS = 150;

function seedsOf(args: readonly string[]): number[] {
  const i = args.indexOf("--seeds");
  if (i < 0) return [1, 2, 3, 4];
  const seeds = (args[i + 1] ?? "").split(",").map(Number);
  if (seeds.length === 0 || !seeds.every((s) => Number.isInteger(s) && s > 0)) {
    throw new UsageError(`--seeds: a comma-separated list of whole numbers > 0, got ${args[i + 1] ?? "nothing"}`);
  }
  return seeds;
}

export async function main(args: string[]): Promise<void> {
  const seeds = seedsOf(args);
  console.log(`Quiet shards: a refused pair reads up to ${READ_ON_SHARDS} more when its shards refill a request no faster`);
  console.log(`than once per ${num(QUIET_SHARD_MS)} ms. Rule-sized per-minute limits in bench/contention/check.ts's model,`);
  console.log(`${SECONDS} s per cell, seeds ${seeds.join(", ")} summed.`);
  const rows: string[][] = [];
  for (const kind of ["token bucket", "sliding window"] as const) {
    for (const perMinute of RATES_PER_MINUTE) {
      for (const mutationMs of MUTATION_MS) {
        for (const load of LOADS) {
          const qps = (load * perMinute) / 60;
          const plan = planFor({ qps, rate: perMinute / 60, capacity: perMinute, mutationMs });
          if (plan.mode !== "transactionally" || plan.shards === 1) continue;
          const config: RateLimitConfig = { kind, rate: perMinute, period: MINUTE, shards: plan.shards };
          const every = (MINUTE * plan.shards) / perMinute;
          const sum = { requests: 0, failed: 0, attempts: 0 };
          for (const seed of seeds) {
            const s = checkCell(config, { qps, seconds: SECONDS, serviceMs: mutationMs, maxRetries: 4, backoffMs: 10, stalenessMs: 100, applyEveryMs: 50, seed });
            sum.requests += s.requests;
            sum.failed += s.failed;
            sum.attempts += s.attempts;
          }
          rows.push([
            kind === "sliding window" ? "exact sliding window" : kind,
            `${num(perMinute)}/min`,
            `${mutationMs} ms`,
            `${(load * 100).toFixed(0)}%`,
            String(plan.shards),
            num(every),
            every >= QUIET_SHARD_MS ? "yes" : "no",
            num(sum.requests),
            `${((100 * sum.failed) / sum.requests).toFixed(3)}%`,
            (sum.attempts / sum.requests).toFixed(3),
          ]);
        }
      }
    }
  }
  console.log(
    table(
      [
        { title: "kind" },
        { title: "limit", right: true },
        { title: "mutation", right: true },
        { title: "load", right: true },
        { title: "shards", right: true },
        { title: "ms/token", right: true },
        { title: "quiet" },
        { title: "requests", right: true },
        { title: "failed", right: true },
        { title: "attempts/req", right: true },
      ],
      rows,
    ),
  );
  console.log(`ms/token: how often a shard refills a token; quiet: whether a refused pair reads on there.`);
}
