// @vitest-environment jsdom
// Covers useRateLimit in jsdom via renderHook, with convex/react's useQuery/useConvex mocked and fake timers driving both clocks.
import { fc, test as fcTest } from "@fast-check/vitest";
import { act, renderHook } from "@testing-library/react";
import { getFunctionName, makeFunctionReference } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { DAY, MINUTE } from "../src/shared/kinds/algebra.js";
import { calculateRateLimit } from "../src/shared/kinds/predict.js";
import type { GetValueResult, RateLimitConfig } from "../src/shared/shapes/validators.js";
import { isInvalidRateLimitError } from "../src/client/index.js";
import {
  useRateLimit,
  type GetRateLimitValueQuery,
  type GetServerTimeMutation,
  type UseRateLimitOptions,
} from "../src/react/index.js";

const mocks = vi.hoisted(() => ({
  /** What the mocked useQuery returns. */
  result: undefined as GetValueResult | undefined,
  /** The query names and args the hook passed to useQuery, one per render. */
  queries: [] as { name: unknown; args: unknown }[],
  /** The mocked client's mutation; each test installs an implementation. */
  mutation: vi.fn<(ref: GetServerTimeMutation, args: unknown) => Promise<number>>(),
}));
/** The client useConvex returns: one object, as the real one comes from a context. */
const client = vi.hoisted(() => ({ mutation: mocks.mutation }));

vi.mock("convex/react", async () => {
  const { getFunctionName } = await import("convex/server");
  return {
    useQuery: (query: Parameters<typeof getFunctionName>[0], args: unknown) => {
      mocks.queries.push({ name: getFunctionName(query), args });
      return mocks.result;
    },
    useConvex: () => client,
  };
});

const getRateLimit: GetRateLimitValueQuery = makeFunctionReference<"query">("messages:getRateLimit");
/** A fresh reference object each time, as `api.messages.getServerTime` gives on each access. */
const getServerTime = (): GetServerTimeMutation =>
  makeFunctionReference<"mutation", Record<string, never>, number>("messages:getServerTime");

const T0 = Date.UTC(2030, 0, 1);
/** 10 a minute, bursts of 3: one token every 6 s. */
const bucket: RateLimitConfig = { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 };

function data(value: number, ts: number, config: RateLimitConfig = bucket, extra: Partial<GetValueResult> = {}) {
  return { value, ts, shard: 0, config, ...extra } satisfies GetValueResult;
}

/**
 * Makes the mocked getServerTime answer like a server whose clock reads `clientNow + skew`, with
 * `up` ms for the request to arrive and `down` ms for the answer to come back.
 */
function serverClock(skew: number, up: number, down = up) {
  mocks.mutation.mockImplementation(
    () =>
      new Promise<number>((resolve) => {
        const serverTime = Date.now() + up + skew;
        setTimeout(() => resolve(serverTime), up + down);
      }),
  );
}

/** Renders the hook with `options`; `renders` counts how often it rendered. */
function render(options: UseRateLimitOptions = {}) {
  let renders = 0;
  const hook = renderHook((opts: UseRateLimitOptions) => {
    renders++;
    return useRateLimit(getRateLimit, opts);
  }, { initialProps: options });
  return { ...hook, renders: () => renders };
}

/** Advances the fake clock inside act, letting promises (the offset measurement) settle. */
async function advance(ms: number) {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(ms);
  });
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  mocks.result = undefined;
  mocks.queries = [];
  mocks.mutation.mockReset();
  mocks.mutation.mockImplementation(() => new Promise<number>(() => undefined));
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks(); // the console.error spy
});

describe("what the hook sends", () => {
  test.each([
    // nothing given: nothing sent, so hookAPI without options accepts it
    [{}, {}],
    // each given field is sent as is; count and the mutation stay on the client
    [{ key: "alice", count: 2 }, { key: "alice" }],
    [{ sampleShards: 3 }, { sampleShards: 3 }],
    // a playground's name and config
    [{ name: "other", config: bucket }, { name: "other", config: bucket }],
  ] satisfies [UseRateLimitOptions, object][])("%o sends %o", (options, sent) => {
    render({ ...options, getServerTimeMutation: getServerTime() });
    expect(mocks.queries.at(-1)).toEqual({ name: "messages:getRateLimit", args: sent });
    // toEqual ignores keys holding undefined; the args must not even have them
    const args = mocks.queries.at(-1)?.args;
    expect(Object.keys(typeof args === "object" && args !== null ? args : { no: 0 }).sort()).toEqual(
      Object.keys(sent).sort(),
    );
  });
});

