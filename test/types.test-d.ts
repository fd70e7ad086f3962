// Compile-time guarantees of the client, checked by tsc under `vitest --typecheck`: name checking, inline configs, result shapes, and which Convex ctx types each method accepts.
import type {
  DataModelFromSchemaDefinition,
  GenericActionCtx,
  GenericMutationCtx,
  GenericQueryCtx,
} from "convex/server";
import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";
import { describe, expectTypeOf, test } from "vitest";
import {
  DAY,
  HOUR,
  isRateLimitError,
  MINUTE,
  RateLimiter,
  type ActionCtx,
  type GetValueReturns,
  type MutationCtx,
  type QueryCtx,
  type RateLimitConfig,
  type RateLimitError,
  type RateLimitReturns,
  type RateLimitReturnsWithDetails,
  type GetValueReturnsWithDetails,
  type MetricsResult,
} from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";

// An app's data model, to show the ctx types of a real app are accepted.
const appSchema = defineSchema({ messages: defineTable({ body: v.string() }) });
type DataModel = DataModelFromSchemaDefinition<typeof appSchema>;
declare const queryCtx: GenericQueryCtx<DataModel>;
declare const mutationCtx: GenericMutationCtx<DataModel>;
declare const actionCtx: GenericActionCtx<DataModel>;
declare const component: ComponentApi;

const rateLimiter = new RateLimiter(component, {
  sendMessage: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
  freeTrialSignUp: { kind: "fixed window", rate: 100, period: HOUR },
});
const inline: RateLimitConfig = { kind: "token bucket", rate: 1, period: MINUTE };

describe("names are checked", () => {
  test("a named limit needs no options; a misspelled one doesn't compile", () => {
    void rateLimiter.limit(mutationCtx, "sendMessage");
    void rateLimiter.limit(mutationCtx, "sendMessage", { key: "u", count: 2, reserve: true, throws: true });
    // @ts-expect-error misspelled: not a named limit, and no inline config
    void rateLimiter.limit(mutationCtx, "sendMesage");
    // @ts-expect-error misspelled, with options but no config
    void rateLimiter.limit(mutationCtx, "sendMesage", { key: "u" });
    // @ts-expect-error misspelled
    void rateLimiter.check(queryCtx, "freeTrialSignup");
    // @ts-expect-error misspelled
    void rateLimiter.getValue(queryCtx, "sendmessage");
    // @ts-expect-error misspelled
    void rateLimiter.reset(mutationCtx, "sendMessages");
    // @ts-expect-error misspelled
    rateLimiter.hookAPI("sendMesage");
    void rateLimiter.credit(mutationCtx, "sendMessage", { count: 1 });
    // @ts-expect-error misspelled
    void rateLimiter.credit(mutationCtx, "sendMesage", { count: 1 });
    // @ts-expect-error a credit needs its count
    void rateLimiter.credit(mutationCtx, "sendMessage", {});
    void rateLimiter.limitAll(mutationCtx, [{ name: "sendMessage" }, { name: "adhoc", config: inline }]);
    // @ts-expect-error misspelled, and no inline config
    void rateLimiter.limitAll(mutationCtx, [{ name: "sendMessage" }, { name: "sendMesage" }]);
    // @ts-expect-error misspelled
    void rateLimiter.checkAll(queryCtx, [{ name: "freeTrialSignup" }]);
    // @ts-expect-error no such option of a request
    void rateLimiter.limitAll(mutationCtx, [{ name: "sendMessage", burst: 5 }]);
    // @ts-expect-error count is a number
    void rateLimiter.limitAll(mutationCtx, [{ name: "sendMessage", count: "2" }]);
    // @ts-expect-error a named limit's config comes from the constructor
    void rateLimiter.limitAll(mutationCtx, [{ name: "sendMessage", config: inline }]);
    const names: ("sendMessage" | "freeTrialSignUp")[] = ["sendMessage"];
    void rateLimiter.limitAll(mutationCtx, names.map((name) => ({ name, key: "u" })));
    const span = { from: 0, to: MINUTE };
    expectTypeOf(rateLimiter.metrics(queryCtx, "sendMessage", span)).resolves.toEqualTypeOf<MetricsResult>();
    void rateLimiter.metrics(queryCtx, "adhoc", { ...span, config: inline, topKeys: 3 });
    // @ts-expect-error misspelled, and no inline config
    void rateLimiter.metrics(queryCtx, "sendMesage", span);
    // @ts-expect-error metrics needs its span
    void rateLimiter.metrics(queryCtx, "sendMessage", {});
    void rateLimiter.foldMetrics(mutationCtx, { retainFor: DAY });
    // @ts-expect-error folding writes: not from a query
    void rateLimiter.foldMetrics(queryCtx);
  });

  test("an unnamed limit requires an inline config, everywhere", () => {
    void rateLimiter.limit(mutationCtx, "adhoc", { config: inline });
    void rateLimiter.check(queryCtx, "adhoc", { config: inline, count: 2 });
    void rateLimiter.getValue(queryCtx, "adhoc", { config: inline, sampleShards: 2 });
    void rateLimiter.reset(mutationCtx, "adhoc", { config: inline, key: "k" });
    rateLimiter.hookAPI("adhoc", { config: inline });
    // @ts-expect-error no config
    void rateLimiter.limit(mutationCtx, "adhoc", { key: "k" });
    // @ts-expect-error no config
    void rateLimiter.check(queryCtx, "adhoc", {});
    // @ts-expect-error no config
    void rateLimiter.getValue(queryCtx, "adhoc", { key: "k" });
    // @ts-expect-error no config
    void rateLimiter.reset(mutationCtx, "adhoc", { key: "k" });
    // @ts-expect-error no config
    rateLimiter.hookAPI("adhoc", { key: "k" });
  });

  test("a named limit's config comes from the constructor, never inline", () => {
    // @ts-expect-error `config` is not an option of a named limit
    void rateLimiter.limit(mutationCtx, "sendMessage", { config: inline });
    // @ts-expect-error `config` is not an option of a named limit
    void rateLimiter.check(queryCtx, "sendMessage", { config: inline });
    // @ts-expect-error `config` is not an option of a named limit
    void rateLimiter.getValue(queryCtx, "sendMessage", { config: inline });
  });

  test("a limiter without named limits takes any name with a config", () => {
    const anonymous = new RateLimiter(component);
    void anonymous.limit(mutationCtx, "anything", { config: inline });
    // @ts-expect-error still needs the config
    void anonymous.limit(mutationCtx, "anything");
  });

  test("the Name parameter is inferred as the literal", () => {
    expectTypeOf(rateLimiter.limit<"sendMessage">).parameter(1).toEqualTypeOf<"sendMessage">();
    expectTypeOf(rateLimiter.limits).toEqualTypeOf<
      | {
          sendMessage: { kind: "token bucket"; rate: number; period: number; capacity: number };
          freeTrialSignUp: { kind: "fixed window"; rate: number; period: number };
        }
      | undefined
    >();
  });

  test("options are typed", () => {
    // @ts-expect-error count is a number
    void rateLimiter.limit(mutationCtx, "sendMessage", { count: "2" });
    // @ts-expect-error key is a string
    void rateLimiter.limit(mutationCtx, "sendMessage", { key: 5 });
    // @ts-expect-error no such option
    void rateLimiter.limit(mutationCtx, "sendMessage", { burst: 5 });
    // @ts-expect-error reset takes only a key for a named limit
    void rateLimiter.reset(mutationCtx, "sendMessage", { count: 1 });
  });
});

