import { HOUR, MINUTE, RateLimiter } from "convex-rate-limiter";
import { components } from "./_generated/api.js";

/** The app's named limits. A misspelled name in any call below fails to compile. */
export const rateLimiter = new RateLimiter(components.rateLimiter, {
  // One user may try ten wrong passwords an hour.
  failedLogins: { kind: "token bucket", rate: 10, period: HOUR },
  // Sends: ten a minute on average, with bursts of up to three.
  sendMessage: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
  // Free-trial sign-ups across the whole app: 100 an hour.
  freeTrialSignUp: { kind: "fixed window", rate: 100, period: HOUR },
});
