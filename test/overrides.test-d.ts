// Compile-time guarantees of overrides, checked by tsc under `vitest --typecheck`: the override methods take only the names of rate limits given to the constructor, an override's config is typed like any config without the named config's layout, `lockout` is a number on every kind, and `tier` is an option of every request.
import type { GenericActionCtx, GenericDataModel, GenericMutationCtx, GenericQueryCtx, PaginationResult } from "convex/server";
import { describe, expectTypeOf, test } from "vitest";
import {
  HOUR,
  MINUTE,
  RateLimiter,
  type GetValueReturns,
  type LimitAllResult,
  type Override,
  type OverrideConfig,
  type OverrideRecord,
  type OverrideTarget,
  type RateLimitConfig,
  type RateLimitReturns,
} from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";

declare const queryCtx: GenericQueryCtx<GenericDataModel>;
declare const mutationCtx: GenericMutationCtx<GenericDataModel>;
declare const actionCtx: GenericActionCtx<GenericDataModel>;
declare const component: ComponentApi;

const rateLimiter = new RateLimiter(component, {
  llm: { kind: "token bucket", rate: 10, period: HOUR },
  signIn: { kind: "fixed window", rate: 3, period: MINUTE, lockout: HOUR },
  jobs: { kind: "concurrency", capacity: 2, lease: MINUTE },
});
const pro: Override = { config: { kind: "token bucket", rate: 100, period: HOUR } };
const page = { paginationOpts: { numItems: 10, cursor: null } };

describe("the override methods take the names of rate limits given to the constructor", () => {
  test("a named rate limit, from a mutation (set, remove) or a query (get, list)", () => {
    expectTypeOf(rateLimiter.setOverride(mutationCtx, "llm", { key: "u" }, pro)).resolves.toEqualTypeOf<void>();
    expectTypeOf(rateLimiter.setOverride(actionCtx, "signIn", { tier: "pro" }, { blockedUntil: 0 }, { note: "why" })).resolves.toEqualTypeOf<void>();
    expectTypeOf(rateLimiter.removeOverride(mutationCtx, "llm", {})).resolves.toEqualTypeOf<boolean>();
    expectTypeOf(rateLimiter.getOverride(queryCtx, "llm", { tier: "pro" })).resolves.toEqualTypeOf<OverrideRecord | null>();
    expectTypeOf(rateLimiter.listOverrides(queryCtx, "signIn", { ...page, scope: "tier" })).resolves.toEqualTypeOf<PaginationResult<OverrideRecord>>();
  });

  test("a misspelled name doesn't compile", () => {
    // @ts-expect-error misspelled
    void rateLimiter.setOverride(mutationCtx, "lm", { key: "u" }, pro);
    // @ts-expect-error misspelled
    void rateLimiter.removeOverride(mutationCtx, "LLM", { key: "u" });
    // @ts-expect-error misspelled
    void rateLimiter.getOverride(queryCtx, "signin", { key: "u" });
    // @ts-expect-error misspelled
    void rateLimiter.listOverrides(queryCtx, "llms", page);
  });

  test("a concurrency limit's name doesn't compile: it has no overrides", () => {
    // @ts-expect-error a concurrency limit
    void rateLimiter.setOverride(mutationCtx, "jobs", { key: "u" }, pro);
    // @ts-expect-error a concurrency limit
    void rateLimiter.removeOverride(mutationCtx, "jobs", { key: "u" });
    // @ts-expect-error a concurrency limit
    void rateLimiter.getOverride(queryCtx, "jobs", { key: "u" });
    // @ts-expect-error a concurrency limit
    void rateLimiter.listOverrides(queryCtx, "jobs", page);
  });

  test("a RateLimiter naming no limits takes no name", () => {
    const bare = new RateLimiter(component);
    // @ts-expect-error no limits named: nothing to override
    void bare.setOverride(mutationCtx, "llm", { key: "u" }, pro);
  });

  test("a query can't set or remove one", () => {
    // @ts-expect-error a query's ctx can't run a mutation
    void rateLimiter.setOverride(queryCtx, "llm", { key: "u" }, pro);
    // @ts-expect-error a query's ctx can't run a mutation
    void rateLimiter.removeOverride(queryCtx, "llm", { key: "u" });
  });

  test("targets and options", () => {
    expectTypeOf<{ key: string }>().toExtend<OverrideTarget>();
    expectTypeOf<{ tier: string }>().toExtend<OverrideTarget>();
    expectTypeOf<{}>().toExtend<OverrideTarget>();
    // @ts-expect-error a tier is a string
    void rateLimiter.setOverride(mutationCtx, "llm", { tier: 1 }, pro);
    // @ts-expect-error scope is "key" or "tier"
    void rateLimiter.listOverrides(queryCtx, "llm", { ...page, scope: "keys" });
    // @ts-expect-error a note is a string
    void rateLimiter.setOverride(mutationCtx, "llm", { key: "u" }, pro, { note: 5 });
    // @ts-expect-error listing takes paginationOpts
    void rateLimiter.listOverrides(queryCtx, "llm", {});
  });
});

