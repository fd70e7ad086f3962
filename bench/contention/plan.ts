// The sizing rule in `npm run simulate` (src/shared/metrics/heat.ts): the recommendation for the command
// line's QPS and mutation time, printed by every run; and `--plan`, the rule's table over peak QPS ×
// mutation time, then each of its cells run in the model at 90 %, 150 % and 300 % load with the
// mode and shards the rule gives (the targets of issue 40). The cells are cell.ts's, as every
// section's.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { planFor, SHARD_DUTY, MIN_SHARD_TOKENS, type SizingPlan as Plan } from "../../src/shared/metrics/heat.js";
import { num, pct, share, table } from "../table.js";
import { runCell, type Cell, type CellSettings } from "./cell.js";

/** The peak QPS the rule's table covers. */
export const PLAN_QPS = [10, 50, 100, 200, 500, 1000];
/** The mutation times (ms) the rule's table covers. */
export const PLAN_SERVICE_MS = [10, 25, 50, 100];
/** The loads each checked cell runs at: 90 %, 150 % and 300 % of the limit's rate. */
export const PLAN_LOADS = [0.9, 1.5, 3];

/** What a checked cell measured (the fields its targets read). */
export type PlanCell = Pick<Cell, "requests" | "admitted" | "failedShare" | "refusedShare" | "overAdmission" | "attempts"> & { bound?: { value: number } };

/** A plan in a few words: "20 shards" or "async, unsharded (exact: 200 shards, ≤ 31 ms)". */
export function planText(plan: Plan): string {
  if (plan.mode === "transactionally") return `${plan.shards} shard${plan.shards === 1 ? "" : "s"}`;
  return `async (exact: ${plan.exactShards} shards, or ≤ ${plan.exactMutationMs} ms)`;
}

/**
 * The recommendation for `qps` against a limit of `rate` per second with mutations of `serviceMs`,
 * as simulate prints it for the command line's numbers.
 */
export function recommendation(qps: number, rate: number, serviceMs: number): string {
  const plan = planFor({ qps, rate, mutationMs: serviceMs });
  const writes = `${num(plan.writesPerSecond, 0)} writes/s at the peak`;
  if (plan.mode === "transactionally") {
    return (
      `${num(qps)} QPS, rate ${num(rate, 0)}/s, ${serviceMs} ms mutations: transactional over ${plan.shards} ` +
      `shard${plan.shards === 1 ? "" : "s"} (${writes}, ≤ ${SHARD_DUTY} writes per shard per mutation time), or asynchronous unsharded ` +
      `if a bounded overshoot is acceptable.`
    );
  }
  return (
    `${num(qps)} QPS, rate ${num(rate, 0)}/s, ${serviceMs} ms mutations: asynchronous, unsharded. An exact (transactional) limit ` +
    `would need ${plan.exactShards} shards (${writes}), each under ${MIN_SHARD_TOKENS} tokens; it fits with a limited ` +
    `transaction of ≤ ${plan.exactMutationMs} ms (decide in a short mutation, do the work later: --decide-ms).`
  );
}

/** The rule's table: for each mutation time, each peak QPS's plan (rate = QPS / 0.9, capacity = rate). */
export function ruleTable(qpsList: readonly number[] = PLAN_QPS, serviceList: readonly number[] = PLAN_SERVICE_MS): string {
  return table(
    [{ title: "peak QPS", right: true }, ...serviceList.map((s) => ({ title: `${s} ms`, right: true }))],
    qpsList.map((qps) => [num(qps), ...serviceList.map((s) => planText(planFor({ qps, rate: qps / 0.9, mutationMs: s })))]),
  );
}

/** One checked cell of `--plan`: the rule's plan at one QPS, mutation time and load, and what it measured. */
export type PlanRow = { qps: number; serviceMs: number; load: number; rate: number; plan: Plan; cell: PlanCell; allowed: number; ok: boolean };

/**
 * Whether a cell meets issue 40's targets: transactional failed ≤ 1 %; asynchronous failed none,
 * over-admission within its bound, and ≥ 99 % of what the rate allows admitted (when the load
 * exceeds it).
 */
