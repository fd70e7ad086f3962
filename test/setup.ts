// Shared convex-test setup: an app with the rate limiter registered through the published
// register() helper, the way a user's tests do it.
import { convexTest } from "convex-test";
import { componentsGeneric, defineSchema } from "convex/server";
import { register } from "../src/test.js";
import type { ComponentApi } from "../src/component/_generated/component.js";

const appModules = import.meta.glob("./app/**/*.ts");

/** A convex-test instance with the component registered as `rateLimiter`. */
export function makeTest() {
  const t = convexTest(defineSchema({}), appModules);
  register(t);
  return t;
}

/** `components.rateLimiter`, as an app's generated API would give it. */
export const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };
