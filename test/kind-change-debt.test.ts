// A key that owes (work reserved ahead) when its config switches kind, token bucket to fixed window and back, at explicit instants: nothing is granted before its own terms repay the debt, and the new terms grant from there (src/shared/shards/layout.ts, owedAcross), as within a kind.
import { describe, expect, test } from "vitest";
import { calendarWindow, SECOND, type RateLimitConfig } from "../src/client/index.js";
import { MemoryStore } from "../tools/memory-store.js";

const T0 = 1_700_000_000_000; // a whole second: fixed windows of start 0 and whole seconds start here
const at = { name: "switched" };
const never = () => 0;

/** A store whose key reserved `count` at T0 under `config`, its work to run `retryAfter` ms later. */
function reserved(config: RateLimitConfig, count: number, retryAfter: number): MemoryStore {
  const store = new MemoryStore();
  expect(store.limit({ ...at, config, count, reserve: true }, T0, never)).toEqual({ ok: true, retryAfter });
  return store;
}

describe("a token bucket's debt into a fixed window", () => {
  // 1 a second, up to 20 reservable: 11 reserved at T0 leaves it owing 10, repaid at T0 + 10 s.
  const bucket: RateLimitConfig = { kind: "token bucket", rate: 1, period: SECOND, maxReserved: 20 };
  const window: RateLimitConfig = { kind: "fixed window", rate: 100, period: SECOND, start: 0 };
  const owing = () => reserved(bucket, 11, 10 * SECOND);

  test("no window opens before the queued work runs: the first starting then holds the new rate", () => {
    const store = owing();
    // Carried as a value from the row's stamp, 100 a window would repay the 10 by T0 + 1 s and
    // serve 90 there, while the work reserved under the bucket still waits for its turn.
    expect(store.limit({ ...at, config: window, count: 50 }, T0 + SECOND, never)).toEqual({ ok: false, retryAfter: 9 * SECOND });
    expect(store.check({ ...at, config: window, count: 1 }, T0 + 10 * SECOND - 1, never)).toEqual({ ok: false, retryAfter: 1 });
    expect(store.limit({ ...at, config: window, count: 100 }, T0 + 10 * SECOND, never)).toEqual({ ok: true });
    expect(store.check({ ...at, config: window, count: 1 }, T0 + 10 * SECOND, never)).toEqual({ ok: false, retryAfter: SECOND });
  });

  test("getValue agrees: owing until then, the window's rate from then", () => {
    const store = owing();
    expect(store.getValue({ ...at, config: window }, T0 + 5 * SECOND, never).value).toBeLessThan(0);
    expect(store.getValue({ ...at, config: window }, T0 + 10 * SECOND, never).value).toBe(100);
  });
});

describe("a fixed window's debt into a token bucket", () => {
  // 10 a window, up to 20 reservable: 25 reserved at T0 owes 15, repaid by the window starting at
  // T0 + 2 s, which holds what is left (5) until it ends at T0 + 3 s.
  const window: RateLimitConfig = { kind: "fixed window", rate: 10, period: SECOND, start: 0, maxReserved: 20 };
  const bucket: RateLimitConfig = { kind: "token bucket", rate: 10, period: SECOND };

  test("the bucket refills from the end of the window that repays the debt, owing until then", () => {
    const store = reserved(window, 25, 2 * SECOND);
    // Owing 30 tokens of 10 a second from T0: 0 at T0 + 3 s, 1 more each 100 ms.
    expect(store.getValue({ ...at, config: bucket }, T0 + SECOND, never).value).toBe(-20);
    expect(store.check({ ...at, config: bucket, count: 1 }, T0 + 3 * SECOND, never)).toEqual({ ok: false, retryAfter: 100 });
    expect(store.limit({ ...at, config: bucket, count: 1 }, T0 + 3 * SECOND + 100, never)).toEqual({ ok: true });
  });
});

describe("where the promise ends, and what the first window holds", () => {
  // 2 a second, 12 reserved at T0: owing 10, repaid at T0 + 5 s.
  const bucket: RateLimitConfig = { kind: "token bucket", rate: 2, period: SECOND, maxReserved: 20 };
  const owing = () => reserved(bucket, 12, 5 * SECOND);

  test("windows starting half a second off: the one holding T0 + 5 s started before it and grants nothing; the next, at 5.5 s, holds the rate and no more than it", () => {
    // 100 a window, up to 150 kept, windows starting at 500 ms past each second.
    const window: RateLimitConfig = { kind: "fixed window", rate: 100, period: SECOND, capacity: 150, start: 500 };
    const store = owing();
    expect(store.check({ ...at, config: window, count: 1 }, T0 + 5 * SECOND, never)).toEqual({ ok: false, retryAfter: 500 });
    expect(store.check({ ...at, config: window, count: 1 }, T0 + 5.5 * SECOND - 1, never)).toEqual({ ok: false, retryAfter: 1 });
    expect(store.check({ ...at, config: window, count: 101 }, T0 + 5.5 * SECOND, never).ok).toBe(false);
    expect(store.limit({ ...at, config: window, count: 100 }, T0 + 5.5 * SECOND, never)).toEqual({ ok: true });
  });

  test("a calendar quota's terms carry the debt as before (its value from the row's stamp), as within a kind", () => {
    const store = owing();
    const daily = calendarWindow({ kind: "calendar", rate: 100, period: "day", timeZone: "UTC" });
    expect(store.getValue({ ...at, config: daily }, T0 + SECOND, never).value).toBe(-10);
    // Written under the quota (a refusal writes the carry-over), then back to the bucket: the
    // quota's row owing 10 holds it until its day ends, and the bucket refills from there.
    expect(store.limit({ ...at, config: daily, count: 1 }, T0 + SECOND, never).ok).toBe(false);
    expect(store.getValue({ ...at, config: bucket }, T0 + 2 * SECOND, never).value).toBe(-10);
  });
});
