// A key that owes (work reserved ahead) when its config switches kind, token bucket to fixed window and back, at explicit instants: nothing is granted before its own terms repay the debt, and the new terms grant from there (src/shared/shards/layout.ts, owedAcross), as within a kind.
import { describe, expect, test } from "vitest";
import { SECOND, type RateLimitConfig } from "../src/client/index.js";
import { MemoryStore } from "../tools/memory-store.js";

const T0 = 1_700_000_000_000; // a whole second: fixed windows of start 0 and whole seconds start here
const at = { name: "switched" };
const never = () => 0;

describe("a token bucket's debt into a fixed window", () => {
  // 1 a second, up to 20 reservable: 11 reserved at T0 leaves it owing 10, repaid at T0 + 10 s.
  const bucket: RateLimitConfig = { kind: "token bucket", rate: 1, period: SECOND, maxReserved: 20 };
  const window: RateLimitConfig = { kind: "fixed window", rate: 100, period: SECOND, start: 0 };
  const owing = () => {
    const store = new MemoryStore();
    expect(store.limit({ ...at, config: bucket, count: 11, reserve: true }, T0, never)).toEqual({ ok: true, retryAfter: 10 * SECOND });
    return store;
  };

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
    const store = new MemoryStore();
    expect(store.limit({ ...at, config: window, count: 25, reserve: true }, T0, never)).toEqual({ ok: true, retryAfter: 2 * SECOND });
    // Owing 30 tokens of 10 a second from T0: 0 at T0 + 3 s, 1 more each 100 ms.
    expect(store.getValue({ ...at, config: bucket }, T0 + SECOND, never).value).toBe(-20);
    expect(store.check({ ...at, config: bucket, count: 1 }, T0 + 3 * SECOND, never)).toEqual({ ok: false, retryAfter: 100 });
    expect(store.limit({ ...at, config: bucket, count: 1 }, T0 + 3 * SECOND + 100, never)).toEqual({ ok: true });
  });
});
