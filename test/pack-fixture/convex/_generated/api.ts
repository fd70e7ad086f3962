// A stand-in for `npx convex codegen` output (there is no deployment in a test): the typed `api`
// and `components.rateLimiter`, typed by the package's `_generated/component.js` entry.
import { anyApi, componentsGeneric } from "convex/server";
import type { ApiFromModules } from "convex/server";
import type { ComponentApi } from "convex-rate-limiter/_generated/component.js";
import type * as limits from "../limits.js";

export const api = anyApi as unknown as ApiFromModules<{ limits: typeof limits }>;

export const components = componentsGeneric() as unknown as {
  rateLimiter: ComponentApi<"rateLimiter">;
};
