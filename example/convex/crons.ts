// The app's scheduled jobs.
import { cronJobs } from "convex/server";
import { internal } from "./_generated/api.js";

const crons = cronJobs();

// #region crons
// Once a day, delete the rate-limit state of idle keys (see admin.ts).
crons.interval("clean up idle rate limits", { hours: 24 }, internal.admin.cleanupRateLimits);
// #endregion crons

export default crons;
