// The app installs the component the way the README says, from the package's convex.config.js entry.
import { defineApp } from "convex/server";
import rateLimiter from "convex-rate-limiter/convex.config.js";

const app = defineApp();
app.use(rateLimiter);

export default app;
