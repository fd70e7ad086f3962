// admin.ts through convex-test and register(): the listings, metrics, overrides and plans answer
// admins only (identities from t.withIdentity) and write nothing for anyone else, bad overrides
// are refused naming the field, the daily clean-up deletes idle keys' state, and the fold keeps
// the metrics' counts; fake timers step the refill and the minutes, set before each call whose
// instant matters (a deployment's clock moves on with its commits: on a frozen clock the third call
// in a ms runs in the next).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, isInvalidRateLimitError, isRateLimitError, MINUTE, SECOND } from "convex-rate-limiter";
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
    // Its busiest minute wrote 6 times: a tenth of a write a second, far under the rule's 8 at 25 ms.
    expect(before.heat).toEqual({ writesPerShard: 0.1, samples: 2, mutationMs: 25, maxWritesPerShard: 8, hot: false });
    // The cron's fold: the same counts, from summaries now.
    vi.setSystemTime(START + MINUTE + 2 * SECOND);
    await t.mutation(internal.admin.foldRateLimitMetrics, {});
    expect(await metrics()).toEqual({ ...before, unfolded: 0 });
  });

  test("count LLM requests reserved ahead", async () => {
    const t = makeTest();
    // 40k tokens a minute: the first request is admitted, the next two reserve ahead.
    const user = t.withIdentity({ tokenIdentifier: "test|ada" });
    for (let i = 0; i < 3; i++) await user.mutation(api.llm.request, { prompt: "p", tokens: 30_000 });
    const admin = t.withIdentity({ email: "admin@example.com" });
    const { total } = await admin.query(api.admin.rateLimitMetrics, { name: "llmTokens", ...span });
    expect(total).toEqual({
      admitted: 1,
      admittedTokens: 30_000,
      reserved: 2,
      reservedTokens: 60_000,
      refused: 0,
      refusedTokens: 0,
      blocked: 0,
      overridden: 0,
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

describe("overrides and blocks", () => {
  const admin = (t: ReturnType<typeof makeTest>) => t.withIdentity({ email: "admin@example.com" });
  const list = (t: ReturnType<typeof makeTest>, name = "sendMessage") =>
    admin(t).query(api.admin.listRateLimitOverrides, { name, paginationOpts: firstPage });

  test("an admin sets, lists and removes them, and each decides the next request", async () => {
    const t = makeTest();
    const until = START + HOUR;
    await admin(t).mutation(api.admin.setRateLimitOverride, {
      name: "sendMessage",
      target: { key: "alice" },
      override: { config: { kind: "token bucket", rate: 60, period: MINUTE, capacity: 6 } },
      note: "support ticket #7",
    });
    await admin(t).mutation(api.admin.setRateLimitOverride, {
      name: "sendMessage",
      target: { key: "mallory" },
      override: { blockedUntil: until },
    });
    await admin(t).mutation(api.admin.setRateLimitOverride, {
      name: "sendMessage",
      target: { tier: "staff" },
      override: { config: { kind: "token bucket", rate: 100, period: MINUTE } },
    });
    // Keys' first, in key order, then tiers'.
    const { page } = await list(t);
    expect(page.map((o) => o.target)).toEqual([{ key: "alice" }, { key: "mallory" }, { tier: "staff" }]);
    expect(page[0]).toMatchObject({ note: "support ticket #7", updatedAt: START });
    const tiers = await admin(t).query(api.admin.listRateLimitOverrides, { name: "sendMessage", scope: "tier", paginationOpts: firstPage });
    expect(tiers.page.map((o) => o.target)).toEqual([{ tier: "staff" }]);

    // A second on, alice sends a burst of 6 (her override's capacity), mallory nothing until the
    // block's end.
    vi.setSystemTime(START + SECOND);
    await t.run(async (ctx) => {
      for (let i = 0; i < 6; i++) expect((await rateLimiter.limit(ctx, "sendMessage", { key: "alice" })).ok).toBe(true);
      expect(await rateLimiter.limit(ctx, "sendMessage", { key: "mallory" })).toEqual({ ok: false, retryAfter: HOUR - SECOND });
    });
    // Which override decided, as the admin reads it.
    const value = (key: string) => admin(t).query(api.admin.rateLimitValue, { name: "sendMessage", key });
    expect(await value("alice")).toMatchObject({ by: "key", config: { capacity: 6 } });
    // A block sets no config: `by` says whose config is in force (here the named one's), and
    // `blockedUntil` that a block (or a lockout) refuses everything until then.
    const blocked = await value("mallory");
    expect(blocked.blockedUntil).toBe(until);
    expect(blocked.by).toBeUndefined();
    expect(await admin(t).query(api.admin.rateLimitValue, { name: "sendMessage", key: "eve", tier: "staff" })).toMatchObject({ by: "tier" });
    expect((await value("bob")).by).toBeUndefined();

    // Removing the block lets mallory send at once (nothing was counted while blocked).
    expect(await admin(t).mutation(api.admin.removeRateLimitOverride, { name: "sendMessage", target: { key: "mallory" } })).toBe(true);
    expect(await admin(t).mutation(api.admin.removeRateLimitOverride, { name: "sendMessage", target: { key: "mallory" } })).toBe(false);
    await t.run(async (ctx) => {
      expect((await rateLimiter.limit(ctx, "sendMessage", { key: "mallory" })).ok).toBe(true);
    });
    expect((await list(t)).page.map((o) => o.target)).toEqual([{ key: "alice" }, { tier: "staff" }]);
  });

  test("a block refuses a login until its end, and an attempt at exactly its end goes through", async () => {
    const t = makeTest();
    await t.run((ctx) => ctx.db.insert("users", { name: "dave", password: "right" }));
    const until = START + 10 * MINUTE;
    await admin(t).mutation(api.admin.setRateLimitOverride, { name: "failedLogins", target: { key: "dave" }, override: { blockedUntil: until } });
    vi.setSystemTime(START + SECOND);
    const refused = await errorOf(t.mutation(api.logins.logIn, { name: "dave", password: "right" }));
    expect(isRateLimitError(refused) && refused.data.retryAfter).toBe(10 * MINUTE - SECOND);
    vi.setSystemTime(until);
    expect(await t.mutation(api.logins.logIn, { name: "dave", password: "right" })).toEqual({ ok: true });
  });

  test("anyone else is refused, and nothing is written", async () => {
    const t = makeTest();
    await admin(t).mutation(api.admin.setRateLimitOverride, { name: "sendMessage", target: { key: "alice" }, override: { blockedUntil: START + HOUR } });
    const before = await list(t);
    for (const caller of [t, t.withIdentity({ email: "alice@example.com" }), t.withIdentity({ subject: "no-email" })]) {
      const set = caller.mutation(api.admin.setRateLimitOverride, { name: "sendMessage", target: { key: "bob" }, override: { blockedUntil: START + HOUR } });
      expect(await errorOf(set)).toBeInstanceOf(ConvexError);
      const remove = caller.mutation(api.admin.removeRateLimitOverride, { name: "sendMessage", target: { key: "alice" } });
      expect(await errorOf(remove)).toBeInstanceOf(ConvexError);
      const listed = caller.query(api.admin.listRateLimitOverrides, { name: "sendMessage", paginationOpts: firstPage });
      expect(await errorOf(listed)).toBeInstanceOf(ConvexError);
      expect(await errorOf(caller.query(api.admin.rateLimitValue, { name: "sendMessage", key: "alice" }))).toBeInstanceOf(ConvexError);
      expect(await errorOf(caller.mutation(api.admin.setPlan, { user: "test|eve", plan: "pro" }))).toBeInstanceOf(ConvexError);
    }
    expect(await list(t)).toEqual(before);
    expect(await t.run((ctx) => ctx.db.query("plans").collect())).toEqual([]);
  });

  test.each([
    ["a negative rate", { config: { kind: "token bucket" as const, rate: -1, period: MINUTE } }, "override.config.rate"],
    ["a shard count (the named config's)", { config: { kind: "token bucket" as const, rate: 5, period: MINUTE, shards: 2 } }, "override.config.shards"],
    ["a block at no instant", { blockedUntil: Number.NaN }, "override.blockedUntil"],
  ])("bad input, %s, is an InvalidRateLimit naming the field, and writes nothing", async (_what, override, field) => {
    const t = makeTest();
    const error = await errorOf(admin(t).mutation(api.admin.setRateLimitOverride, { name: "sendMessage", target: { key: "alice" }, override }));
    expect(isInvalidRateLimitError(error) && error.data.field).toBe(field);
    expect((await list(t)).page).toEqual([]);
  });

  test("an empty tier, or a name that isn't one of the app's limits, is refused", async () => {
    const t = makeTest();
    const tier = await errorOf(admin(t).mutation(api.admin.setRateLimitOverride, { name: "sendMessage", target: { tier: "" }, override: { blockedUntil: START + HOUR } }));
    expect(isInvalidRateLimitError(tier) && tier.data.field).toBe("target.tier");
    const name = await errorOf(admin(t).mutation(api.admin.setRateLimitOverride, { name: "nope", target: { key: "a" }, override: { blockedUntil: START + HOUR } }));
    expect(name).toMatchObject({ data: "no rate limit is named nope" });
    expect((await list(t)).page).toEqual([]);
  });
});

describe("plans", () => {
  test("seedPlanOverrides gives the pro tier ten times the named llmRequests", async () => {
    const t = makeTest();
    await t.mutation(internal.admin.seedPlanOverrides, {});
    const admin = t.withIdentity({ email: "admin@example.com" });
    const { page } = await admin.query(api.admin.listRateLimitOverrides, { name: "llmRequests", paginationOpts: firstPage });
    expect(page).toEqual([
      {
        target: { tier: "pro" },
        // maxReserved copied: an override's terms replace the named ones whole.
        override: { config: { kind: "token bucket", rate: 200, period: HOUR, capacity: 200, maxReserved: 0 } },
        note: "pro plan: 10x",
        updatedAt: START,
      },
    ]);
  });

  test("setPlan writes one row per user, and changes it", async () => {
    const t = makeTest();
    const admin = t.withIdentity({ email: "admin@example.com" });
    await admin.mutation(api.admin.setPlan, { user: "test|ada", plan: "pro" });
    await admin.mutation(api.admin.setPlan, { user: "test|ada", plan: "free" });
    const rows = await t.run((ctx) => ctx.db.query("plans").collect());
    expect(rows.map((r) => [r.user, r.plan])).toEqual([["test|ada", "free"]]);
  });
});
