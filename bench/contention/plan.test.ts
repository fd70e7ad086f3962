// The sizing rule as `npm run simulate -- --plan` prints it and docs/hot-limits.md shows it: the docs' table is the rule's, cell for cell; the targets a checked cell is judged by; and the recommendation simulate prints.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { planFor } from "../../src/shared/metrics/heat.js";
import { meetsTargets, PLAN_QPS, PLAN_SERVICE_MS, planText, recommendation, ruleTable } from "./plan.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The rows of the table under docs/hot-limits.md's "The rule's table" line: [QPS, cells…]. */
function docsRuleTable(): string[][] {
  const doc = readFileSync(join(root, "docs/hot-limits.md"), "utf8");
  const start = doc.indexOf("The rule's table, by `npm run simulate -- --plan`");
  const lines = doc.slice(start).split("\n");
  const first = lines.findIndex((l) => l.startsWith("| peak QPS"));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(line.split("|").slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

describe("the docs' table of the rule", () => {
  test("is the rule's, for every peak QPS and mutation time --plan prints", () => {
    const expected = PLAN_QPS.map((qps) => [qps.toLocaleString("en-US"), ...PLAN_SERVICE_MS.map((ms) => planText(planFor({ qps, rate: qps / 0.9, mutationMs: ms })))]);
    expect(docsRuleTable()).toEqual(expected);
    // And --plan prints the same cells.
    for (const row of expected) for (const cell of row.slice(1)) expect(ruleTable()).toContain(cell);
  });
});

describe("the targets a checked cell is judged by", () => {
  const cell = { requests: 1000, admitted: 700, failedShare: 0, refusedShare: 0.3, overAdmission: 0, attempts: 1000 };
  const tx = planFor({ qps: 200, rate: 200 / 1.5, mutationMs: 25 });
  const async = planFor({ qps: 200, rate: 200 / 3, mutationMs: 50 });

  test.each([
    // [why, plan, cell, allowed, met]
    ["transactional, 1 % failed: met", tx, { ...cell, failedShare: 0.01 }, 700, true],
    ["transactional, just over 1 %: missed", tx, { ...cell, failedShare: 0.0101 }, 700, false],
    ["asynchronous, none failed, within its bound, 99 % of the allowance: met", async, { ...cell, admitted: 693, overAdmission: 2, bound: { value: 2 } }, 700, true],
    ["asynchronous, one failure: missed", async, { ...cell, failedShare: 0.001, bound: { value: 2 } }, 700, false],
    ["asynchronous, over its bound: missed", async, { ...cell, overAdmission: 3, bound: { value: 2 } }, 700, false],
    ["asynchronous, under 99 % of the allowance: missed", async, { ...cell, admitted: 692, bound: { value: 2 } }, 700, false],
  ] as const)("%s", (_why, plan, c, allowed, met) => {
    expect(meetsTargets(plan, c, allowed)).toBe(met);
  });
});

describe("the recommendation simulate prints", () => {
  test("transactional: the shards, and the rule's duty", () => {
    expect(recommendation(200, 200 / 0.9, 50)).toBe(
      "200 QPS, rate 222/s, 50 ms mutations: transactional over 50 shards (200 writes/s at the peak, ≤ 0.2 writes per shard per mutation time), or asynchronous unsharded if a bounded overshoot is acceptable.",
    );
  });
  test("asynchronous: the shards an exact limit would need, and the longest limited transaction that fits one", () => {
    // 250 shards of a 333-token bucket would hold 1.3 each; 166 of 2 fit, for mutations of 33 ms.
    expect(recommendation(1000, 1000 / 3, 50)).toBe(
      "1,000 QPS, rate 333/s, 50 ms mutations: asynchronous, unsharded. An exact (transactional) limit would need 250 shards (1,000 writes/s at the peak), each under 2 tokens; it fits with a limited transaction of ≤ 33 ms (decide in a short mutation, do the work later: --decide-ms).",
    );
  });
});