describe("an override is a config of any kind, without the named config's layout, or a block", () => {
  test("every kind's config, with its own fields", () => {
    const configs: OverrideConfig[] = [
      { kind: "token bucket", rate: 1, period: MINUTE, capacity: 3, maxReserved: 2 },
      { kind: "fixed window", rate: 1, period: MINUTE, start: 0 },
      { kind: "sliding window", rate: 1, period: MINUTE, exact: false, start: 0 },
      { kind: "sliding window", rate: 1, period: MINUTE },
    ];
    void configs;
    const block: Override = { blockedUntil: Date.now() + HOUR };
    void block;
  });

  test("a wrong kind, a field of another kind, or a wrongly typed field doesn't compile", () => {
    // @ts-expect-error no such kind
    const misspelled: Override = { config: { kind: "token-bucket", rate: 1, period: MINUTE } };
    // @ts-expect-error a token bucket has no exact
    const exact: Override = { config: { kind: "token bucket", rate: 1, period: MINUTE, exact: true } };
    // @ts-expect-error a token bucket has no start
    const start: Override = { config: { kind: "token bucket", rate: 1, period: MINUTE, start: 0 } };
    // @ts-expect-error a fixed window has no exact
    const window: Override = { config: { kind: "fixed window", rate: 1, period: MINUTE, exact: false } };
    // @ts-expect-error rate is a number
    const rate: Override = { config: { kind: "token bucket", rate: "1", period: MINUTE } };
    // @ts-expect-error a config needs its period
    const period: Override = { config: { kind: "token bucket", rate: 1 } };
    // @ts-expect-error blockedUntil is an instant (ms), not a Date
    const date: Override = { blockedUntil: new Date() };
    // @ts-expect-error an override is a config or a block, not a bare config
    const bare: Override = { kind: "token bucket", rate: 1, period: MINUTE };
    void [misspelled, exact, start, window, rate, period, date, bare];
  });

  test("shards, applyUpdates, dryRun and metrics are the named config's: errors in an override", () => {
    // @ts-expect-error shards come from the named config
    const shards: Override = { config: { kind: "token bucket", rate: 10, period: MINUTE, shards: 2 } };
    // @ts-expect-error applyUpdates comes from the named config
    const mode: Override = { config: { kind: "fixed window", rate: 10, period: MINUTE, applyUpdates: "asynchronously" } };
    // @ts-expect-error dryRun comes from the named config
    const dry: Override = { config: { kind: "sliding window", rate: 10, period: MINUTE, dryRun: true } };
    // @ts-expect-error metrics comes from the named config
    const metrics: Override = { config: { kind: "token bucket", rate: 10, period: MINUTE, metrics: true } };
    void [shards, mode, dry, metrics];
    // A named config has them.
    const named: RateLimitConfig = { kind: "token bucket", rate: 10, period: MINUTE, shards: 2, dryRun: true, metrics: true };
    void named;
  });

  test("lockout is a number on every kind, named or in an override", () => {
    const locks: OverrideConfig[] = [
      { kind: "token bucket", rate: 1, period: MINUTE, lockout: HOUR },
      { kind: "fixed window", rate: 1, period: MINUTE, lockout: HOUR },
      { kind: "sliding window", rate: 1, period: MINUTE, lockout: HOUR },
    ];
    void locks;
    expectTypeOf<Extract<RateLimitConfig, { kind: "token bucket" }>["lockout"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Extract<RateLimitConfig, { kind: "fixed window" }>["lockout"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Extract<RateLimitConfig, { kind: "sliding window" }>["lockout"]>().toEqualTypeOf<number | undefined>();
    // @ts-expect-error a lockout is ms, not a string
    const text: OverrideConfig = { kind: "token bucket", rate: 1, period: MINUTE, lockout: "1h" };
    void text;
    // @ts-expect-error a lockout is ms, not a string
    new RateLimiter(component, { x: { kind: "fixed window", rate: 1, period: MINUTE, lockout: "1h" } });
  });
});

describe("tier is an option of every request", () => {
  test("limit, check, getValue and credit take a tier", () => {
    expectTypeOf(rateLimiter.limit(mutationCtx, "llm", { key: "u", tier: "pro" })).resolves.toEqualTypeOf<RateLimitReturns>();
    expectTypeOf(rateLimiter.check(queryCtx, "llm", { key: "u", tier: "pro" })).resolves.toEqualTypeOf<RateLimitReturns>();
    expectTypeOf(rateLimiter.getValue(queryCtx, "llm", { key: "u", tier: "pro" })).resolves.toEqualTypeOf<GetValueReturns>();
    expectTypeOf(rateLimiter.credit(mutationCtx, "llm", { key: "u", tier: "pro", count: 1 })).resolves.toEqualTypeOf<{ credited: number }>();
    void rateLimiter.limit(mutationCtx, "adhoc", { tier: "pro", config: { kind: "token bucket", rate: 1, period: MINUTE } });
    // @ts-expect-error a tier is a string
    void rateLimiter.limit(mutationCtx, "llm", { tier: 1 });
    // @ts-expect-error a tier is a string
    void rateLimiter.getValue(queryCtx, "llm", { tier: ["pro"] });
  });

  test("each request of limitAll and checkAll takes a tier", () => {
    expectTypeOf(rateLimiter.limitAll(mutationCtx, [{ name: "llm", key: "u", tier: "pro" }, { name: "signIn" }])).resolves.toEqualTypeOf<LimitAllResult>();
    expectTypeOf(rateLimiter.checkAll(queryCtx, [{ name: "llm", tier: "pro" }])).resolves.toEqualTypeOf<LimitAllResult>();
    // @ts-expect-error a tier is a string
    void rateLimiter.limitAll(mutationCtx, [{ name: "llm", tier: 1 }]);
  });

  test("hookAPI takes a tier: a string, or a function of ctx and key", () => {
    rateLimiter.hookAPI("llm", { tier: "pro" });
    rateLimiter.hookAPI("llm", { key: "u", tier: async (_ctx, key) => (key === "u" ? "pro" : undefined) });
    // @ts-expect-error a tier is a string, or a function returning one
    rateLimiter.hookAPI("llm", { tier: 1 });
  });
});