describe("configs", () => {
  test("a config is a union discriminated on kind", () => {
    const ok: RateLimitConfig[] = [
      { kind: "token bucket", rate: 1, period: 1, capacity: 2, maxReserved: 3, shards: 4, applyUpdates: "transactionally" },
      { kind: "fixed window", rate: 1, period: 1, start: 0 },
    ];
    void ok;
    // @ts-expect-error token buckets have no start
    const tb: RateLimitConfig = { kind: "token bucket", rate: 1, period: 1, start: 5 };
    // @ts-expect-error unknown kind
    const leaky: RateLimitConfig = { kind: "leaky bucket", rate: 1, period: 1 };
    // @ts-expect-error rate is required
    const noRate: RateLimitConfig = { kind: "fixed window", period: 1 };
    void [tb, leaky, noRate];
  });

  test("constructor limits must be configs", () => {
    // @ts-expect-error period is missing
    new RateLimiter(component, { bad: { kind: "token bucket", rate: 1 } });
  });
});

describe("results", () => {
  test("RateLimitReturns is ok: true with an optional retryAfter, or ok: false with one", () => {
    expectTypeOf<RateLimitReturns>().toEqualTypeOf<{ ok: true; retryAfter?: number } | { ok: false; retryAfter: number }>();
    expectTypeOf(rateLimiter.limit(mutationCtx, "sendMessage")).resolves.toEqualTypeOf<RateLimitReturns>();
    expectTypeOf(rateLimiter.check(queryCtx, "sendMessage")).resolves.toEqualTypeOf<RateLimitReturns>();
    expectTypeOf(rateLimiter.reset(mutationCtx, "sendMessage")).resolves.toEqualTypeOf<void>();
    // details: true changes the result type; without it the shape is upstream's.
    expectTypeOf(rateLimiter.limit(mutationCtx, "sendMessage", { details: true })).resolves.toEqualTypeOf<RateLimitReturnsWithDetails>();
    expectTypeOf(rateLimiter.check(queryCtx, "sendMessage", { details: true })).resolves.toEqualTypeOf<RateLimitReturnsWithDetails>();
    expectTypeOf(rateLimiter.limit(mutationCtx, "sendMessage", { details: false })).resolves.toEqualTypeOf<RateLimitReturns>();
    expectTypeOf(rateLimiter.getValue(queryCtx, "sendMessage", { details: true })).resolves.toEqualTypeOf<GetValueReturnsWithDetails>();
    const r = {} as RateLimitReturns;
    if (!r.ok) expectTypeOf(r.retryAfter).toEqualTypeOf<number>();
    else expectTypeOf(r.retryAfter).toEqualTypeOf<number | undefined>();
  });

  test("getValue returns a value, its instant, the shard and its config", () => {
    expectTypeOf(rateLimiter.getValue(queryCtx, "sendMessage")).resolves.toEqualTypeOf<GetValueReturns>();
    expectTypeOf<GetValueReturns>().toMatchTypeOf<{
      value: number;
      ts: number;
      shard: number;
      config: RateLimitConfig;
      total?: { value: number; capacity: number; exact: boolean };
    }>();
  });

  test("isRateLimitError narrows unknown to the RateLimited data", () => {
    const e: unknown = new Error();
    if (isRateLimitError(e)) {
      expectTypeOf(e.data).toEqualTypeOf<RateLimitError>();
      expectTypeOf(e.data.retryAfter).toEqualTypeOf<number>();
    }
    expectTypeOf<RateLimitError>().toEqualTypeOf<{ kind: "RateLimited"; name: string; retryAfter: number }>();
  });
});

