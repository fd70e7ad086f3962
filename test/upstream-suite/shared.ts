// Stands in for upstream's src/shared.ts: the names its tests import, from our modules.
export { calculateRateLimit, configValidator } from "../../src/client/index.js";
export type { GetValueReturns, RateLimitConfig } from "../../src/client/index.js";
