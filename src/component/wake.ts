// Waking the applier (src/component/applier.ts) after takes are recorded: its own module, so the
// store can wake it without importing the applier, which imports the store.
import { ping } from "@convex-dev/batch-worker";
import { components, internal } from "./_generated/api.js";
import type { MutationCtx } from "./_generated/server.js";

/** The name of the applier's batch-worker loop. */
export const APPLIER = "applier";

/** wakeApplier makes sure the applier's loop is running; a no-op read while it is. */
export async function wakeApplier(ctx: Pick<MutationCtx, "runQuery" | "runMutation">): Promise<void> {
  await ping(ctx, components.batchWorker, {
    name: APPLIER,
    workQuery: internal.applier.getBatch,
    workerMutation: internal.applier.applyBatch,
  });
}
