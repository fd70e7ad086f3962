// admin.ts through convex-test and register(): the listings and metrics answer admins only
// (identities from t.withIdentity), the daily clean-up deletes idle keys' state, and the fold
// keeps the metrics' counts; fake timers step the refill and the minutes.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, SECOND } from "convex-rate-limiter";
import { ConvexError } from "convex/values";
import { api, internal } from "./_generated/api.js";
import { API_KEY_HEADER } from "./http.js";
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

describe("the metrics", () => {
  /** POSTs to the HTTP API (limited by `apiKeyRequests`, 5 a minute per key) as `apiKey`. */
  const call = (t: ReturnType<typeof makeTest>, apiKey: string) =>
    t.fetch("/api/echo", { method: "POST", headers: { [API_KEY_HEADER]: apiKey }, body: "hi" });
  const span = { from: START, to: START + 5 * MINUTE };

  test("count the HTTP API's answers per minute and name the keys refused most, before and after the fold", async () => {
    const t = makeTest();
    // Minute 0: key-a calls 7 times (5 answered, 2 refused with 429), key-b once.
    for (let i = 0; i < 7; i++) await call(t, "key-a");
    await call(t, "key-b");
    // Minute 1: key-a has 5 tokens back; 6 calls, 1 refused.
    vi.setSystemTime(START + MINUTE);
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(t, "key-a")).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const admin = t.withIdentity({ email: "admin@example.com" });
    const metrics = () => admin.query(api.admin.rateLimitMetrics, { name: "apiKeyRequests", ...span, topKeys: 3 });
    const before = await metrics();
    expect(before.buckets.map((b) => [b.bucket - START, b.admitted, b.refused])).toEqual([
      [0, 6, 2],
      [MINUTE, 5, 1],
    ]);
    expect(before.top).toEqual([{ key: "key-a", refused: 3, refusedTokens: 3 }]);
    expect(before.unfolded).toBe(14);
    // The cron's fold: the same counts, from summaries now.
    vi.setSystemTime(START + MINUTE + 2 * SECOND);
    await t.mutation(internal.admin.foldRateLimitMetrics, {});
    expect(await metrics()).toEqual({ ...before, unfolded: 0 });
  });

  test("count LLM requests reserved ahead", async () => {
    const t = makeTest();
    // 40k tokens a minute: the first request is admitted, the next two reserve ahead.
    for (let i = 0; i < 3; i++) await t.mutation(api.llm.request, { prompt: "p", tokens: 30_000 });
    const admin = t.withIdentity({ email: "admin@example.com" });
    const { total } = await admin.query(api.admin.rateLimitMetrics, { name: "llmTokens", ...span });
    expect(total).toEqual({
      admitted: 1,
      admittedTokens: 30_000,
      reserved: 2,
      reservedTokens: 60_000,
      refused: 0,
      refusedTokens: 0,
    });
  });

  test("answer admins only, and only for the app's limits", async () => {
    const t = makeTest();
    for (const caller of [t, t.withIdentity({ email: "alice@example.com" })]) {
      expect(await errorOf(caller.query(api.admin.rateLimitMetrics, { name: "apiKeyRequests", ...span }))).toBeInstanceOf(ConvexError);
    }
    const admin = t.withIdentity({ email: "admin@example.com" });
    const error = await errorOf(admin.query(api.admin.rateLimitMetrics, { name: "nope", ...span }));
    expect(error).toMatchObject({ data: "no rate limit is named nope" });
  });
});
