// The shape of `getValue`'s heat report (src/shared/metrics/heat.ts), as a validator: the result's types
// are inferred from it.
import { v, type Infer } from "convex/values";

/**
 * How hot a limit runs, in `getValue`'s result with `details: true`: estimated admissions per
 * second on one shard, from the rows read (`samples` of them), beside the most the sizing rule
 * allows for mutations of `mutationMs` ms; `hot` when over it, with the rule's recommendation
 * (`applyUpdates` and `shards`) for the estimated traffic. See `heatOf` and docs/hot-limits.md.
 */
export const heatValidator = v.object({
  writesPerShard: v.number(),
  samples: v.number(),
  mutationMs: v.number(),
  maxWritesPerShard: v.number(),
  hot: v.boolean(),
  recommend: v.optional(v.object({ applyUpdates: v.union(v.literal("transactionally"), v.literal("asynchronously")), shards: v.number() })),
});
export type HeatReport = Infer<typeof heatValidator>;
