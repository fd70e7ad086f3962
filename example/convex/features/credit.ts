// Credit (README, "Reservations"): a model call takes its estimated tokens from the budget up
// front, and gives back what the answer didn't use.
// #region credit
import { v } from "convex/values";
import { MINUTE, RateLimiter } from "convex-rate-limiter";
import { components } from "../_generated/api.js";
import { internalAction } from "../_generated/server.js";

const rateLimiter = new RateLimiter(components.rateLimiter, {
  modelTokens: { kind: "token bucket", rate: 40_000, period: MINUTE }, // the model provider's budget
});

/** The tokens a summary is assumed to use until the model says how many it did. */
const ESTIMATE = 4_000;

/** summarize summarizes `text`; throws a `RateLimited` error while the budget can't cover the estimate. */
export const summarize = internalAction({
  args: { text: v.string() },
  returns: v.string(),
  handler: async (ctx, { text }) => {
    await rateLimiter.limit(ctx, "modelTokens", { count: ESTIMATE, throws: true });
    const { summary, tokensUsed } = await callModel(text);
    const unused = ESTIMATE - tokensUsed;
    if (unused > 0) await rateLimiter.credit(ctx, "modelTokens", { count: unused });
    return summary;
  },
});

/** callModel stands for the provider's API, which reports the tokens the call used. */
async function callModel(text: string): Promise<{ summary: string; tokensUsed: number }> {
  return { summary: text.slice(0, 200), tokensUsed: 500 + Math.ceil(text.length / 4) };
}
// #endregion credit
