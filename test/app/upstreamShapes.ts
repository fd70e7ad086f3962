// App functions that return the limiter's results through @convex-dev/rate-limiter's own result
// validators (imported from the devDependency), as apps written for it do; test/fidelity.test.ts
// calls them against ours. A result with a field upstream's shape lacks fails their validation.
import { componentsGeneric, mutationGeneric, queryGeneric } from "convex/server";
import { v, type Infer } from "convex/values";
import {
  configValidator as upstreamConfigValidator,
  getValueReturns as upstreamGetValueReturns,
  rateLimitReturns as upstreamRateLimitReturns,
} from "../../node_modules/@convex-dev/rate-limiter/src/shared.js";
import { RateLimiter } from "../../src/client/index.js";
import type { ComponentApi } from "../../src/component/_generated/component.js";

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };
const rateLimiter = new RateLimiter(components.rateLimiter);

const request = {
  config: upstreamConfigValidator,
  key: v.optional(v.string()),
  count: v.optional(v.number()),
  reserve: v.optional(v.boolean()),
};

/** limit, returned through upstream's `rateLimitReturns`. */
export const limit = mutationGeneric({
  args: request,
  returns: upstreamRateLimitReturns,
  handler: async (ctx, { config, ...options }) => rateLimiter.limit(ctx, "shape", { config, ...options }),
});

/** check, returned through upstream's `rateLimitReturns`. */
export const check = queryGeneric({
  args: request,
  returns: upstreamRateLimitReturns,
  handler: async (ctx, { config, ...options }) => rateLimiter.check(ctx, "shape", { config, ...options }),
});

/** getValue, returned through upstream's `getValueReturns`. */
export const getValue = queryGeneric({
  args: { config: upstreamConfigValidator, key: v.optional(v.string()), sampleShards: v.optional(v.number()) },
  returns: upstreamGetValueReturns,
  // Upstream's config has no sliding window, so neither does what comes back; the `returns`
  // validator checks that at run time.
  handler: async (ctx, { config, ...options }) =>
    (await rateLimiter.getValue(ctx, "shape", { config, ...options })) as Infer<typeof upstreamGetValueReturns>,
});
