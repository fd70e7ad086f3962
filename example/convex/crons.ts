// The app's scheduled jobs.
// #region crons
import { cronJobs } from "convex/server";
import { internal } from "./_generated/api.js";

const crons = cronJobs();

// Once a day, delete the rate-limit state of idle keys (see admin.ts).
crons.interval("clean up idle rate limits", { hours: 24 }, internal.admin.cleanupRateLimits);

export default crons;
// #endregion crons
