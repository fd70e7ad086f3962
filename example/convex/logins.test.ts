// logins.logIn through convex-test and register(): ten wrong guesses an hour per account, a lock
// checked before the password, a reset on success; fake timers step the clock exactly.
// #region loginsTest
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, isRateLimitError } from "convex-rate-limiter";
import { api } from "./_generated/api.js";
import { errorOf, makeTest } from "./test.setup.js";

/** One token of `failedLogins` (10 an hour) comes back every 6 minutes. */
const REFILL = HOUR / 10;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2025, 0, 1, 9));
});
afterEach(() => vi.useRealTimers());

async function withAccounts() {
  const t = makeTest();
  await t.run(async (ctx) => {
    await ctx.db.insert("users", { name: "alice", password: "right" });
    await ctx.db.insert("users", { name: "bob", password: "right" });
  });
  return t;
}

describe("logIn", () => {
  test("the right password logs in", async () => {
    const t = await withAccounts();
    expect(await t.mutation(api.logins.logIn, { name: "alice", password: "right" })).toEqual({ ok: true });
  });

  test("ten wrong guesses pass, and the tenth says when the next is allowed", async () => {
    const t = await withAccounts();
    for (let i = 1; i <= 9; i++) {
      // Tokens remain after each of these, so the next guess may come right away.
      expect(await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" })).toEqual({ ok: false });
    }
    expect(await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" })).toEqual({
      ok: false,
      retryAfter: REFILL,
    });
  });

  test("once locked, even the right password is refused, until exactly retryAfter", async () => {
    const t = await withAccounts();
    for (let i = 0; i < 10; i++) await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" });
    const error = await errorOf(t.mutation(api.logins.logIn, { name: "alice", password: "right" }));
    if (!isRateLimitError(error)) throw error;
    expect(error.data).toEqual({ kind: "RateLimited", name: "failedLogins", retryAfter: REFILL });

    vi.advanceTimersByTime(REFILL - 1);
    const early = await errorOf(t.mutation(api.logins.logIn, { name: "alice", password: "right" }));
    if (!isRateLimitError(early)) throw early;
    expect(early.data.retryAfter).toBe(1);

    vi.advanceTimersByTime(1);
    expect(await t.mutation(api.logins.logIn, { name: "alice", password: "right" })).toEqual({ ok: true });
  });

  test("a successful login forgets earlier wrong guesses", async () => {
    const t = await withAccounts();
    for (let i = 0; i < 9; i++) await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" });
    await t.mutation(api.logins.logIn, { name: "alice", password: "right" });
    // Without the reset, the second wrong guess below would be the eleventh and throw.
    for (let i = 0; i < 10; i++) {
      expect((await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" })).ok).toBe(false);
    }
    await expect(t.mutation(api.logins.logIn, { name: "alice", password: "wrong" })).rejects.toSatisfy(
      isRateLimitError,
    );
  });

  test("each account has its own allowance", async () => {
    const t = await withAccounts();
    for (let i = 0; i < 10; i++) await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" });
    await expect(t.mutation(api.logins.logIn, { name: "alice", password: "right" })).rejects.toSatisfy(
      isRateLimitError,
    );
    expect(await t.mutation(api.logins.logIn, { name: "bob", password: "right" })).toEqual({ ok: true });
  });

  test("guesses at an account that doesn't exist count the same", async () => {
    // Otherwise the limit would tell an attacker which names exist.
    const t = await withAccounts();
    for (let i = 0; i < 10; i++) await t.mutation(api.logins.logIn, { name: "nobody", password: "x" });
    await expect(t.mutation(api.logins.logIn, { name: "nobody", password: "x" })).rejects.toSatisfy(
      isRateLimitError,
    );
  });
});
// #endregion loginsTest
