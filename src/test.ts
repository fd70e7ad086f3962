/// <reference types="vite/client" />
// Registers the rate limiter component with convex-test, for apps testing code that uses it:
//
//   import rateLimiter from "convex-rate-limiter/test";
//   const t = convexTest(schema, modules);
//   rateLimiter.register(t);
//
// It loads the component's modules with `import.meta.glob`, which only vite/vitest understand,
// so this entry is shipped as TypeScript source.
import type { TestConvex } from "convex-test";
import type { GenericSchema, SchemaDefinition } from "convex/server";
import batchWorker from "@convex-dev/batch-worker/test";
import schema from "./component/schema.js";

/**
 * modules maps the component's function modules to their loaders (from `import.meta.glob`), for
 * `t.registerComponent(name, schema, modules)`.
 */
export const modules = import.meta.glob("./component/**/*.ts");

/**
 * register installs the component into a convex-test instance under `name` (default
 * `"rateLimiter"`, the name `app.use(rateLimiter)` gives it), so `components.rateLimiter` works,
 * together with the batch worker it uses as a child component (`${name}/batchWorker`).
 */
export function register(
  t: TestConvex<SchemaDefinition<GenericSchema, boolean>>,
  name: string = "rateLimiter",
): void {
  t.registerComponent(name, schema, modules);
  // The applier of asynchronous limits runs on this child component.
  batchWorker.register(t, `${name}/batchWorker`);
}

/** schema is the component's schema, for `t.registerComponent(name, schema, modules)`. */
export { schema };
/** The default export bundles {@link register}, {@link schema} and {@link modules}: `rateLimiter.register(t)`. */
export default { register, schema, modules };
