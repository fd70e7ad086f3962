// The app's scheduled jobs.
// #region crons
import { cronJobs } from "convex/server";
import { internal } from "./_generated/api.js";

const crons = cronJobs();

// Once a day, delete the rate-limit state of idle keys (see admin.ts).
crons.interval("clean up idle rate limits", { hours: 24 }, internal.admin.cleanupRateLimits);
// Every minute, sum the metric events of limits with metrics into per-minute summaries.
crons.interval("fold rate-limit metrics", { minutes: 1 }, internal.admin.foldRateLimitMetrics);

export default crons;
// #endregion crons
