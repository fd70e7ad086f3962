// @vitest-environment jsdom
// useRateLimit on a calendar quota, in jsdom with convex/react mocked and fake timers: from getValue's report (the fixed window the quota runs as, with `calendar`) the hook counts down to resetsAt, a 23-hour day in New York included, and turns ok by itself exactly there.
import { act, renderHook } from "@testing-library/react";
import { makeFunctionReference } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { calendarWindow } from "../src/client/index.js";
import type { GetValueResult } from "../src/shared/shapes/validators.js";
import { useRateLimit, type GetRateLimitValueQuery, type GetServerTimeMutation, type UseRateLimitOptions } from "../src/react/index.js";

const mocks = vi.hoisted(() => ({ result: undefined as GetValueResult | undefined }));
// The server's clock reads as the browser's (the offset measurement answers at once): without a
// measurement the hook takes the report's `ts`, a period's start, as the server's time, and waits longer.
const client = vi.hoisted(() => ({ mutation: async () => Date.now() }));
vi.mock("convex/react", () => ({ useQuery: () => mocks.result, useConvex: () => client }));

const getRateLimit: GetRateLimitValueQuery = makeFunctionReference<"query">("features/calendar:getRateLimit");
const getServerTimeMutation: GetServerTimeMutation = makeFunctionReference<"mutation", Record<string, never>, number>("features/calendar:getServerTime");

/** Renders the hook, and lets the clock offset's measurement settle. */
async function render(options: UseRateLimitOptions = {}) {
  const hook = renderHook(() => useRateLimit(getRateLimit, { ...options, getServerTimeMutation }));
  await act(async () => {
    await vi.advanceTimersByTimeAsync(0);
  });
  return hook;
}
const iso = (s: string) => Date.parse(s);
// 8 March 2026 in New York: clocks go forward, the day runs from 05:00 UTC to 04:00 UTC the next day.
const DAY_START = iso("2026-03-08T05:00:00Z");
const RESETS_AT = iso("2026-03-09T04:00:00Z");
const NOW = iso("2026-03-08T12:00:00Z");

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(NOW);
});
afterEach(() => vi.useRealTimers());

describe("useRateLimit on a calendar quota", () => {
  test("used up: refused until resetsAt (23 hours after the day began), then ok by itself there", async () => {
    const config = calendarWindow({ kind: "calendar", rate: 3, period: "day", timeZone: "America/New_York" });
    mocks.result = { value: 0, ts: DAY_START, shard: 0, config, resetsAt: RESETS_AT };
    const { result } = await render();
    expect(result.current.status).toEqual({ ok: false, retryAt: RESETS_AT });
    await act(async () => {
      await vi.advanceTimersByTimeAsync(RESETS_AT - Date.now() - 1);
    });
    expect(result.current.status).toEqual({ ok: false, retryAt: RESETS_AT });
    await act(async () => {
      await vi.advanceTimersByTimeAsync(1);
    });
    expect(result.current.status).toEqual({ ok: true });
  });

  test("tokens left: ok now; a count above what is left waits for resetsAt", async () => {
    const config = calendarWindow({ kind: "calendar", rate: 3, period: "day", timeZone: "America/New_York" });
    mocks.result = { value: 1, ts: DAY_START, shard: 0, config, resetsAt: RESETS_AT };
    expect((await render()).result.current.status).toEqual({ ok: true });
    expect((await render({ count: 2 })).result.current.status).toEqual({ ok: false, retryAt: RESETS_AT });
  });
});
