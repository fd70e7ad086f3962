// Compile-time guarantees of waiting until allowed, checked by tsc under `vitest --typecheck`: runWhenAllowed's work is a mutation or action reference whose args are typed from it (wrong, missing or extra args don't compile; a function without args needs none), only rate limits' names are taken, and the results narrow on `ok`.
import { makeFunctionReference, type GenericActionCtx, type GenericDataModel, type GenericMutationCtx, type GenericQueryCtx } from "convex/server";
import { describe, expectTypeOf, test } from "vitest";
import { HOUR, MINUTE, RateLimiter, type CancelResult, type RateLimitReturns, type RunResult } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";

declare const queryCtx: GenericQueryCtx<GenericDataModel>;
declare const mutationCtx: GenericMutationCtx<GenericDataModel>;
declare const actionCtx: GenericActionCtx<GenericDataModel>;
declare const component: ComponentApi;

const rateLimiter = new RateLimiter(component, {
  emails: { kind: "token bucket", rate: 100, period: HOUR },
  quota: { kind: "fixed window", rate: 3, period: MINUTE },
  jobs: { kind: "concurrency", capacity: 2, lease: MINUTE },
});
const send = makeFunctionReference<"mutation", { to: string; subject?: string }, null>("emails:send");
const call = makeFunctionReference<"action", { prompt: string }, string>("llm:call");
const tick = makeFunctionReference<"mutation", Record<string, never>, null>("jobs:tick");
const read = makeFunctionReference<"query", { to: string }, null>("emails:read");

describe("runWhenAllowed types the work's args from its reference", () => {
  test("a mutation's or an action's args, from a mutation or an action", () => {
    expectTypeOf(rateLimiter.runWhenAllowed(mutationCtx, "emails", { key: "u" }, send, { to: "a@b.c" })).resolves.toEqualTypeOf<RunResult>();
    expectTypeOf(rateLimiter.runWhenAllowed(actionCtx, "quota", { maxWait: HOUR, throws: true }, call, { prompt: "hi" })).resolves.toEqualTypeOf<RunResult>();
    // Optional args may be left out; a function without args needs none.
    rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, send, { to: "a@b.c", subject: "s" });
    rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, tick);
    rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, tick, {});
  });

  test("wrong, missing or extra args don't compile", () => {
    // @ts-expect-error `to` is a string
    rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, send, { to: 1 });
    // @ts-expect-error `to` is required
    rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, send, {});
    // @ts-expect-error the args are required
    rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, send);
    // @ts-expect-error no such arg
    rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, send, { to: "a", cc: "b" });
    // @ts-expect-error the action's args, not the mutation's
    rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, call, { to: "a" });
  });

  test("only a mutation or action is work; only a mutation or action ctx decides", () => {
    // @ts-expect-error a query can't be scheduled
    rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, read, { to: "a" });
    // @ts-expect-error a string is no reference
    rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, "emails:send", { to: "a" });
    // @ts-expect-error a query can't take tokens
    rateLimiter.runWhenAllowed(queryCtx, "emails", {}, send, { to: "a" });
  });

  test("names: a rate limit given to the constructor, or any other with a config", () => {
    // @ts-expect-error misspelled
    rateLimiter.runWhenAllowed(mutationCtx, "emials", {}, send, { to: "a" });
    // @ts-expect-error a concurrency limit can't wait here
    rateLimiter.runWhenAllowed(mutationCtx, "jobs", {}, send, { to: "a" });
    rateLimiter.runWhenAllowed(mutationCtx, "inline", { config: { kind: "token bucket", rate: 1, period: MINUTE } }, send, { to: "a" });
    // @ts-expect-error the options are typed
    rateLimiter.runWhenAllowed(mutationCtx, "emails", { maxWait: "1h" }, send, { to: "a" });
  });

  test("the results narrow on ok", async () => {
    const result = await rateLimiter.runWhenAllowed(mutationCtx, "emails", {}, send, { to: "a" });
    if (result.ok) {
      expectTypeOf(result.runAt).toEqualTypeOf<number>();
      expectTypeOf(result.id).toEqualTypeOf<string>();
    } else {
      expectTypeOf(result.retryAfter).toEqualTypeOf<number>();
    }
    expectTypeOf(rateLimiter.cancelRun(mutationCtx, "id")).resolves.toEqualTypeOf<CancelResult>();
    const cancelled = await rateLimiter.cancelRun(mutationCtx, "id");
    if (cancelled.cancelled) expectTypeOf(cancelled.credited).toEqualTypeOf<number>();
    else expectTypeOf(cancelled.state).toEqualTypeOf<"inProgress" | "success" | "failed" | "canceled" | "unknown">();
  });
});

describe("check with wait: true says when work would run", () => {
  test("its result is runAt or retryAfter; without wait, check's own", async () => {
    expectTypeOf(rateLimiter.check(queryCtx, "emails", { wait: true, key: "u", maxWait: HOUR })).resolves.toEqualTypeOf<{ ok: true; runAt: number } | { ok: false; retryAfter: number }>();
    expectTypeOf(rateLimiter.check(queryCtx, "emails", { key: "u" })).resolves.toEqualTypeOf<RateLimitReturns>();
  });
});

describe("waitUntilAllowed", () => {
  test("from an action: waited, or retryAfter", async () => {
    const result = await rateLimiter.waitUntilAllowed(actionCtx, "emails", { key: "u", maxWait: MINUTE });
    if (result.ok) expectTypeOf(result.waited).toEqualTypeOf<number>();
    else expectTypeOf(result.retryAfter).toEqualTypeOf<number>();
    rateLimiter.waitUntilAllowed(actionCtx, "quota");
    // @ts-expect-error a concurrency limit can't wait here
    rateLimiter.waitUntilAllowed(actionCtx, "jobs");
  });

  test("from an action only: a mutation can't sleep", () => {
    // @ts-expect-error a mutation's ctx has no runAction
    rateLimiter.waitUntilAllowed(mutationCtx, "emails");
  });
});
