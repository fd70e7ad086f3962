import { defineComponent } from "convex/server";
import batchWorker from "@convex-dev/batch-worker/convex.config.js";

/** The rate limiter component. Install it with `app.use(rateLimiter)` in `convex/convex.config.ts`. */
const component = defineComponent("rateLimiter");
// Drains consumption recorded by limits with `applyUpdates: "asynchronously"` into their rows.
component.use(batchWorker);

export default component;
