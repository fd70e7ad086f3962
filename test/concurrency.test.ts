// Concurrency limits, pure: decideAcquire and predictAcquire (the hook's) as tables with explicit instants (each row says why), and the acquire, release, extend and getValue flows over the in-memory lease store (tools/lease-store.ts) with a hand-moved clock.
import { ConvexError } from "convex/values";
import { describe, expect, test } from "vitest";
import { decideAcquire, predictAcquire, type AcquireDecision, type AcquirePrediction } from "../src/shared/flow/concurrency.js";
import { concurrencyHeaders } from "../src/client/index.js";
import type { ConcurrencyConfig, LeaseValue } from "../src/shared/shapes/concurrency-validators.js";
import { MemoryLeases } from "../tools/lease-store.js";

const two: ConcurrencyConfig = { kind: "concurrency", capacity: 2, lease: 1000 };

describe("decideAcquire", () => {
  const rows: [live: number[], config: ConcurrencyConfig, now: number, want: AcquireDecision, why: string][] = [
    [[], two, 0, { ok: true, expiresAt: 1000 }, "nothing held: admitted, the lease runs lease ms from now"],
    [[500], two, 100, { ok: true, expiresAt: 1100 }, "one of two held: admitted"],
    [[500, 300], two, 100, { ok: false, retryAfter: 200 }, "both held: wait for the earliest (300), whatever the order"],
    [[101, 900], two, 100, { ok: false, retryAfter: 1 }, "the earliest expires 1 ms from now: retry in 1 ms"],
    [[100.5, 900], two, 100, { ok: false, retryAfter: 1 }, "a fractional expiry rounds up to whole ms, never down"],
    [[400, 200, 300], two, 100, { ok: false, retryAfter: 200 }, "three held (capacity lowered to 2): two must expire, so the second earliest (300)"],
    [[5000, 6000, 7000, 8000], two, 100, { ok: false, retryAfter: 6900 }, "four held of two: three must expire, the third is 7000"],
    [[], { kind: "concurrency", capacity: 1, lease: 1 }, 7, { ok: true, expiresAt: 8 }, "the shortest lease, 1 ms"],
    [[50], { kind: "concurrency", capacity: 1, lease: 10 }, -20, { ok: false, retryAfter: 70 }, "a clock that went backwards: the lease counts longer, never less"],
  ];
  test.each(rows)("%j of %o at %d → %o (%s)", (live, config, now, want) => {
    expect(decideAcquire(live, config, now)).toEqual(want);
  });
});

describe("the flows over memory", () => {
  const args = { name: "gen", key: "u1", config: two };

  test("acquire, release (idempotent) and expiry: a crashed holder's slot frees exactly at its expiry", () => {
    const store = new MemoryLeases();
    const a = store.acquire(args, 0);
    const b = store.acquire(args, 10);
    expect(a).toMatchObject({ ok: true, expiresAt: 1000 });
    expect(b).toMatchObject({ ok: true, expiresAt: 1010 });
    expect(store.acquire(args, 20)).toEqual({ ok: false, retryAfter: 980 });
    // Another key is unaffected.
    expect(store.acquire({ ...args, key: "u2" }, 20).ok).toBe(true);
    if (!b.ok) throw new Error("b was admitted");
    expect(store.release(b.lease, 30)).toEqual({ released: true });
    expect(store.release(b.lease, 31)).toEqual({ released: false }); // a second release is harmless
    expect(store.release("no such lease", 31)).toEqual({ released: false });
    const c = store.acquire(args, 40);
    expect(c.ok).toBe(true);
    // `a` crashed: it is never released. Its slot counts until 1000 and is free at 1000.
    expect(store.acquire(args, 999)).toEqual({ ok: false, retryAfter: 1 });
    expect(store.value(args, 999)).toEqual({ inFlight: 2, capacity: 2, ts: 999, earliestExpiry: 1000 });
    expect(store.value(args, 1000)).toEqual({ inFlight: 1, capacity: 2, ts: 1000, earliestExpiry: 1040 });
    expect(store.acquire(args, 1000).ok).toBe(true);
    // Releasing the expired lease late is harmless and frees nothing that counted.
    if (!a.ok) throw new Error("a was admitted");
    expect(store.release(a.lease, 1001)).toEqual({ released: false });
  });

  test("extend moves an unexpired lease's expiry forward, never back; an expired lease can't be extended", () => {
    const store = new MemoryLeases();
    const a = store.acquire(args, 0);
    if (!a.ok) throw new Error("admitted");
    expect(store.extend(a.lease, undefined, 900)).toEqual({ ok: true, expiresAt: 1900 }); // its own length from now
    expect(store.extend(a.lease, 10, 950)).toEqual({ ok: true, expiresAt: 1900 }); // never shortened
    expect(store.extend(a.lease, 5000, 1000)).toEqual({ ok: true, expiresAt: 6000 });
    expect(store.value(args, 5999).inFlight).toBe(1);
    expect(store.extend(a.lease, undefined, 6000)).toEqual({ ok: false }); // expired: its slot may be another's
    expect(store.size).toBe(0); // and the failed extend deleted it
    expect(store.extend("nope", undefined, 0)).toEqual({ ok: false });
  });

  test("throws: a refusal raises RateLimited naming the limit, with the same retryAfter", () => {
    const store = new MemoryLeases();
    store.acquire(args, 0);
    store.acquire(args, 0);
    let error: unknown;
    try {
      store.acquire({ ...args, throws: true }, 250);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConvexError);
    expect(error instanceof ConvexError ? error.data : undefined).toEqual({ kind: "RateLimited", name: "gen", retryAfter: 750 });
  });

  test("deleteExpired removes only expired leases", () => {
    const store = new MemoryLeases();
    store.acquire(args, 0);
    store.acquire(args, 500);
    expect(store.deleteExpired(1000)).toBe(1); // expiresAt 1000 is expired at 1000
    expect(store.value(args, 1000).inFlight).toBe(1);
  });
});

