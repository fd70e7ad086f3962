/* eslint-disable */
/**
 * Generated `api` utility.
 *
 * THIS CODE IS AUTOMATICALLY GENERATED.
 *
 * To regenerate, run `npx convex dev`.
 * @module
 */

import type * as admin from "../admin.js";
import type * as applier from "../applier.js";
import type * as leases from "../leases.js";
import type * as lib from "../lib.js";
import type * as metrics from "../metrics.js";
import type * as overrides from "../overrides.js";
import type * as runs from "../runs.js";
import type * as store from "../store.js";
import type * as storeMetrics from "../storeMetrics.js";
import type * as storeRuns from "../storeRuns.js";
import type * as wake from "../wake.js";

import type {
  ApiFromModules,
  FilterApi,
  FunctionReference,
} from "convex/server";
import { anyApi, componentsGeneric } from "convex/server";

const fullApi: ApiFromModules<{
  admin: typeof admin;
  applier: typeof applier;
  leases: typeof leases;
  lib: typeof lib;
  metrics: typeof metrics;
  overrides: typeof overrides;
  runs: typeof runs;
  store: typeof store;
  storeMetrics: typeof storeMetrics;
  storeRuns: typeof storeRuns;
  wake: typeof wake;
}> = anyApi as any;

/**
 * A utility for referencing Convex functions in your app's public API.
 *
 * Usage:
 * ```js
 * const myFunctionReference = api.myModule.myFunction;
 * ```
 */
export const api: FilterApi<
  typeof fullApi,
  FunctionReference<any, "public">
> = anyApi as any;

/**
 * A utility for referencing Convex functions in your app's internal API.
 *
 * Usage:
 * ```js
 * const myFunctionReference = internal.myModule.myFunction;
 * ```
 */
export const internal: FilterApi<
  typeof fullApi,
  FunctionReference<any, "internal">
> = anyApi as any;

export const components = componentsGeneric() as unknown as {
  batchWorker: import("@convex-dev/batch-worker/_generated/component.js").ComponentApi<"batchWorker">;
};
