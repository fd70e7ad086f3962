// signups.signUp and its hookAPI through convex-test and register(): one global fixed window of 100
// sign-ups an hour, refilled at the window boundary; fake timers put requests on either side of it,
// set before each call whose instant matters (a hundred sign-ups' commits move the deployment's
// clock a ms on, as a deployment's do).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { calculateRateLimit, HOUR, isInvalidRateLimitError, isRateLimitError, SECOND } from "convex-rate-limiter";
import { ConvexError } from "convex/values";
import { api } from "./_generated/api.js";
import { errorOf, makeTest } from "./test.setup.js";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2025, 0, 1, 9, 17));
});
afterEach(() => vi.useRealTimers());

type Test = ReturnType<typeof makeTest>;

/** Signs up `n` new accounts named `${prefix}0`, `${prefix}1`, ... */
async function signUpMany(t: Test, prefix: string, n: number) {
  for (let i = 0; i < n; i++) await t.mutation(api.signups.signUp, { name: `${prefix}${i}`, password: "pw" });
}

/** The `retryAfter` of a sign-up the window refuses; fails the test if it isn't refused. */
async function refusedFor(t: Test, name: string): Promise<number> {
  const error = await errorOf(t.mutation(api.signups.signUp, { name, password: "pw" }));
  if (!isRateLimitError(error)) throw error;
  expect(error.data.name).toBe("freeTrialSignUp");
  return error.data.retryAfter;
}

describe("signUp", () => {
  test("100 sign-ups an hour for everyone together; the window refills at its boundary", async () => {
    const t = makeTest();
    await signUpMany(t, "a", 100);
    vi.advanceTimersByTime(SECOND);
    const wait = await refusedFor(t, "late");
    // The next boundary is within the hour (the window's phase is hashed, not midnight).
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(HOUR);
    const boundary = Date.now() + wait;

    vi.setSystemTime(boundary - 1);
    expect(await refusedFor(t, "late")).toBe(1);

    vi.setSystemTime(boundary);
    // A new window: 100 more (the capacity), then refused for the rest of it.
    await signUpMany(t, "b", 100);
    vi.setSystemTime(boundary + SECOND);
    expect(await refusedFor(t, "late")).toBe(HOUR - SECOND);
  });

  test("the window is global: different names draw from the same 100", async () => {
    const t = makeTest();
    await signUpMany(t, "x", 60);
    await signUpMany(t, "y", 40);
    await refusedFor(t, "z");
  });

  test("a sign-up refused for a taken name gives its token back", async () => {
    const t = makeTest();
    await signUpMany(t, "a", 99);
    const taken = await errorOf(t.mutation(api.signups.signUp, { name: "a0", password: "pw" }));
    expect(taken).toBeInstanceOf(ConvexError);
    expect(taken).toMatchObject({ data: "the name a0 is taken" });
    // The failed attempt rolled back, so the 100th token is still there.
    await t.mutation(api.signups.signUp, { name: "last", password: "pw" });
    await refusedFor(t, "one-too-many");
    const names = await t.run(async (ctx) => (await ctx.db.query("users").collect()).length);
    expect(names).toBe(100);
  });
});

describe("getRateLimit (the sign-up button's useRateLimit)", () => {
  test("reports the global window: full, then used up until exactly when signUp would pass again", async () => {
    const t = makeTest();
    const full = await t.query(api.signups.getRateLimit, {});
    expect(full.config).toMatchObject({ kind: "fixed window", rate: 100, period: HOUR });
    expect(full.value).toBe(100);

    await signUpMany(t, "a", 100);
    // The refusal and the reading at one instant of their own, after the sign-ups' commits.
    vi.advanceTimersByTime(SECOND);
    const wait = await refusedFor(t, "late");
    const used = await t.query(api.signups.getRateLimit, {});
    // The hook predicts with the same calculation the server decides with.
    const predicted = calculateRateLimit({ value: used.value, ts: used.ts }, used.config, Date.now(), 1);
    expect(predicted.retryAfter).toBe(wait);
  });

  test("takes no key from the client: there is one window", async () => {
    const t = makeTest();
    const error = await errorOf(t.query(api.signups.getRateLimit, { key: "someone" }));
    expect(isInvalidRateLimitError(error)).toBe(true);
  });

  test("getServerTime returns the server's clock", async () => {
    const t = makeTest();
    expect(await t.mutation(api.signups.getServerTime, {})).toBe(Date.now());
  });
});