describe("status", () => {
  test("is undefined while loading, and check returns undefined", () => {
    const { result } = render();
    expect(result.current.status).toBeUndefined();
    expect(result.current.check()).toBeUndefined();
  });

  test("is ok when count tokens are there", () => {
    mocks.result = data(1, T0);
    const { result } = render();
    expect(result.current.status).toEqual({ ok: true });
    expect(result.current.status?.retryAt).toBeUndefined();
  });

  test("is refused until the next token, in client time", () => {
    mocks.result = data(0.5, T0);
    const { result } = render();
    // half a token missing at 10 a minute: 3 s
    expect(result.current.status).toEqual({ ok: false, retryAt: T0 + 3000 });
  });

  test("flips to ok by itself exactly at retryAt", async () => {
    mocks.result = data(0, T0);
    const { result, renders } = render();
    const refused = result.current.status;
    expect(refused).toEqual({ ok: false, retryAt: T0 + 6000 });
    await advance(5999);
    expect(result.current.status).toBe(refused);
    await advance(1);
    expect(result.current.status).toEqual({ ok: true });
    // one render at mount, one when the timer fired; no polling
    expect(renders()).toBe(2);
  });

  test("flips a 30-day quota to ok on time, past setTimeout's 24.8-day maximum", async () => {
    const quota: RateLimitConfig = { kind: "fixed window", rate: 1, period: 30 * DAY, start: T0 };
    mocks.result = data(0, T0, quota);
    const { result, renders } = render();
    const refused = result.current.status;
    expect(refused).toEqual({ ok: false, retryAt: T0 + 30 * DAY });
    await advance(1); // a too-long setTimeout fires at once; that must not end the wait
    await advance(25 * DAY); // past the first timer's maximum
    await advance(5 * DAY - 2);
    expect(result.current.status).toBe(refused);
    await advance(1);
    expect(result.current.status).toEqual({ ok: true });
    expect(renders()).toBeLessThanOrEqual(3);
  });

  test("keeps its identity, and check's, across renders while nothing changed", async () => {
    mocks.result = data(0, T0);
    const { result, rerender } = render();
    const first = result.current;
    await advance(2000);
    mocks.result = data(0, T0); // an equal result in a new object, as a re-run query gives
    rerender({});
    expect(result.current.status).toBe(first.status);
    expect(result.current.check).toBe(first.check);
    expect(result.current).toBe(first);
  });

  test("keeps the ok status's identity, and changes when the data does", () => {
    mocks.result = data(3, T0);
    const { result, rerender } = render();
    const ok = result.current.status;
    mocks.result = data(2, T0);
    rerender({});
    expect(result.current.status).toBe(ok); // still ok: same object
    mocks.result = data(0, T0);
    rerender({});
    expect(result.current.status).toEqual({ ok: false, retryAt: T0 + 6000 });
  });

  test("cancels its timer on unmount", () => {
    mocks.result = data(0, T0);
    const { unmount } = render();
    expect(vi.getTimerCount()).toBe(1);
    unmount();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("counts", () => {
  test.each([
    // count 2 with 1.5 there: half a token short, 3 s
    [1.5, 2, T0 + 3000],
    // count 3 (the capacity) from empty: 18 s
    [0, 3, T0 + 18_000],
    // count 2 with 2 there: ok
    [2, 2, undefined],
    // count 0 peeks: ok while not in debt
    [0, 0, undefined],
    // count 0 with a debt of 1 (reserved): ok once it's repaid, 6 s
    [-1, 0, T0 + 6000],
  ])("value %d, count %d: retryAt %s", (value, count, retryAt) => {
    mocks.result = data(value, T0);
    const { result } = render({ count });
    expect(result.current.status).toEqual(retryAt === undefined ? { ok: true } : { ok: false, retryAt });
  });

  test("check takes a client time and a count, defaulting to now and 0", () => {
    mocks.result = data(1, T0);
    const { result } = render();
    const check = result.current.check;
    expect(check()).toEqual({ value: 1, ts: T0, config: bucket, shard: 0, ok: true, retryAt: undefined });
    expect(check(T0, 3)).toMatchObject({ value: -2, ok: false, retryAt: T0 + 12_000 });
    expect(check(T0 + 12_000, 3)).toMatchObject({ value: 0, ts: T0 + 12_000, ok: true, retryAt: undefined });
  });

  test("a count above an unsharded limit's capacity throws InvalidRateLimit while rendering", () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined); // React logs render errors
    mocks.result = data(3, T0);
    let thrown: unknown;
    try {
      render({ count: 4 });
    } catch (error) {
      thrown = error;
    }
    expect(isInvalidRateLimitError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ data: { field: "count", value: "4" } });
    expect(thrown).toMatchObject({ data: { message: expect.stringContaining("exceeds the capacity (3)") } });
  });

  test("a count above one shard's capacity throws, naming the shard, and check does too", () => {
    const shard = { kind: "token bucket", rate: 2, period: MINUTE, capacity: 3 } satisfies RateLimitConfig;
    mocks.result = data(3, T0, shard, { shard: 4, total: { value: 30, capacity: 30, exact: true } });
    const { result } = render({ count: 3 });
    expect(result.current.status).toEqual({ ok: true });
    let thrown: unknown;
    try {
      result.current.check(T0, 4);
    } catch (error) {
      thrown = error;
    }
    expect(isInvalidRateLimitError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ data: { field: "count", message: expect.stringContaining("one shard") } });
  });
});

