// Compile-time guarantees of concurrency limits, checked by tsc under `vitest --typecheck`: acquire takes only concurrency names, the rate-only methods refuse them, and each result has its own shape.
import type {
  GenericActionCtx,
  GenericMutationCtx,
  GenericQueryCtx,
  GenericDataModel,
  RegisteredQuery,
} from "convex/server";
import { describe, expectTypeOf, test } from "vitest";
import {
  MINUTE,
  RateLimiter,
  type AcquireResult,
  type ConcurrencyConfig,
  type ExtendResult,
  type GetValueReturns,
  type GetValueReturnsWithDetails,
  type HookLeaseValue,
  type LeaseValue,
  type RateLimitReturns,
} from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";

declare const queryCtx: GenericQueryCtx<GenericDataModel>;
declare const mutationCtx: GenericMutationCtx<GenericDataModel>;
declare const actionCtx: GenericActionCtx<GenericDataModel>;
declare const component: ComponentApi;

const rateLimiter = new RateLimiter(component, {
  generations: { kind: "concurrency", capacity: 2, lease: 5 * MINUTE },
  sendMessage: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
});

describe("acquire, release, extend", () => {
  test("acquire takes a concurrency name, from a mutation or an action, and returns AcquireResult", () => {
    expectTypeOf(rateLimiter.acquire(mutationCtx, "generations", { key: "u" })).resolves.toEqualTypeOf<AcquireResult>();
    expectTypeOf(rateLimiter.acquire(actionCtx, "generations", { throws: true })).resolves.toEqualTypeOf<AcquireResult>();
    // @ts-expect-error a rate limit is not acquired
    void rateLimiter.acquire(mutationCtx, "sendMessage");
    // @ts-expect-error a misspelled name
    void rateLimiter.acquire(mutationCtx, "generation");
    // @ts-expect-error a query can't acquire
    void rateLimiter.acquire(queryCtx, "generations");
    // @ts-expect-error no count: a lease is one slot
    void rateLimiter.acquire(mutationCtx, "generations", { count: 2 });
  });

  test("the result narrows on ok: a lease when admitted, retryAfter when refused", async () => {
    const result = await rateLimiter.acquire(mutationCtx, "generations");
    if (result.ok) {
      expectTypeOf(result.lease).toEqualTypeOf<string>();
      expectTypeOf(result.expiresAt).toEqualTypeOf<number>();
    } else {
      expectTypeOf(result.retryAfter).toEqualTypeOf<number>();
    }
  });

  test("release and extend take the lease", () => {
    expectTypeOf(rateLimiter.release(mutationCtx, "lease")).resolves.toEqualTypeOf<{ released: boolean }>();
    expectTypeOf(rateLimiter.extend(actionCtx, "lease", { by: MINUTE })).resolves.toEqualTypeOf<ExtendResult>();
  });
});

describe("the other methods", () => {
  test("limit, credit and limitAll refuse a concurrency name", () => {
    // @ts-expect-error a concurrency limit is acquired, not limited
    void rateLimiter.limit(mutationCtx, "generations");
    // @ts-expect-error nor credited
    void rateLimiter.credit(mutationCtx, "generations", { count: 1 });
    // @ts-expect-error nor part of a limitAll
    void rateLimiter.limitAll(mutationCtx, [{ name: "generations" }]);
    // The rate limit beside it is unchanged.
    expectTypeOf(rateLimiter.limit(mutationCtx, "sendMessage")).resolves.toEqualTypeOf<RateLimitReturns>();
  });

  test("hookAPI takes either kind; its query's result follows the kind", () => {
    // What the query returns, as the app's generated `api` types it.
    type Returns<Q> = Q extends RegisteredQuery<"public", infer _A, infer R> ? Awaited<R> : never;
    const lease = rateLimiter.hookAPI("generations").getRateLimit;
    expectTypeOf<Returns<typeof lease>>().toEqualTypeOf<HookLeaseValue>();
    const rate = rateLimiter.hookAPI("sendMessage").getRateLimit;
    expectTypeOf<Returns<typeof rate>>().toEqualTypeOf<GetValueReturnsWithDetails>();
    // With DataModel given, Name is not inferred: a concurrency name is spelled out, else refused.
    const spelled = rateLimiter.hookAPI<GenericDataModel, "generations">("generations").getRateLimit;
    expectTypeOf<Returns<typeof spelled>>().toEqualTypeOf<HookLeaseValue>();
    // @ts-expect-error the default names are the rate limits'
    void rateLimiter.hookAPI<GenericDataModel>("generations");
  });

  test("check, getValue and reset take either kind; getValue's result follows the kind", () => {
    expectTypeOf(rateLimiter.check(queryCtx, "generations", { key: "u" })).resolves.toEqualTypeOf<RateLimitReturns>();
    expectTypeOf(rateLimiter.getValue(queryCtx, "generations", { key: "u" })).resolves.toEqualTypeOf<LeaseValue>();
    expectTypeOf(rateLimiter.getValue(queryCtx, "sendMessage")).resolves.toEqualTypeOf<GetValueReturns>();
    expectTypeOf(rateLimiter.reset(mutationCtx, "generations", { key: "u" })).resolves.toEqualTypeOf<void>();
  });

  test("a config with shards is not a ConcurrencyConfig (the constructor refuses it at run time, naming config.shards)", () => {
    // @ts-expect-error concurrency limits have no shards
    const sharded: ConcurrencyConfig = { kind: "concurrency", capacity: 2, lease: MINUTE, shards: 2 };
    void sharded;
  });
});
