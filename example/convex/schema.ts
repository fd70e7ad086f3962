// #region schema
import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";
import { planValidator } from "./plans.js";

/**
 * The example app's tables. The rate limiter keeps its own state inside the component, so none of
 * these hold rate-limit data.
 */
export default defineSchema({
  /**
   * Accounts, created by `signups.signUp` and read by `logins.logIn`. A toy: real apps store a
   * password hash (or use an auth provider), never the password.
   */
  users: defineTable({ name: v.string(), password: v.string() }).index("name", ["name"]),
  // #region messagesTable
  /** Chat messages, written by `messages.send`. `author` is the key the sender was limited by. */
  messages: defineTable({ author: v.string(), body: v.string() }),
  // #endregion messagesTable
  // #region llmJobsTable
  /**
   * LLM requests, written by `llm.request` and stamped by `llm.generate` when the scheduled work
   * runs. Times are ms since the epoch.
   */
  llmJobs: defineTable({
    /** Who asked: the signed-in user's `tokenIdentifier`. */
    user: v.string(),
    prompt: v.string(),
    tokens: v.number(),
    /** When the request was made. */
    requestedAt: v.number(),
    /** The earliest instant the limiter promised the tokens for: `requestedAt + retryAfter`. */
    notBefore: v.number(),
    /** When the work ran; unset until then. */
    ranAt: v.optional(v.number()),
    /** Tokens the work really used, once settled (`llm.settle`); the rest went back to the budget. */
    used: v.optional(v.number()),
  }),
  // #endregion llmJobsTable
  // #region generationsTable
  /**
   * LLM generations, at most 2 in flight per user: inserted by `generations.start` with the lease
   * of their slot, finished (`finishedAt`) by `generations.finish`, which releases the slot.
   */
  generations: defineTable({
    user: v.string(),
    prompt: v.string(),
    /** The lease of the generation's slot (`RateLimiter.acquire`). */
    lease: v.string(),
    /** When the generation's action finished, or failed; unset while it runs (or if it crashed). */
    finishedAt: v.optional(v.number()),
    /** The model's answer, once finished. */
    answer: v.optional(v.string()),
  }).index("user", ["user"]),
  // #endregion generationsTable
  // #region plansTable
  /**
   * Each user's plan, keyed by the signed-in user's `tokenIdentifier`: written by `admin.setPlan`,
   * read by `llm.request`, which names the user's tier ("pro") to the rate limiter. No row: free.
   */
  plans: defineTable({ user: v.string(), plan: planValidator }).index("user", ["user"]),
  // #endregion plansTable
  /**
   * Outbound emails, queued by `emails.queue` behind the provider's limit (`runWhenAllowed`), one
   * per email: `runAt` is when it is scheduled to go and `runId` its run (for `cancelRun`); sent by
   * `emails.deliver` (`sentAt`), or cancelled by `emails.cancel`. `session` is the visitor's.
   */
  emails: defineTable({
    session: v.string(),
    to: v.string(),
    subject: v.string(),
    status: v.union(v.literal("queued"), v.literal("sent"), v.literal("cancelled")),
    runAt: v.optional(v.number()),
    runId: v.optional(v.string()),
    sentAt: v.optional(v.number()),
  }).index("session", ["session"]),
  /** Calls of the partner's webhook, written by `webhooks.record` once `webhooks.notify` had its turn. */
  webhookCalls: defineTable({ event: v.string(), at: v.number() }),
  // #region invitesTable
  /** Invitations, written by `invites.send`. */
  invites: defineTable({ from: v.string(), email: v.string() }).index("from_email", ["from", "email"]),
  // #endregion invitesTable
});
// #endregion schema
