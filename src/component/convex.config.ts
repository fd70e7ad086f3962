import { defineComponent } from "convex/server";

/** The rate limiter component. Install it with `app.use(rateLimiter)` in `convex/convex.config.ts`. */
const component = defineComponent("rateLimiter");

export default component;