describe("clocks: clientTime + offset = serverTime", () => {
  test("measures the offset once, halving the round trip, and uses it", async () => {
    // The server's clock is 10 s ahead. Its row was written 3 s before the data arrived, empty.
    const skew = 10_000;
    serverClock(skew, 150, 150);
    mocks.result = data(0, T0 + skew - 3000);
    const { result, rerender } = render({ getServerTimeMutation: getServerTime() });
    // Unmeasured: the server is taken to be at the row's ts now, so 6 s from now (too late by 3 s).
    expect(result.current.status).toEqual({ ok: false, retryAt: T0 + 6000 });
    await advance(300);
    // Measured: the row refills 3 s after the data arrived, at client time T0 + 3000.
    expect(result.current.status).toEqual({ ok: false, retryAt: T0 + 3000 });
    expect(result.current.check(T0 + 2999, 1)).toMatchObject({ ok: false, retryAt: T0 + 3000 });
    expect(result.current.check(T0 + 3000, 1)).toMatchObject({ value: 0, ok: true });
    expect(result.current.check()?.ts).toBe(T0 + 300); // the evaluation time, in client time
    rerender({ getServerTimeMutation: getServerTime() }); // a new reference, the same mutation
    await advance(300);
    expect(mocks.mutation).toHaveBeenCalledTimes(1);
    const [ref, args] = mocks.mutation.mock.calls[0] ?? [];
    expect(ref && getFunctionName(ref)).toBe("messages:getServerTime");
    expect(args).toEqual({});
  });

  test("takes the answer as the round trip's midpoint: a slow request shifts it by half the asymmetry", async () => {
    // 250 ms up, 50 ms down: the server read its clock 100 ms after the midpoint
    serverClock(10_000, 250, 50);
    mocks.result = data(0, T0 + 10_000 - 3000);
    const { result } = render({ getServerTimeMutation: getServerTime() });
    await advance(300);
    expect(result.current.status).toEqual({ ok: false, retryAt: T0 + 3000 - 100 });
  });

  test("while the offset is unknown, a browser clock running ahead doesn't make it claim ok", () => {
    // The server is a minute behind the browser; the row was just written, empty.
    mocks.result = data(0, T0 - MINUTE);
    const { result } = render();
    // Trusting the browser's clock would see a minute elapsed and a full bucket.
    expect(calculateRateLimit({ value: 0, ts: T0 - MINUTE }, bucket, T0, 1).value).toBeGreaterThanOrEqual(0);
    expect(result.current.status).toEqual({ ok: false, retryAt: T0 + 6000 });
  });

  test("while the offset is unknown, it still flips by itself, counting from the data's arrival", async () => {
    mocks.result = data(0, T0 - MINUTE);
    const { result, rerender } = render();
    await advance(4000);
    rerender({}); // an unrelated render doesn't move the estimate
    expect(result.current.status).toEqual({ ok: false, retryAt: T0 + 6000 });
    await advance(2000);
    expect(result.current.status).toEqual({ ok: true });
  });

  test("a failed measurement leaves the conservative estimate in place", async () => {
    mocks.mutation.mockImplementation(() => Promise.reject(new Error("offline")));
    mocks.result = data(0, T0 - MINUTE);
    const { result } = render({ getServerTimeMutation: getServerTime() });
    await advance(10);
    expect(result.current.status).toEqual({ ok: false, retryAt: T0 + 6000 });
  });

  test("a new result restarts the estimate from its own arrival", async () => {
    mocks.result = data(3, T0 - MINUTE);
    const { result, rerender } = render();
    await advance(10_000);
    // the user sent three messages; the query re-ran at server time T0 - MINUTE + 10 s
    mocks.result = data(0, T0 - MINUTE + 10_000);
    rerender({});
    expect(result.current.status).toEqual({ ok: false, retryAt: T0 + 10_000 + 6000 });
  });

  fcTest.prop({
    skew: fc.integer({ min: -DAY, max: DAY }), // server minus client clock
    age: fc.integer({ min: 0, max: 10 * MINUTE }), // how long before arrival the row was written
    delay: fc.integer({ min: 0, max: 5000 }), // from the query's run to the hook's render
    value: fc.double({ min: -3, max: 3, noNaN: true }),
  })("never predicts ok before the server would (unknown offset)", ({ skew, age, delay, value }) => {
    vi.setSystemTime(T0);
    const written = T0 + skew - delay - age; // server time of the row
    mocks.result = data(value, written);
    const { result, unmount } = render();
    const status = result.current.status;
    unmount();
    // The server, at client time t, is at t + skew.
    const server = calculateRateLimit({ value, ts: written }, bucket, T0 + skew, 1);
    if (status === undefined) throw new Error("the data was given, so the status is known");
    if (status.ok) expect(server.value).toBeGreaterThanOrEqual(0);
    else {
      const at = calculateRateLimit({ value, ts: written }, bucket, status.retryAt + skew, 1);
      expect(at.value).toBeGreaterThanOrEqual(0);
      // and it's no earlier than the server's own retry time
      expect(status.retryAt).toBeGreaterThanOrEqual(T0 + (server.retryAfter ?? 0));
    }
  });
});
