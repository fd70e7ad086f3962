// Shared convex-test setup. `makeTest` registers the rate limiter through the published
// register() helper, the way a user's tests do it; `makeInspectableTest` registers it by hand, next
// to test-only functions that read its tables, write rows the API never would and restart its
// applier. `errorOf` and `convexErrorData` catch what a call that must fail fails with.
import { convexTest } from "convex-test";
import { componentsGeneric, defineSchema, type FunctionReference, type GenericSchema, type SchemaDefinition } from "convex/server";
import batchWorker from "@convex-dev/batch-worker/test";
import { modules, register, schema } from "../src/test.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
import type { Doc } from "../src/component/_generated/dataModel.js";
import { components as children } from "../src/component/_generated/api.js";
import { mutation, query } from "../src/component/_generated/server.js";
import { ConvexError, v } from "convex/values";
import { storedRowFields, type StoredRow } from "../src/shared/shapes/stored.js";

const appModules = import.meta.glob("./app/**/*.ts");

/**
 * A convex-test instance of the test app (test/app) with the component registered as
 * `rateLimiter`; `appSchema` is the app's own schema, for apps with tables (default: none).
 */
export function makeTest(appSchema: SchemaDefinition<GenericSchema, boolean> = defineSchema({})) {
  const t = convexTest(appSchema, appModules);
  register(t);
  return t;
}

/** `components.rateLimiter`, as an app's generated API would give it. */
export const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };

// Test-only functions, registered inside the component next to its own modules: they list its
// tables, write rows the API never would and restart its applier.
const inspect = {
  rows: query({ args: {}, handler: async (ctx) => ctx.db.query("rateLimits").collect() }),
  /** Restarts the applier's loop from scratch, as the batch worker's monitor does after a crash. */
  kickApplier: mutation({
    args: {},
    handler: async (ctx) => {
      await ctx.runMutation(children.batchWorker.lib.kick, { name: "applier" });
    },
  }),
  /** Lists the takes recorded by asynchronous limits and not yet applied. */
  pending: query({ args: {}, handler: async (ctx) => ctx.db.query("pendingTakes").collect() }),
  /** Inserts a row as @convex-dev/rate-limiter writes them (no layout recorded). */
  insertUpstreamRow: mutation({
    args: { name: v.string(), shard: v.number(), value: v.number(), ts: v.number() },
    handler: async (ctx, args) => {
      await ctx.db.insert("rateLimits", args);
    },
  }),
  /** Inserts a row with any stored fields, e.g. one an earlier version wrote with its terms in full. */
  insertRow: mutation({
    args: { name: v.string(), key: v.optional(v.string()), ...storedRowFields },
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

/** A take as the applier's batch carries it. */
type ApplierTake = Omit<Doc<"pendingTakes">, "_id" | "_creationTime" | "committedAt"> & { id: Doc<"pendingTakes">["_id"] };

/**
 * The component's API, with its internal `applier.applyBatch`, plus the test-only `inspect`
 * functions of {@link makeInspectableTest}.
 */
export const inspectable = componentsGeneric() as unknown as {
  rateLimiter: ComponentApi & {
    inspect: {
      rows: FunctionReference<"query", "internal", Record<string, never>, Doc<"rateLimits">[]>;
      pending: FunctionReference<"query", "internal", Record<string, never>, Doc<"pendingTakes">[]>;
      kickApplier: FunctionReference<"mutation", "internal", Record<string, never>, null>;
      corrupt: FunctionReference<"mutation", "internal", { value: number; ts: number }, null>;
      insertUpstreamRow: FunctionReference<
        "mutation",
        "internal",
        { name: string; shard: number; value: number; ts: number },
        null
      >;
      insertRow: FunctionReference<"mutation", "internal", { name: string; key?: string } & StoredRow, null>;
    };
    applier: {
      applyBatch: FunctionReference<"mutation", "internal", { takes: ApplierTake[] }, null>;
    };
  };
};

/**
 * A convex-test instance with the component and its batch worker registered by hand, with the
 * test-only `inspect` functions among the component's modules.
 */
export function makeInspectableTest() {
  const t = convexTest(defineSchema({}), appModules);
  t.registerComponent("rateLimiter", schema, { ...modules, "./component/inspect.ts": async () => inspect });
  batchWorker.register(t, "rateLimiter/batchWorker");
  return t;
}

/**
 * errorOf returns the error `action` fails with: what a promise rejects with, or what a function
 * throws (or its promise rejects with). It fails the test if `action` succeeds.
 */
export async function errorOf(action: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof action === "function" ? action() : action);
  } catch (error) {
    return error;
  }
  throw new Error("expected an error, but the call succeeded");
}

/**
 * convexErrorData returns the `data` of the `ConvexError` that `action` fails with (see
 * {@link errorOf}). It fails the test if `action` succeeds, and rethrows any other error.
 */
export async function convexErrorData(action: Promise<unknown> | (() => unknown)): Promise<unknown> {
  const error = await errorOf(action);
  if (error instanceof ConvexError) return error.data;
  throw error;
}
