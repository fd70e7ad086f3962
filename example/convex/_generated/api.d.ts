/* eslint-disable */
/**
 * Generated `api` utility.
 *
 * THIS CODE IS AUTOMATICALLY GENERATED.
 *
 * To regenerate, run `npx convex dev`.
 * @module
 */

import type {
  ApiFromModules,
  FilterApi,
  FunctionReference,
} from "convex/server";
import type * as admin from "../admin.js";
import type * as apiCalls from "../apiCalls.js";
import type * as crons from "../crons.js";
import type * as emails from "../emails.js";
import type * as features_allOrNothing from "../features/allOrNothing.js";
import type * as features_blocks from "../features/blocks.js";
import type * as features_calendar from "../features/calendar.js";
import type * as features_credit from "../features/credit.js";
import type * as features_dryRun from "../features/dryRun.js";
import type * as features_headers from "../features/headers.js";
import type * as features_leases from "../features/leases.js";
import type * as features_metrics from "../features/metrics.js";
import type * as features_tiers from "../features/tiers.js";
import type * as features_windows from "../features/windows.js";
import type * as generations from "../generations.js";
import type * as http from "../http.js";
import type * as invites from "../invites.js";
import type * as limits from "../limits.js";
import type * as llm from "../llm.js";
import type * as logins from "../logins.js";
import type * as messages from "../messages.js";
import type * as plans from "../plans.js";
import type * as playground from "../playground.js";
import type * as sessions from "../sessions.js";
import type * as signups from "../signups.js";
import type * as webhooks from "../webhooks.js";

/**
 * A utility for referencing Convex functions in your app's API.
 *
 * Usage:
 * ```js
 * const myFunctionReference = api.myModule.myFunction;
 * ```
 */
declare const fullApi: ApiFromModules<{
  admin: typeof admin;
  apiCalls: typeof apiCalls;
  crons: typeof crons;
  emails: typeof emails;
  "features/allOrNothing": typeof features_allOrNothing;
  "features/blocks": typeof features_blocks;
  "features/calendar": typeof features_calendar;
  "features/credit": typeof features_credit;
  "features/dryRun": typeof features_dryRun;
  "features/headers": typeof features_headers;
  "features/leases": typeof features_leases;
  "features/metrics": typeof features_metrics;
  "features/tiers": typeof features_tiers;
  "features/windows": typeof features_windows;
  generations: typeof generations;
  http: typeof http;
  invites: typeof invites;
  limits: typeof limits;
  llm: typeof llm;
  logins: typeof logins;
  messages: typeof messages;
  plans: typeof plans;
  playground: typeof playground;
  sessions: typeof sessions;
  signups: typeof signups;
  webhooks: typeof webhooks;
}>;
export declare const api: FilterApi<
  typeof fullApi,
  FunctionReference<any, "public">
>;
export declare const internal: FilterApi<
  typeof fullApi,
  FunctionReference<any, "internal">
>;

export declare const components: {
  rateLimiter: import("convex-rate-limiter/_generated/component.js").ComponentApi<"rateLimiter">;
};
