// Compile-time guarantees of the HTTP helpers, checked by tsc under `vitest --typecheck`: limit names
// checked against the RateLimiter, details required, and a 429 only for a refused result.
import { describe, expectTypeOf, test } from "vitest";
import {
  MINUTE,
  RateLimiter,
  rateLimitHeaders,
  tooManyRequests,
  withJitter,
  type RateLimitHeaders,
  type RateLimitReturns,
  type RateLimitReturnsWithDetails,
} from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";

declare const component: ComponentApi;
declare const result: RateLimitReturnsWithDetails;
declare const plain: RateLimitReturns;
const rateLimiter = new RateLimiter(component, {
  apiKeyRequests: { kind: "token bucket", rate: 5, period: MINUTE },
});

describe("rateLimitHeaders", () => {
  test("takes a name the RateLimiter defines, or any name with its config", () => {
    expectTypeOf(rateLimitHeaders("apiKeyRequests", result, rateLimiter)).toEqualTypeOf<RateLimitHeaders>();
    rateLimitHeaders("anything", result, { kind: "fixed window", rate: 1, period: MINUTE });
    // @ts-expect-error a misspelled name
    rateLimitHeaders("apiKeyRequest", result, rateLimiter);
  });

  test("needs the result's details (`details: true`)", () => {
    // @ts-expect-error no details
    rateLimitHeaders("apiKeyRequests", plain, rateLimiter);
  });

  test("its fields fit a Response's headers", () => {
    expectTypeOf(rateLimitHeaders("apiKeyRequests", result, rateLimiter)).toExtend<HeadersInit>();
  });
});

describe("tooManyRequests", () => {
  test("takes only a refused result", () => {
    if (!result.ok) expectTypeOf(tooManyRequests("apiKeyRequests", result, rateLimiter)).toEqualTypeOf<Response>();
    // @ts-expect-error not narrowed to ok: false
    tooManyRequests("apiKeyRequests", result, rateLimiter);
  });
});

describe("withJitter", () => {
  test("takes a result's optional retryAfter and returns ms", () => {
    expectTypeOf(withJitter(plain.retryAfter)).toEqualTypeOf<number>();
  });
});
