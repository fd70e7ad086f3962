// logins.logIn through convex-test and register(): ten wrong guesses an hour per account, the one
// that empties the allowance locking the account for a day, the lock checked before the password,
// a reset on success; fake timers step the clock exactly, before each call whose instant matters.
// #region loginsTest
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { DAY, HOUR, isRateLimitError, SECOND } from "convex-rate-limiter";
import { api } from "./_generated/api.js";
import { errorOf, makeTest } from "./test.setup.js";

/** One guess of `failedLogins` (10 an hour) comes back every 6 minutes. */
const REFILL = HOUR / 10;
/** The lockout of `failedLogins`: a day. */
const LOCKOUT = DAY;

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

  test("nine wrong guesses may be followed at once; the tenth locks the account for a day, and says so", async () => {
    const t = await withAccounts();
    for (let i = 1; i <= 9; i++) {
      // Guesses remain after each of these, so the next may come right away.
      expect(await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" })).toEqual({ ok: false });
    }
    expect(await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" })).toEqual({
      ok: false,
      retryAfter: LOCKOUT,
    });
  });

  test("once locked, even the right password is refused, until exactly the lock's end", async () => {
    const t = await withAccounts();
    for (let i = 0; i < 9; i++) await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" });
    // The tenth guess locks the account from its own instant, so give it one: as on a deployment,
    // a call never runs at a time before a commit it can see, so on a frozen clock the third call
    // in a ms already runs in the next.
    vi.advanceTimersByTime(SECOND);
    await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" });
    // The next call runs at that same instant (one commit in it so far).
    const error = await errorOf(t.mutation(api.logins.logIn, { name: "alice", password: "right" }));
    if (!isRateLimitError(error)) throw error;
    expect(error.data).toEqual({ kind: "RateLimited", name: "failedLogins", retryAfter: LOCKOUT });

    // An hour on, the guesses have refilled, but the lock holds; a refusal doesn't extend it.
    vi.advanceTimersByTime(HOUR);
    const later = await errorOf(t.mutation(api.logins.logIn, { name: "alice", password: "right" }));
    if (!isRateLimitError(later)) throw later;
    expect(later.data.retryAfter).toBe(LOCKOUT - HOUR);

    vi.advanceTimersByTime(LOCKOUT - HOUR - 1);
    const early = await errorOf(t.mutation(api.logins.logIn, { name: "alice", password: "right" }));
    if (!isRateLimitError(early)) throw early;
    expect(early.data.retryAfter).toBe(1);

    vi.advanceTimersByTime(1);
    expect(await t.mutation(api.logins.logIn, { name: "alice", password: "right" })).toEqual({ ok: true });
  });

  test("wrong guesses no faster than the refill never lock the account", async () => {
    const t = await withAccounts();
    for (let i = 0; i < 9; i++) await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" });
    // One guess left; each 6 minutes bring one back, so each of these leaves one.
    for (let i = 0; i < 20; i++) {
      vi.advanceTimersByTime(REFILL);
      expect(await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" })).toEqual({ ok: false });
    }
    expect(await t.mutation(api.logins.logIn, { name: "alice", password: "right" })).toEqual({ ok: true });
  });

  test("a successful login forgets earlier wrong guesses", async () => {
    const t = await withAccounts();
    for (let i = 0; i < 9; i++) await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" });
    await t.mutation(api.logins.logIn, { name: "alice", password: "right" });
    // Without the reset, the first wrong guess below would lock the account.
    for (let i = 0; i < 9; i++) {
      expect(await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" })).toEqual({ ok: false });
    }
    expect(await t.mutation(api.logins.logIn, { name: "alice", password: "wrong" })).toEqual({ ok: false, retryAfter: LOCKOUT });
    await expect(t.mutation(api.logins.logIn, { name: "alice", password: "right" })).rejects.toSatisfy(isRateLimitError);
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

// Per address (signInsPerAddress, 100 an hour, then a day's ban), with request metadata set as a
// browser's request would carry it. Each call has its own millisecond, so convex-test's moving
// clock sees exactly the instant set.
describe("logIn per address", () => {
  // #region perAddressTest
  /** Sets the clock `ms` on from the last call, and returns the new instant. */
  const step = (ms = 1) => {
    vi.advanceTimersByTime(ms);
    return Date.now();
  };

  test("an address is banned for a day after 100 attempts an hour, whatever accounts they try; other addresses are not", async () => {
    const t = await withAccounts();
    const attacker = t.withRequestMetadata({ ip: "198.51.100.7", userAgent: "bot/1.0" });
    // Credential stuffing: one guess at each of 100 accounts, none of them locked.
    for (let i = 0; i < 100; i++) {
      step();
      expect(await attacker.mutation(api.logins.logIn, { name: `user${i}`, password: "guess" })).toEqual({ ok: false });
    }
    const bannedAt = Date.now();
    step(HOUR);
    const error = await errorOf(attacker.mutation(api.logins.logIn, { name: "alice", password: "right" }));
    if (!isRateLimitError(error)) throw error;
    expect(error.data).toEqual({ kind: "RateLimited", name: "signInsPerAddress", retryAfter: bannedAt + DAY - Date.now() });
    // Another address, and the account itself, are fine.
    step();
    expect(await t.withRequestMetadata({ ip: "198.51.100.8" }).mutation(api.logins.logIn, { name: "alice", password: "right" })).toEqual({ ok: true });
  });
  // #endregion perAddressTest

  test("an admin's block of a network refuses every address in it, from the admin page's mutations", async () => {
    const t = await withAccounts();
    const admin = t.withIdentity({ email: "admin@example.com" });
    step();
    // #region blockNetwork
    await admin.mutation(api.admin.setRateLimitOverride, {
      name: "signInsPerAddress",
      target: { network: "203.0.113.0/24" },
      override: { blockedUntil: Date.now() + HOUR },
      note: "abuse",
    });
    // #endregion blockNetwork
    step();
    const error = await errorOf(t.withRequestMetadata({ ip: "203.0.113.99" }).mutation(api.logins.logIn, { name: "alice", password: "right" }));
    if (!isRateLimitError(error)) throw error;
    expect(error.data.name).toBe("signInsPerAddress");
    step();
    expect(await admin.query(api.admin.rateLimitValue, { name: "signInsPerAddress", key: "203.0.113.99", ip: "203.0.113.99" })).toMatchObject({
      blockedBy: "network",
      network: "203.0.113.0/24",
    });
    step();
    expect(await t.withRequestMetadata({ ip: "192.0.2.1" }).mutation(api.logins.logIn, { name: "alice", password: "right" })).toEqual({ ok: true });
    step();
    expect(await admin.mutation(api.admin.removeRateLimitOverride, { name: "signInsPerAddress", target: { network: "203.0.113.0/24" } })).toBe(true);
    step();
    expect(await t.withRequestMetadata({ ip: "203.0.113.99" }).mutation(api.logins.logIn, { name: "alice", password: "right" })).toEqual({ ok: true });
  });
});
