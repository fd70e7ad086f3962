// @vitest-environment jsdom
// Covers useRateLimit on a sliding window in jsdom: the hook's query is the real hookAPI one on convex-test (register()), fed to a mocked useQuery; fake timers drive the clock. The countdown flips exactly at retryAt, and the server refuses 1 ms before retryAt and admits at it.
import { act, renderHook } from "@testing-library/react";
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE } from "../src/client/index.js";
import type { GetValueResult } from "../src/shared/shapes/validators.js";
import { useRateLimit, type UseRateLimitOptions } from "../src/react/index.js";
import type * as slidingHook from "./app/slidingHook.js";
import { makeTest } from "./setup.js";

const mocks = vi.hoisted(() => ({
  /** What the mocked useQuery returns. */
  result: undefined as GetValueResult | undefined,
  /** What the hook last passed to useQuery. */
  args: undefined as unknown,
  /** The server's getServerTime, called by the mocked client. */
  serverTime: async (): Promise<number> => Date.now(),
}));
const client = vi.hoisted(() => ({ mutation: () => mocks.serverTime() }));

vi.mock("convex/react", () => ({
  useQuery: (_query: unknown, args: unknown) => {
    mocks.args = args;
    return mocks.result;
  },
  useConvex: () => client,
}));

/** The app's API, typed as codegen would type it from test/app/slidingHook.ts. */
const api = anyApi as unknown as ApiFromModules<{ slidingHook: typeof slidingHook }>;

const T0 = Date.UTC(2030, 0, 1);

type Test = ReturnType<typeof makeTest>;

/** Sets the clock (both the fake timers' and Date's) to `at`, firing any timer due on the way. */
async function advanceTo(at: number) {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(at - Date.now());
  });
}

/**
 * Renders the hook for room `key` with what the real query answers now (as useQuery would), and
 * measures the clock offset through the real getServerTime.
 */
async function watch(t: Test, key: string, options: UseRateLimitOptions = {}) {
  mocks.serverTime = () => t.mutation(api.slidingHook.getServerTime, {});
  mocks.result = await t.query(api.slidingHook.getRateLimit, { key });
  let renders = 0;
  const hook = renderHook(() => {
    renders++;
    return useRateLimit(api.slidingHook.getRateLimit, { key, getServerTimeMutation: api.slidingHook.getServerTime, ...options });
  });
  await act(async () => {
    await vi.advanceTimersByTimeAsync(0); // the offset measurement answers
  });
  expect(mocks.args).toEqual({ key });
  return { ...hook, renders: () => renders };
}

/** The first window boundary after `t` of the windows `data` describes (phase `config.start`). */
function boundaryAfter(data: GetValueResult, t: number): number {
  const start = data.config.kind === "sliding window" ? (data.config.start ?? 0) : 0;
  const phase = ((start % MINUTE) + MINUTE) % MINUTE;
  return phase + (Math.floor((t - phase) / MINUTE) + 1) * MINUTE;
}

/** Whether the server admits `count` for room `key` at instant `at` (it takes them if so). */
async function admitted(t: Test, key: string, at: number, count = 1): Promise<boolean> {
  vi.setSystemTime(at);
  return (await t.mutation(api.slidingHook.take, { key, count })).ok;
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
  mocks.result = undefined;
});