describe("ctx types", () => {
  test("real query, mutation and action ctxs are accepted where they can work", () => {
    void rateLimiter.check(queryCtx, "sendMessage");
    void rateLimiter.getValue(queryCtx, "sendMessage");
    void rateLimiter.limit(mutationCtx, "sendMessage");
    void rateLimiter.check(mutationCtx, "sendMessage");
    void rateLimiter.getValue(mutationCtx, "sendMessage");
    void rateLimiter.reset(mutationCtx, "sendMessage");
  });

  // Upstream types these as `MutationCtx | ActionCtx`; an action's runQuery/runMutation take no
  // options argument in convex 1.48, so it isn't assignable to a Pick of the mutation ctx's.
  test("a real action ctx is accepted by limit, check, getValue and reset", () => {
    void rateLimiter.limit(actionCtx, "sendMessage");
    void rateLimiter.check(actionCtx, "sendMessage");
    void rateLimiter.getValue(actionCtx, "sendMessage");
    void rateLimiter.reset(actionCtx, "sendMessage");
  });

  test("a query ctx can't consume or reset (it has no runMutation)", () => {
    // @ts-expect-error queries can't write
    void rateLimiter.limit(queryCtx, "sendMessage");
    // @ts-expect-error queries can't write
    void rateLimiter.reset(queryCtx, "sendMessage");
  });

  test("the exported ctx types are what the methods need, and real ctxs satisfy them", () => {
    expectTypeOf(queryCtx).toMatchTypeOf<QueryCtx>();
    expectTypeOf(mutationCtx).toMatchTypeOf<MutationCtx>();
    expectTypeOf(actionCtx).toMatchTypeOf<ActionCtx>();
    expectTypeOf(mutationCtx).toMatchTypeOf<QueryCtx>();
    expectTypeOf(queryCtx).not.toMatchTypeOf<MutationCtx>();
  });

  test("hookAPI's key function gets the app's query ctx and the client's key", () => {
    rateLimiter.hookAPI<DataModel>("sendMessage", {
      key: async (ctx, keyFromClient) => {
        expectTypeOf(ctx).toEqualTypeOf<GenericQueryCtx<DataModel>>();
        expectTypeOf(keyFromClient).toEqualTypeOf<string | undefined>();
        const messages = await ctx.db.query("messages").take(1);
        return messages[0]?.body ?? "anonymous";
      },
    });
    // @ts-expect-error the key function returns a string
    rateLimiter.hookAPI<DataModel>("sendMessage", { key: () => 5 });
    rateLimiter.hookAPI("sendMessage", { allowClientConfig: true, sampleShards: 2 });
  });
});

describe("the exact sliding window's config", () => {
  test("exact is a sliding window's field only, a boolean; getValue's answer may carry the log", () => {
    const exact: RateLimitConfig = { kind: "sliding window", rate: 100, period: HOUR };
    const approximate: RateLimitConfig = { kind: "sliding window", rate: 100, period: HOUR, exact: false, start: 0 };
    // @ts-expect-error a token bucket has no exact
    const bucket: RateLimitConfig = { kind: "token bucket", rate: 1, period: MINUTE, exact: true };
    // @ts-expect-error exact is a boolean
    const text: RateLimitConfig = { kind: "sliding window", rate: 1, period: MINUTE, exact: "yes" };
    void [exact, approximate, bucket, text];
    expectTypeOf<GetValueReturns["log"]>().toEqualTypeOf<ArrayBuffer | undefined>();
  });
});
