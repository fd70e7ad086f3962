// The applier: folds the takes that asynchronous limits record (`pendingTakes`) into their rows
// (`rateLimits`), in the background. `@convex-dev/batch-worker` runs the loop: one loop at a time,
// the batch read on a snapshot (so recording takes never conflicts with reading them), restarted
// if it dies. Each batch is applied and its takes deleted in one transaction, so every take is
// applied exactly once, however often the loop restarts.
import { defineBatchWorkerValidators } from "@convex-dev/batch-worker";
import { v } from "convex/values";
import { applyFlow } from "../shared/flow/apply.js";
import { keyIdOf, runPlanAsync } from "../shared/shapes/rows.js";
import { pendingTakeFields } from "../shared/shapes/stored.js";
import type { Id } from "./_generated/dataModel.js";
import { internalMutation, internalQuery } from "./_generated/server.js";
import { deleteDocs, readKey, takeExists, takesFrom, writeKey } from "./store.js";

/** The most takes one batch applies: well inside a transaction's limits on reads and writes. */
export const APPLY_BATCH = 256;

const { vQueryArgs, vQueryReturns, vMutationArgs, vMutationReturns } = defineBatchWorkerValidators({
  batch: {
    takes: v.array(v.object({ id: v.id("pendingTakes"), ...pendingTakeFields })),
  },
});

/** Returns the next takes to apply, in commit order from the cursor, or `idle`. */
export const getBatch = internalQuery({
  args: vQueryArgs,
  returns: vQueryReturns,
  handler: async (ctx, { cursor }) => {
    const docs = await takesFrom(ctx.db, cursor ?? 0n, APPLY_BATCH);
    if (docs.length === 0) return { kind: "idle" as const };
    return {
      kind: "work" as const,
      batch: {
        takes: docs.map((d) => ({
          id: d._id,
          name: d.name,
          ...(d.key === undefined ? {} : { key: d.key }),
          shard: d.shard,
          count: d.count,
          ts: d.ts,
          config: d.config,
        })),
      },
      cursor: docs[docs.length - 1]!.committedAt,
    };
  },
});

/**
 * Applies a batch of takes: for each key, its rows are read and rewritten by `applyFlow`, and the
 * takes deleted. A take already gone (applied by an earlier run, or discarded by a reset or
 * `clearAll`) is skipped, so nothing is applied twice and nothing discarded comes back.
 */
export const applyBatch = internalMutation({
  args: vMutationArgs,
  returns: vMutationReturns,
  handler: async (ctx, { takes }) => {
    const byKey = new Map<string, typeof takes>();
    for (const take of takes) {
      if (!(await takeExists(ctx.db, take.id))) continue;
      const id = keyIdOf(take);
      byKey.set(id, [...(byKey.get(id) ?? []), take]);
    }
    const now = Date.now();
    for (const group of byKey.values()) {
      // The latest take's config is the key's current one.
      const latest = group.reduce((a, b) => (b.ts >= a.ts ? b : a));
      const args = { name: latest.name, ...(latest.key === undefined ? {} : { key: latest.key }), config: latest.config };
      const ops = await runPlanAsync(applyFlow<Id<"rateLimits">>(args, group, now), (q) => readKey(ctx.db, args, q));
      await writeKey(ctx, args, ops);
      await deleteDocs(ctx.db, group.map((take) => take.id));
    }
    return null;
  },
});
