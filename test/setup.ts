// Shared convex-test setup: an app with the rate limiter registered through the published
// register() helper, the way a user's tests do it.
import { convexTest } from "convex-test";
import { componentsGeneric, defineSchema, type FunctionReference } from "convex/server";
import { modules, register, schema } from "../src/test.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
import type { Doc } from "../src/component/_generated/dataModel.js";
import { mutation, query } from "../src/component/_generated/server.js";
import { v } from "convex/values";

const appModules = import.meta.glob("./app/**/*.ts");

/** A convex-test instance with the component registered as `rateLimiter`. */
export function makeTest() {
  const t = convexTest(defineSchema({}), appModules);
  register(t);
  return t;
}

/** `components.rateLimiter`, as an app's generated API would give it. */
export const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };

// A test-only query, registered inside the component next to its own modules, that lists its rows.
const inspect = {
  rows: query({ args: {}, handler: async (ctx) => ctx.db.query("rateLimits").collect() }),
  /** Inserts a row as @convex-dev/rate-limiter writes them (no layout recorded). */
  insertUpstreamRow: mutation({
    args: { name: v.string(), shard: v.number(), value: v.number(), ts: v.number() },
    handler: async (ctx, args) => {
      await ctx.db.insert("rateLimits", args);
    },
  }),
  /** Overwrites every row's value and ts, to model corrupt state. */
  corrupt: mutation({
    args: { value: v.number(), ts: v.number() },
    handler: async (ctx, args) => {
      for (const row of await ctx.db.query("rateLimits").collect()) await ctx.db.patch(row._id, args);
    },
  }),
};

/** The component's API plus the test-only `inspect.rows` query of {@link makeInspectableTest}. */
export const inspectable = componentsGeneric() as unknown as {
  rateLimiter: ComponentApi & {
    inspect: {
      rows: FunctionReference<"query", "internal", Record<string, never>, Doc<"rateLimits">[]>;
      corrupt: FunctionReference<"mutation", "internal", { value: number; ts: number }, null>;
      insertUpstreamRow: FunctionReference<
        "mutation",
        "internal",
        { name: string; shard: number; value: number; ts: number },
        null
      >;
    };
  };
};

/** A convex-test instance with the component registered alongside a query listing its rows. */
export function makeInspectableTest() {
  const t = convexTest(defineSchema({}), appModules);
  t.registerComponent("rateLimiter", schema, { ...modules, "./component/inspect.ts": async () => inspect });
  return t;
}

/** The error `p` rejects with; fails the test if it resolves. */
export async function thrown(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected the call to throw");
}
