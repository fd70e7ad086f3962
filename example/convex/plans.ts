// Users' plans, the app's own data: `llm.request` reads the caller's and names it to the rate
// limiter as the request's tier; `admin.setPlan` changes one. The rate limiter stores no plans:
// the "pro" tier's terms are an override of `llmRequests` (`admin.seedPlanOverrides`).
// #region planOf
import { v, type Infer } from "convex/values";
import type { QueryCtx } from "./_generated/server.js";

/** A plan: "free" (the named limits) or "pro" (the "pro" tier's overrides). */
export const planValidator = v.union(v.literal("free"), v.literal("pro"));
export type Plan = Infer<typeof planValidator>;

/** planOf returns the plan of `user` (a `tokenIdentifier`): "free" unless a row says otherwise. */
export async function planOf(ctx: Pick<QueryCtx, "db">, user: string): Promise<Plan> {
  const row = await ctx.db
    .query("plans")
    .withIndex("user", (q) => q.eq("user", user))
    .unique();
  return row?.plan ?? "free";
}
// #endregion planOf
