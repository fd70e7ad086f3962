// Compile-time guarantees of keys from the request and network entries, checked by tsc under `vitest --typecheck`: requestKey takes a mutation's or an action's ctx (a query can't read the request's metadata) and only the three `by`s, a network target and `{ allow: true }` are overrides, and `ip` is an option of every request.
import type { GenericActionCtx, GenericDataModel, GenericMutationCtx, GenericQueryCtx } from "convex/server";
import { describe, expectTypeOf, test } from "vitest";
import { HOUR, MINUTE, RateLimiter, type GetValueReturns, type Override, type OverrideTarget, type RequestKeyBy } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";

declare const queryCtx: GenericQueryCtx<GenericDataModel>;
declare const mutationCtx: GenericMutationCtx<GenericDataModel>;
declare const actionCtx: GenericActionCtx<GenericDataModel>;
declare const component: ComponentApi;

const rateLimiter = new RateLimiter(component, {
  signIn: { kind: "token bucket", rate: 3, period: MINUTE, lockout: HOUR, networks: true },
});

describe("requestKey", () => {
  test("takes a mutation's or an action's ctx, and returns a key", () => {
    expectTypeOf(rateLimiter.requestKey(mutationCtx, { by: "ip" })).toEqualTypeOf<Promise<string>>();
    expectTypeOf(rateLimiter.requestKey(actionCtx, { by: "ip+userAgent", fallback: "server", ipv6Prefix: 48, hash: { secret: "0123456789abcdef" } })).toEqualTypeOf<Promise<string>>();
    expectTypeOf<RequestKeyBy>().toEqualTypeOf<"ip" | "userAgent" | "ip+userAgent">();
  });

  test("not a query's, which can't read the request's metadata", () => {
    // @ts-expect-error a query's ctx has no getRequestMetadata
    void rateLimiter.requestKey(queryCtx, { by: "ip" });
  });

  test("only the three ways to key", () => {
    // @ts-expect-error "address" is not a `by`
    void rateLimiter.requestKey(mutationCtx, { by: "address" });
    // @ts-expect-error `by` is required
    void rateLimiter.requestKey(mutationCtx, {});
  });
});

describe("network entries", () => {
  test("a network is a target; allow is an override", () => {
    const target: OverrideTarget = { network: "203.0.113.0/24" };
    const allow: Override = { allow: true };
    void rateLimiter.setOverride(mutationCtx, "signIn", target, allow);
    void rateLimiter.setOverride(mutationCtx, "signIn", target, { blockedUntil: 0 });
    // @ts-expect-error an allow is `true`, never false (remove the entry instead)
    const never: Override = { allow: false };
    void never;
  });

  test("ip is an option of every request, and getValue says which entry applied", () => {
    void rateLimiter.limit(mutationCtx, "signIn", { key: "k", ip: "203.0.113.7" });
    void rateLimiter.check(queryCtx, "signIn", { key: "k", ip: "203.0.113.7" });
    void rateLimiter.limitAll(mutationCtx, [{ name: "signIn", key: "k" }], { ip: "203.0.113.7" });
    expectTypeOf(rateLimiter.getValue(queryCtx, "signIn", { key: "k", ip: "203.0.113.7" })).toEqualTypeOf<Promise<GetValueReturns>>();
    expectTypeOf<GetValueReturns["network"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<GetValueReturns["allowed"]>().toEqualTypeOf<true | undefined>();
    expectTypeOf<NonNullable<GetValueReturns["by"]>>().toEqualTypeOf<"config" | "key" | "network" | "tier">();
  });
});
