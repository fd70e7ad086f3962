// Drop-in compatibility at compile time: the names and signatures exported by ../src/client/index.js against @convex-dev/rate-limiter 0.4.0's, checked by tsc under `vitest --typecheck`.
import type * as Upstream from "@convex-dev/rate-limiter";
import type { ComponentApi as UpstreamApi } from "@convex-dev/rate-limiter/_generated/component.js";
import type { GenericActionCtx, GenericDataModel, GenericMutationCtx, GenericQueryCtx } from "convex/server";
import { describe, expectTypeOf, test } from "vitest";
import type * as Ours from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";

type UpstreamModule = typeof import("@convex-dev/rate-limiter");
type OurModule = typeof import("../src/client/index.js");

declare const component: ComponentApi;
declare const upstreamComponent: UpstreamApi;
declare const mutationCtx: GenericMutationCtx<GenericDataModel>;
declare const upstreamQueryCtx: Upstream.QueryCtx;
declare const upstreamMutationCtx: Upstream.MutationCtx;
declare const upstreamActionCtx: Upstream.ActionCtx;
declare const OursRateLimiter: OurModule["RateLimiter"];
declare const UpstreamRateLimiter: UpstreamModule["RateLimiter"];

const limits = {
  sendMessage: { kind: "token bucket", rate: 10, period: 60_000, capacity: 3 },
  freeTrialSignUp: { kind: "fixed window", rate: 100, period: 3_600_000 },
} as const satisfies Record<string, Upstream.RateLimitConfig>;
const ours = new OursRateLimiter(component, limits);
const theirs = new UpstreamRateLimiter(upstreamComponent, limits);

describe("value exports", () => {
  test("every value upstream exports, we export", () => {
    expectTypeOf<Exclude<keyof UpstreamModule, keyof OurModule>>().toEqualTypeOf<never>();
    expectTypeOf<keyof UpstreamModule>().toEqualTypeOf<
      "RateLimiter" | "default" | "SECOND" | "MINUTE" | "HOUR" | "DAY" | "WEEK" | "calculateRateLimit" | "isRateLimitError"
    >();
  });

  test("RateLimiter is the named and the default export", () => {
    expectTypeOf<OurModule["default"]>().toEqualTypeOf<OurModule["RateLimiter"]>();
  });

  test("the time constants have upstream's types", () => {
    expectTypeOf<OurModule["SECOND"]>().toEqualTypeOf<UpstreamModule["SECOND"]>();
    expectTypeOf<OurModule["MINUTE"]>().toEqualTypeOf<UpstreamModule["MINUTE"]>();
    expectTypeOf<OurModule["HOUR"]>().toEqualTypeOf<UpstreamModule["HOUR"]>();
    expectTypeOf<OurModule["DAY"]>().toEqualTypeOf<UpstreamModule["DAY"]>();
    expectTypeOf<OurModule["WEEK"]>().toEqualTypeOf<UpstreamModule["WEEK"]>();
  });

  test("calculateRateLimit accepts upstream's arguments and returns upstream's shape", () => {
    expectTypeOf<Parameters<UpstreamModule["calculateRateLimit"]>>().toMatchTypeOf<
      Parameters<OurModule["calculateRateLimit"]>
    >();
    // Upstream's fields exactly, plus a sliding window's optional `prev` or `log`: assignable both ways.
    expectTypeOf<ReturnType<OurModule["calculateRateLimit"]>>().toMatchTypeOf<
      ReturnType<UpstreamModule["calculateRateLimit"]>
    >();
    expectTypeOf<ReturnType<UpstreamModule["calculateRateLimit"]>>().toMatchTypeOf<
      ReturnType<OurModule["calculateRateLimit"]>
    >();
    expectTypeOf<
      Omit<ReturnType<OurModule["calculateRateLimit"]>, "prev" | "log">
    >().toEqualTypeOf<ReturnType<UpstreamModule["calculateRateLimit"]>>();
  });

  test("isRateLimitError has upstream's signature", () => {
    expectTypeOf<OurModule["isRateLimitError"]>().toEqualTypeOf<UpstreamModule["isRateLimitError"]>();
  });
});

describe("type exports", () => {
  test("an upstream config is one of ours", () => {
    expectTypeOf<Upstream.RateLimitConfig>().toMatchTypeOf<Ours.RateLimitConfig>();
  });

  test("upstream's request arguments are ours", () => {
    expectTypeOf<Upstream.RateLimitArgs>().toMatchTypeOf<Ours.RateLimitArgs>();
  });

  test("our results fit code written for upstream's (we only add the optional `shards`)", () => {
    expectTypeOf<Ours.RateLimitReturns>().toMatchTypeOf<Upstream.RateLimitReturns>();
    expectTypeOf<Omit<Extract<Ours.RateLimitReturns, { ok: false }>, "shards">>().toEqualTypeOf<
      Extract<Upstream.RateLimitReturns, { ok: false }>
    >();
  });

  test("RateLimitError is the same", () => {
    expectTypeOf<Ours.RateLimitError>().toEqualTypeOf<Upstream.RateLimitError>();
  });

  test("upstream's ctx types satisfy ours (ours ask for less)", () => {
    expectTypeOf<Upstream.QueryCtx>().toMatchTypeOf<Ours.QueryCtx>();
    expectTypeOf<Upstream.MutationCtx>().toMatchTypeOf<Ours.MutationCtx>();
    expectTypeOf<Upstream.ActionCtx>().toMatchTypeOf<Ours.ActionCtx>();
  });
});