describe("concurrencyHeaders", () => {
  const rows: [value: LeaseValue, refused: { retryAfter: number } | undefined, want: Record<string, string>, why: string][] = [
    [{ inFlight: 0, capacity: 2, ts: 0 }, undefined, { RateLimit: '"gen";r=2;t=0' }, "nothing held: both slots free, nothing to wait for"],
    [{ inFlight: 1, capacity: 2, ts: 0, earliestExpiry: 90_000 }, undefined, { RateLimit: '"gen";r=1;t=0' }, "a slot is free: t is 0 whatever the leases' expiry"],
    [
      { inFlight: 2, capacity: 2, ts: 0, earliestExpiry: 1001 },
      { retryAfter: 1001 },
      { RateLimit: '"gen";r=0;t=2', "Retry-After": "2" },
      "full and refused: seconds rounded up, never early",
    ],
    [{ inFlight: 3, capacity: 2, ts: 0, earliestExpiry: 500 }, undefined, { RateLimit: '"gen";r=0;t=1' }, "more held than capacity (lowered): r is 0, not negative"],
  ];
  test.each(rows)("%o, refused %o → %o (%s)", (value, refused, want) => {
    const headers = concurrencyHeaders("gen", value, refused);
    expect(headers).toEqual({ "RateLimit-Policy": `"gen";q=${value.capacity};qu="concurrent-requests"`, ...want });
  });
});

describe("predictAcquire", () => {
  const rows: [expiries: number[], now: number, count: 0 | 1, want: AcquirePrediction, why: string][] = [
    [[], 0, 1, { free: 2, ok: true }, "nothing held"],
    [[500, 900], 0, 1, { free: 0, ok: false, retryAfter: 500 }, "both held: until the earliest expires"],
    [[500, 900], 500, 1, { free: 1, ok: true }, "a lease stops counting at its expiry"],
    [[500, 900], 499, 1, { free: 0, ok: false, retryAfter: 1 }, "1 ms before it"],
    [[500, 900], 0, 0, { free: 0, ok: true }, "count 0 peeks: always ok"],
    [[100, 300, 200], 0, 1, { free: 0, ok: false, retryAfter: 200 }, "three held of two: two must expire"],
    [[100, 300, 200], 150, 1, { free: 0, ok: false, retryAfter: 50 }, "the expired one no longer counts"],
  ];
  test.each(rows)("%j at %d, count %d: %j (%s)", (expiries, now, count, want) => {
    expect(predictAcquire(expiries, two, now, count)).toEqual(want);
  });
});
