// admin.ts through convex-test and register(): the listings answer admins only (identities from
// t.withIdentity), and the daily clean-up deletes idle keys' state; fake timers step the refill.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE } from "convex-rate-limiter";
import { ConvexError } from "convex/values";
import { api, internal } from "./_generated/api.js";
import { rateLimiter } from "./limits.js";
import { errorOf, makeTest } from "./test.setup.js";

const START = Date.UTC(2025, 0, 1, 9);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => vi.useRealTimers());

const firstPage = { numItems: 10, cursor: null };

/** Two senders' messages: alice sends three (her burst), bob one. */
async function send(t: ReturnType<typeof makeTest>) {
  await t.run(async (ctx) => {
    for (let i = 0; i < 3; i++) await rateLimiter.limit(ctx, "sendMessage", { key: "alice" });
    await rateLimiter.limit(ctx, "sendMessage", { key: "bob" });
  });
}

describe("the admin listings", () => {
  test("answer an admin with each key's state now", async () => {
    const t = makeTest();
    await send(t);
    const admin = t.withIdentity({ email: "admin@example.com" });
    const names = await admin.query(api.admin.listRateLimitNames, { paginationOpts: firstPage });
    expect(names).toMatchObject({ page: [{ name: "sendMessage" }], isDone: true });
    const keys = await admin.query(api.admin.listRateLimitKeys, { name: "sendMessage", paginationOpts: firstPage });
    // sendMessage: bursts of 3, one token back every 6 s.
    expect(keys.page).toEqual([
      { key: "alice", value: 0, capacity: 3, fullIn: 18_000, idle: false, rows: 1, pending: 0 },
      { key: "bob", value: 2, capacity: 3, fullIn: 6_000, idle: false, rows: 1, pending: 0 },
    ]);
  });

  test("refuse anyone else: signed out, or signed in without an admin email", async () => {
    const t = makeTest();
    await send(t);
    const args = { name: "sendMessage", paginationOpts: firstPage };
    for (const caller of [t, t.withIdentity({ email: "alice@example.com" }), t.withIdentity({ subject: "no-email" })]) {
      expect(await errorOf(caller.query(api.admin.listRateLimitKeys, args))).toBeInstanceOf(ConvexError);
      expect(await errorOf(caller.query(api.admin.listRateLimitNames, { paginationOpts: firstPage }))).toBeInstanceOf(ConvexError);
    }
  });

  test("refuse a name that isn't one of the app's limits", async () => {
    const t = makeTest();
    const admin = t.withIdentity({ email: "admin@example.com" });
    const error = await errorOf(admin.query(api.admin.listRateLimitKeys, { name: "nope", paginationOpts: firstPage }));
    expect(error).toMatchObject({ data: "no rate limit is named nope" });
  });
});

describe("the daily clean-up", () => {
  test("deletes the keys that are full again and keeps the others", async () => {
    const t = makeTest();
    await send(t);
    const admin = t.withIdentity({ email: "admin@example.com" });
    const keys = async () =>
      (await admin.query(api.admin.listRateLimitKeys, { name: "sendMessage", paginationOpts: firstPage })).page.map((k) => k.key);
    // Bob's one token is back after 6 s; alice's three after 18 s.
    vi.setSystemTime(START + 6_000);
    await t.mutation(internal.admin.cleanupRateLimits, {});
    expect(await keys()).toEqual(["alice"]);
    vi.setSystemTime(START + MINUTE);
    await t.mutation(internal.admin.cleanupRateLimits, {});
    expect(await keys()).toEqual([]);
    // A deleted key is a full one: alice has her whole burst again.
    await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) expect((await rateLimiter.limit(ctx, "sendMessage", { key: "alice" })).ok).toBe(true);
    });
  });
});