export function meetsTargets(plan: Plan, cell: PlanCell, allowed: number): boolean {
  if (plan.mode === "transactionally") return cell.failedShare <= 0.01;
  const admittedShare = cell.admitted / Math.min(allowed, cell.requests);
  return cell.failedShare === 0 && cell.overAdmission <= (cell.bound?.value ?? 0) + 1e-9 && admittedShare >= 0.99;
}

/** Runs the rule's plan for every QPS × mutation time × load. */
export async function planRows(
  settings: CellSettings,
  args: { qps: readonly number[]; serviceMs: readonly number[]; loads: readonly number[]; seconds: number },
): Promise<PlanRow[]> {
  const rows: PlanRow[] = [];
  for (const serviceMs of args.serviceMs) {
    for (const qps of args.qps) {
      for (const load of args.loads) {
        const rate = qps / load;
        const plan = planFor({ qps, rate, mutationMs: serviceMs });
        const mode = plan.mode === "transactionally" ? "transactional" : "asynchronous";
        const cell = await runCell("ours", mode, { qps, shards: plan.shards, rate }, { ...settings, serviceMs });
        if (!cell) continue;
        const allowed = rate + rate * args.seconds;
        rows.push({ qps, serviceMs, load, rate, plan, cell, allowed, ok: meetsTargets(plan, cell, allowed) });
      }
    }
  }
  return rows;
}

/** The checked cells as a table. */
export function planRowsTable(rows: readonly PlanRow[]): string {
  return table(
    [
      { title: "mutation", right: true },
      { title: "QPS", right: true },
      { title: "load", right: true },
      { title: "plan" },
      { title: "failed", right: true },
      { title: "refused", right: true },
      { title: "attempts/req", right: true },
      { title: "over (bound)", right: true },
      { title: "admitted of allowed", right: true },
      { title: "target" },
    ],
    rows.map((r) => [
      `${r.serviceMs} ms`,
      num(r.qps),
      pct(r.load, 0),
      r.plan.mode === "transactionally" ? `transactional, ${r.plan.shards}` : "asynchronous, 1",
      share(r.cell.failedShare),
      share(r.cell.refusedShare),
      num(r.cell.attempts / r.cell.requests, 2),
      r.cell.bound ? `${num(r.cell.overAdmission, 1)} (${num(r.cell.bound.value, 1)})` : num(r.cell.overAdmission, 1),
      r.load > 1 ? pct(r.cell.admitted / Math.min(r.allowed, r.cell.requests), 1) : "—",
      r.ok ? "met" : "MISSED",
    ]),
  );
}

/**
 * `--plan`: prints the rule's table, then runs its cells at each load for `opts.qps` (200 and 1,000
 * unless --qps was given) and prints them; writes simulate-plan.json to `opts.out` unless --no-write.
 */
export async function printPlan(
  opts: CellSettings & { qps: number[]; qpsGiven: boolean; out: string; write: boolean },
  started: number,
): Promise<void> {
  console.log(`\nThe sizing rule (src/shared/metrics/heat.ts), rate = QPS / 0.9, capacity = rate: shards, or asynchronous mode\n${ruleTable()}`);
  const qps = opts.qpsGiven ? opts.qps : [200, 1000];
  const rows = await planRows(opts, { qps, serviceMs: PLAN_SERVICE_MS, loads: PLAN_LOADS, seconds: opts.seconds });
  console.log(`\nThe rule's mode and shards in the model, ${opts.seconds} s per cell, seed ${opts.seed} (rate = QPS / load, capacity = rate)`);
  console.log(planRowsTable(rows));
  console.log(`\n${rows.length} runs in ${num((performance.now() - started) / 1000, 1)} s of wall time.`);
  if (opts.write) writeFileSync(path.join(opts.out, "simulate-plan.json"), JSON.stringify({ seed: opts.seed, seconds: opts.seconds, rows }, null, 2) + "\n");
}
