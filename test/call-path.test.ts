// The files one steady `limit` call runs code in, measured by V8's precise coverage around the
// call (a token bucket, unsharded, transactional, its row already written): the path a reader
// follows from `RateLimiter.limit` to the row written. A file joining the path is a decision to
// see in a diff. Before src/shared had folders (5b04955) it crossed 22: the same files but writes.ts
// (then part of view.ts), and also settle.ts (it folded an empty list of takes) and metrics.ts
// (`recordsMetrics`, now beside `isAsync`).
// Reading a module's exported binding counts (the test transform reads it through a getter): math.ts.
// @vitest-environment node
import { Session } from "node:inspector/promises";
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import type * as hooks from "./app/hooks.js";
import { makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ hooks: typeof hooks }>;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 0, 1));
});
afterEach(() => vi.useRealTimers());

/** The files of src/ (client, component, react, shared) whose functions ran during `call`, each with the functions that ran. */
async function filesRunBy(call: () => Promise<unknown>): Promise<Map<string, string[]>> {
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
    // Taking coverage resets the counts: what follows counts only the call.
    await session.post("Profiler.takePreciseCoverage");
    await call();
    const { result } = await session.post("Profiler.takePreciseCoverage");
    const files = new Map<string, string[]>();
    for (const script of result) {
      const file = /\/(src\/(?:client|component|react|shared)\/[^?]*)/.exec(script.url)?.[1];
      if (file === undefined) continue;
      // A module's own top-level code (the function at offset 0) ran when it loaded, not in the call.
      const ran = script.functions.filter((f) => f.ranges[0]!.startOffset > 0 && f.ranges[0]!.count > 0);
      if (ran.length > 0) files.set(file, ran.map((f) => f.functionName || "(anonymous)"));
    }
    return files;
  } finally {
    session.disconnect();
  }
}

test("one steady limit call runs code in these 21 files", async () => {
  const t = makeTest();
  // The first calls load the modules and write the key's row; the third is the steady call.
  await t.mutation(api.hooks.take, { key: "k" });
  await t.mutation(api.hooks.take, { key: "k" });
  const files = await filesRunBy(() => t.mutation(api.hooks.take, { key: "k" }));
  expect([...files.keys()].sort()).toEqual([
    "src/client/rate-limiter.ts",
    "src/client/request-key.ts",
    "src/client/resolve.ts",
    "src/client/transaction-takes.ts",
    "src/component/lib.ts",
    "src/component/store.ts",
    "src/shared/core/math.ts",
    "src/shared/core/split.ts",
    "src/shared/flow/request.ts",
    "src/shared/flow/view.ts",
    "src/shared/flow/writes.ts",
    "src/shared/kinds/algebra.ts",
    "src/shared/kinds/state.ts",
    "src/shared/overrides/overrides.ts",
    "src/shared/shapes/rows.ts",
    "src/shared/shapes/validators.ts",
    "src/shared/shards/layout.ts",
    "src/shared/shards/plan.ts",
    "src/shared/shards/terms.ts",
    "src/shared/validation/validate-config.ts",
    "src/shared/validation/validate.ts",
  ]);
  // The measurement sees the decision itself, not only its callers.
  expect(files.get("src/shared/flow/request.ts")).toContain("requestFlow");
});
