// #region limits
import {
  DAY,
  HOUR,
  MINUTE,
  RateLimiter,
  SECOND,
  type RateLimitConfig,
} from "convex-rate-limiter";
import { components } from "./_generated/api.js";

// #region hotFeed
/**
 * The public feed, loaded by every visitor: 300 a second for the whole app (no key). Asynchronous:
 * decided on a stale snapshot, whose reads don't conflict, while a quarter of the bucket is left;
 * nearer the limit, refused on that snapshot while others are taking (the excess is shed, not
 * failed), and decided exactly when no one else is.
 */
const hotFeed: RateLimitConfig = {
  kind: "token bucket",
  rate: 300,
  period: SECOND,
  applyUpdates: "asynchronously",
};
// #endregion hotFeed

/** The app's named limits. A misspelled name in any call below fails to compile. */
export const rateLimiter = new RateLimiter(components.rateLimiter, {
  freeTrialSignUp: { kind: "fixed window", rate: 100, period: HOUR }, // 100 an hour, app-wide (no key)
  sendMessage: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 }, // per sender, bursts of 3
  // One account may see ten wrong passwords an hour (keyed by account name); the guess that uses
  // the tenth locks the account for a day.
  failedLogins: { kind: "token bucket", rate: 10, period: HOUR, lockout: DAY },
  // #region signInsPerAddress
  // Sign-in attempts per address (logins.ts keys them with requestKey), right or wrong: 100 an
  // hour, enough for an office behind one address; the attempt that uses the hundredth bans the
  // address for a day (an automatic ban). With allow and deny lists by network: the admin page
  // blocks a network, or exempts one (networks: true costs each attempt one indexed read).
  signInsPerAddress: { kind: "token bucket", rate: 100, period: HOUR, lockout: DAY, networks: true },
  // #endregion signInsPerAddress
  // The LLM provider's budget: 40k tokens a minute; work may be queued up to 5 minutes ahead.
  // With metrics: the admin page charts what it admits, reserves and refuses each minute.
  llmTokens: { kind: "token bucket", rate: 40_000, period: MINUTE, maxReserved: 200_000, metrics: true },
  // Each user's LLM requests (see llm.ts): 20 an hour on the free plan, never queued (maxReserved
  // 0: refused, not reserved). The "pro" tier gets ten times this by an override
  // (admin.seedPlanOverrides), which the app can change without a deploy.
  llmRequests: { kind: "token bucket", rate: 20, period: HOUR, maxReserved: 0 },
  // Each user's LLM plan by the calendar: 1,000 requests a month, from the 1st (UTC) until the
  // user's own billing day and zone are set (llm.setBillingCycle). Never queued: a calendar quota
  // takes only what its month has left.
  llmMonthly: { kind: "calendar", rate: 1000, period: "month" },
  // A hot global limit, hit by every API call (100 a second): spread over 10 rows, so concurrent
  // calls rarely write the same one.
  apiCalls: { kind: "token bucket", rate: 100, period: SECOND, shards: 10 },
  // Invitations: 20 a day per user, and, for everyone together, the email provider's limit of
  // 100 outgoing emails in any hour: an exact sliding window (the default), which never lets more
  // than 100 out in any hour, as the provider counts them; each email's slot comes back an hour
  // after it was sent. Other emails wait for it instead of being refused (emails.ts:
  // runWhenAllowed schedules each at the first instant the window has room).
  invitesPerUser: { kind: "token bucket", rate: 20, period: DAY },
  outboundEmails: { kind: "sliding window", rate: 100, period: HOUR },
  // A partner's webhook takes at most 10 calls a minute: webhooks.ts waits its turn in an action.
  partnerWebhooks: { kind: "token bucket", rate: 10, period: MINUTE },
  // An HTTP API: 5 requests a minute per API key (see http.ts), with metrics (which keys are
  // refused most), and a tighter burst limit being tried as a dry run: it logs whom it would
  // refuse, and refuses no one, until dryRun goes.
  apiKeyRequests: { kind: "token bucket", rate: 5, period: MINUTE, metrics: true },
  apiKeyBurst: { kind: "token bucket", rate: 2, period: 10 * SECOND, dryRun: true },
  // The public feed: hundreds of requests a second on one key, in asynchronous mode (`hotFeed`
  // is defined above).
  hotFeed,
  // At most 2 LLM generations in flight per user (see generations.ts). A generation that
  // crashes without releasing its slot frees it by itself 2 minutes after it started.
  llmGenerations: { kind: "concurrency", capacity: 2, lease: 2 * MINUTE },
});
// #endregion limits