describe("useRateLimit on an approximate sliding window (about 3 in any minute)", () => {
  test("the query reports the window's phase and the previous window's count", async () => {
    const t = makeTest();
    // Each take at its own millisecond, T0 to T0 + 2 ms: convex-test's clock moves with commits,
    // so a third call at one frozen instant would run 1 ms later anyway.
    for (let i = 0; i < 3; i++) expect(await admitted(t, "a", T0 + i)).toBe(true);
    const data = await t.query(api.slidingHook.getRateLimit, { key: "a" });
    expect(data).toMatchObject({ value: 0, ts: T0 + 2, prev: 0, config: { kind: "sliding window", exact: false, rate: 3, period: MINUTE } });
    expect(data.config.kind === "sliding window" && data.config.start).toEqual(expect.any(Number));
  });

  test("emptied mid-window: nothing slides out until the boundary, then a token every 20 s", async () => {
    const t = makeTest();
    // Each take at its own millisecond: at one frozen instant convex-test would run the third 1 ms
    // ahead of Date.now, and the hook would rightly measure the server's clock 1 ms ahead.
    for (let i = 0; i < 3; i++) expect(await admitted(t, "a", T0 + i)).toBe(true);
    const { result, renders } = await watch(t, "a");
    const data = mocks.result!;
    // The window holding T0 .. T0 + 2 ms took 3 and the one before nothing: level at 0 until the
    // boundary, then the 3 slide out over the next minute, one every 20 s.
    expect(boundaryAfter(data, T0)).toBe(boundaryAfter(data, T0 + 2));
    const retryAt = boundaryAfter(data, T0) + 20_000;
    const refused = result.current.status;
    expect(refused).toEqual({ ok: false, retryAt });
    await advanceTo(retryAt - 1);
    expect(result.current.status).toBe(refused); // the countdown is still running
    const before = renders();
    await advanceTo(retryAt);
    expect(result.current.status).toEqual({ ok: true }); // flipped by itself, exactly then
    expect(renders()).toBe(before + 1);
    // The server agrees to the ms.
    expect(await admitted(t, "a", retryAt - 1)).toBe(false);
    expect(await admitted(t, "a", retryAt)).toBe(true);
  });

  test.each([
    // count 1: exactly at the boundary, where the window before has slid out entirely
    [1, 0],
    // count 2: across the boundary, where the slope changes from the window before's 3 a minute
    // to the ended window's 2: 1 at the boundary, the 2nd 30 s later
    [2, 30_000],
    // count 3 (the rate): when the ended window has slid out too, full
    [3, 60_000],
  ])("after takes in two windows, count %d: retryAt is exact, on the hook's clock and the server's", async (count, after) => {
    const t = makeTest();
    const probe = await t.query(api.slidingHook.getRateLimit, { key: "b" });
    const b1 = boundaryAfter(probe, T0);
    const b2 = b1 + MINUTE;
    // 3 in the window holding T0. 45 s into the next one, 3 - 3 x 15/60 = 2.25 are back: take 2.
    for (let i = 0; i < 3; i++) expect(await admitted(t, "b", T0)).toBe(true);
    expect(await admitted(t, "b", b1 + 45_000, 2)).toBe(true);
    const { result } = await watch(t, "b", { count });
    const retryAt = b2 + after;
    expect(result.current.status).toEqual({ ok: false, retryAt });
    // The hook's own check agrees with itself on either side.
    expect(result.current.check(retryAt - 1, count)).toMatchObject({ ok: false, retryAt });
    expect(result.current.check(retryAt, count)).toMatchObject({ ok: true });
    await advanceTo(retryAt - 1);
    expect(result.current.status).toEqual({ ok: false, retryAt });
    await advanceTo(retryAt);
    expect(result.current.status).toEqual({ ok: true });
    expect(await admitted(t, "b", retryAt - 1, count)).toBe(false);
    expect(await admitted(t, "b", retryAt, count)).toBe(true);
  });
});

describe("useRateLimit on an exact sliding window (3 in any minute)", () => {
  /** Renders the hook on the exact window for room `key`, as {@link watch} does. */
  async function watchExact(t: Test, key: string, count = 1) {
    mocks.serverTime = () => t.mutation(api.slidingHook.getExactServerTime, {});
    mocks.result = await t.query(api.slidingHook.getExactRateLimit, { key });
    const hook = renderHook(() => useRateLimit(api.slidingHook.getExactRateLimit, { key, count, getServerTimeMutation: api.slidingHook.getExactServerTime }));
    await act(async () => {
      await vi.advanceTimersByTimeAsync(0);
    });
    return hook;
  }
  async function admittedExact(t: Test, key: string, at: number, count = 1): Promise<boolean> {
    vi.setSystemTime(at);
    return (await t.mutation(api.slidingHook.takeExact, { key, count })).ok;
  }

  test("the query reports the log, and a config with no phase", async () => {
    const t = makeTest();
    expect(await admittedExact(t, "a", T0)).toBe(true);
    const data = await t.query(api.slidingHook.getExactRateLimit, { key: "a" });
    expect(data).toMatchObject({ value: 2, ts: T0, config: { kind: "sliding window", exact: true, rate: 3, period: MINUTE } });
    expect(data.log).toBeInstanceOf(ArrayBuffer);
    expect(data.config.kind === "sliding window" && data.config.start).toBeUndefined();
  });

  test.each([
    // count 1: when the first take (T0) leaves, a minute after it
    [1, MINUTE],
    // count 2: when the second (T0 + 10 s) leaves too
    [2, MINUTE + 10_000],
    // count 3: when all three have
    [3, MINUTE + 20_000],
  ])("three takes 10 s apart, count %d: retryAt is when enough have left, on the hook's clock and the server's", async (count, after) => {
    const t = makeTest();
    for (const at of [T0, T0 + 10_000, T0 + 20_000]) expect(await admittedExact(t, "b", at)).toBe(true);
    vi.setSystemTime(T0 + 30_000);
    const { result } = await watchExact(t, "b", count);
    const retryAt = T0 + after;
    expect(result.current.status).toEqual({ ok: false, retryAt });
    expect(result.current.check(retryAt - 1, count)).toMatchObject({ ok: false, retryAt });
    expect(result.current.check(retryAt, count)).toMatchObject({ ok: true });
    await advanceTo(retryAt - 1);
    expect(result.current.status).toEqual({ ok: false, retryAt });
    await advanceTo(retryAt);
    expect(result.current.status).toEqual({ ok: true });
    expect(await admittedExact(t, "b", retryAt - 1, count)).toBe(false);
    expect(await admittedExact(t, "b", retryAt, count)).toBe(true);
  });
});
