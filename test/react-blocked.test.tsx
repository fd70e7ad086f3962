// @vitest-environment jsdom
// useRateLimit under a block or lockout the server reported (blockedUntil), in jsdom with convex/react mocked and fake timers: refused until the later of the block's end and the tokens' wait, as the server's verdict decides (the shared blockedWait), re-enabled at that instant.
import { act, renderHook } from "@testing-library/react";
import { makeFunctionReference } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE } from "../src/shared/kinds/algebra.js";
import { blockedWait } from "../src/shared/overrides/overrides.js";
import { calculateRateLimit } from "../src/shared/kinds/predict.js";
import type { GetValueResult, RateLimitConfig } from "../src/shared/shapes/validators.js";
import { useRateLimit, type GetRateLimitValueQuery } from "../src/react/index.js";

const mocks = vi.hoisted(() => ({ result: undefined as GetValueResult | undefined }));

vi.mock("convex/react", () => ({
  useQuery: () => mocks.result,
  useConvex: () => ({ mutation: () => new Promise(() => undefined) }),
}));

const getRateLimit: GetRateLimitValueQuery = makeFunctionReference<"query">("messages:getRateLimit");
const T0 = Date.UTC(2030, 0, 1);
/** 10 a minute, bursts of 3: one token every 6 s. */
const bucket: RateLimitConfig = { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 };

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  mocks.result = undefined;
});
afterEach(() => {
  vi.useRealTimers();
});

async function advance(ms: number) {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(ms);
  });
}

describe("a block the server reported", () => {
  // Each row: tokens at T0, the block's end (ms after T0), when the hook re-enables (ms after T0).
  const rows: [value: number, blockedFor: number, reenables: number, why: string][] = [
    [3, 5000, 5000, "tokens there: the block's end decides"],
    [-1, 5000, 12_000, "a token owed, back in 12 s: the tokens' wait outlasts the block"],
    [0, 9000, 9000, "a token back in 6 s: the block outlasts the tokens' wait"],
    [0, 6000, 6000, "the block lifts as the token comes back: both at 6 s"],
  ];
  test.each(rows)("value %d, blocked for %i ms: re-enabled at T0 + %i (%s)", async (value, blockedFor, reenables) => {
    mocks.result = { value, ts: T0, shard: 0, config: bucket, blockedUntil: T0 + blockedFor, blockedBy: "key" };
    const hook = renderHook(() => useRateLimit(getRateLimit));
    // The server's rule, from the same state: the later of the block's end and the tokens' wait.
    const tokens = calculateRateLimit({ value, ts: T0 }, bucket, T0, 1).retryAfter;
    expect(blockedWait(T0 + blockedFor, T0, tokens)).toBe(reenables);
    expect(hook.result.current.status).toEqual({ ok: false, retryAt: T0 + reenables });
    expect(hook.result.current.check(T0 + reenables - 1, 1)).toMatchObject({ ok: false, retryAt: T0 + reenables });
    expect(hook.result.current.check(T0 + reenables, 1)).toMatchObject({ ok: true, retryAt: undefined });
    await advance(reenables - 1);
    expect(hook.result.current.status).toEqual({ ok: false, retryAt: T0 + reenables });
    await advance(1);
    expect(hook.result.current.status).toEqual({ ok: true });
  });

  test("a block that ended: the tokens decide alone", () => {
    mocks.result = { value: -1, ts: T0, shard: 0, config: bucket, blockedUntil: T0 - 1, blockedBy: "tier" };
    const hook = renderHook(() => useRateLimit(getRateLimit));
    expect(blockedWait(T0 - 1, T0, 12_000)).toBeUndefined();
    expect(hook.result.current.status).toEqual({ ok: false, retryAt: T0 + 12_000 });
  });
});