describe("RateLimiter methods accept what upstream's accept", () => {
  type LimitOptions = NonNullable<Parameters<typeof theirs.limit<"sendMessage">>[2]>;
  type InlineOptions = Parameters<typeof theirs.limit<"other">>[2];
  type GetValueOptions = NonNullable<Parameters<typeof theirs.getValue<"sendMessage">>[2]>;

  test("limit, check and getValue: the same names and options", () => {
    expectTypeOf<LimitOptions>().toMatchTypeOf<NonNullable<Parameters<typeof ours.limit<"sendMessage">>[2]>>();
    expectTypeOf<LimitOptions>().toMatchTypeOf<NonNullable<Parameters<typeof ours.check<"sendMessage">>[2]>>();
    expectTypeOf<GetValueOptions>().toMatchTypeOf<NonNullable<Parameters<typeof ours.getValue<"sendMessage">>[2]>>();
    const options: LimitOptions = { key: "u", count: 2, reserve: true, throws: true };
    void ours.limit(mutationCtx, "sendMessage", options);
    void ours.check(upstreamQueryCtx, "sendMessage", options);
    void ours.getValue(upstreamQueryCtx, "freeTrialSignUp", { key: "k", sampleShards: 2 });
    // Options with an inline config, for a name not given to the constructor.
    const inline: NonNullable<InlineOptions> = { key: "u", config: { kind: "fixed window", rate: 1, period: 1_000 } };
    void ours.limit(mutationCtx, "other", inline);
    void ours.check(upstreamQueryCtx, "other", inline);
  });

  test("the ctxs upstream's methods take from queries and mutations work with ours", () => {
    void ours.limit(upstreamMutationCtx, "sendMessage");
    void ours.check(upstreamMutationCtx, "sendMessage");
    void ours.getValue(upstreamMutationCtx, "sendMessage");
    void ours.reset(upstreamMutationCtx, "sendMessage");
    expectTypeOf(theirs.limit(upstreamMutationCtx, "sendMessage")).resolves.toMatchTypeOf<Ours.RateLimitReturns | Upstream.RateLimitReturns>();
  });

  // Upstream types ctx as `MutationCtx | ActionCtx`; our Pick of the mutation ctx rejects an action's.
  test("the action ctx upstream's methods take works with ours", () => {
    void theirs.limit(upstreamActionCtx, "sendMessage");
    void ours.limit(upstreamActionCtx, "sendMessage");
    void ours.check(upstreamActionCtx, "sendMessage");
    void ours.getValue(upstreamActionCtx, "sendMessage");
    void ours.reset(upstreamActionCtx, "sendMessage");
  });

  test("hookAPI takes upstream's options", () => {
    type UpstreamHookOptions = NonNullable<Parameters<typeof theirs.hookAPI<GenericDataModel, "sendMessage">>[1]>;
    expectTypeOf<UpstreamHookOptions>().toMatchTypeOf<
      NonNullable<Parameters<typeof ours.hookAPI<GenericDataModel, "sendMessage">>[1]>
    >();
    const { getRateLimit, getServerTime } = ours.hookAPI("sendMessage", {
      key: async (ctx: GenericQueryCtx<GenericDataModel>) => (await ctx.auth.getUserIdentity())?.subject ?? "anonymous",
    });
    void [getRateLimit, getServerTime];
  });

  test("documented differences: reset is name-checked", () => {
    // Upstream accepts any name without a config; ours needs a known name or an inline config.
    void theirs.reset(upstreamMutationCtx, "misspelled");
    // @ts-expect-error not a known name, and no inline config
    void ours.reset(upstreamMutationCtx, "misspelled");
    void ours.reset(upstreamMutationCtx, "misspelled", { config: limits.sendMessage });
    // Upstream also takes a (useless) config for a known name; ours doesn't.
    void theirs.reset(upstreamMutationCtx, "sendMessage", { key: "k", config: limits.sendMessage });
    // @ts-expect-error a known name's config is the constructor's
    void ours.reset(upstreamMutationCtx, "sendMessage", { key: "k", config: limits.sendMessage });
  });

  test("the components.rateLimiter an app generated for upstream is accepted until codegen runs again", () => {
    void new OursRateLimiter(upstreamComponent, limits);
  });

  test("real convex ctx types work with both", () => {
    const action = {} as GenericActionCtx<GenericDataModel>;
    void theirs.limit(action, "sendMessage");
    void ours.limit(mutationCtx, "sendMessage");
  });
});
