// The README's feature snippets (example/convex/features/*.ts) do what the README says, run on convex-test through the example app, each call at its own fake instant.
import { httpRouter } from "convex/server";
import { convexTest } from "convex-test";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { DAY, HOUR, MINUTE, isRateLimitError } from "convex-rate-limiter";
import { register } from "convex-rate-limiter/test";
import { api, internal } from "../example/convex/_generated/api.js";
import { ping } from "../example/convex/features/headers.js";
import schema from "../example/convex/schema.js";

const modules = import.meta.glob("../example/convex/**/*.*s");
const t0 = Date.UTC(2025, 0, 1, 9);

/** A convex-test instance of the example app with the component, and convex/http.ts routing features/headers.ts's `ping` too. */
function makeTest() {
  const http = httpRouter();
  http.route({ path: "/ping", method: "GET", handler: ping });
  const t = convexTest(schema, { ...modules, "../example/convex/http.ts": async () => ({ default: http }) });
  register(t);
  return t;
}

/** at moves the fake clock to t0 + `ms`: each call below gets an instant of its own, so what it sees is known to the ms. */
function at(ms: number): void {
  vi.setSystemTime(t0 + ms);
}

/** The data of the `RateLimited` error `promise` rejects with. */
async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => new Error("expected a RateLimited error, but the call succeeded"),
    (e: unknown) => e,
  );
  if (!isRateLimitError(error)) throw error;
  return error.data;
}

beforeEach(() => {
  vi.useFakeTimers();
  at(0);
});
afterEach(() => vi.useRealTimers());

describe("features/tiers.ts", () => {
  test("a free user gets 5 exports an hour; the pro tier 50; a user's own terms beat their tier's", async () => {
    const t = makeTest();
    const free = t.withIdentity({ tokenIdentifier: "free" });
    const pro = t.withIdentity({ tokenIdentifier: "pro", plan: "pro" });
    const own = t.withIdentity({ tokenIdentifier: "own", plan: "pro" });
    let ms = 0;
    await t.mutation(internal.features.tiers.setTerms, { user: "own", perHour: 7 });
    const oks = async (caller: typeof free, n: number) => {
      const results = [];
      for (let i = 0; i < n; i++) {
        at(++ms);
        results.push((await caller.mutation(api.features.tiers.exportData, {})).ok);
      }
      return results.filter(Boolean).length;
    };
    expect(await oks(free, 6)).toBe(5);
    expect(await oks(pro, 51)).toBe(50);
    expect(await oks(own, 8)).toBe(7);
  });
});

describe("features/blocks.ts", () => {
  test("the tenth wrong password locks the account for exactly a day", async () => {
    const t = makeTest();
    for (let i = 0; i < 10; i++) {
      at(i);
      expect(await t.mutation(internal.features.blocks.wrongPassword, { account: "a" })).toEqual({ ok: true });
    }
    at(10);
    expect(await t.query(api.features.blocks.mayTry, { account: "a" })).toEqual({ ok: false, retryAfter: DAY - 1 });
    at(9 + DAY);
    expect(await t.query(api.features.blocks.mayTry, { account: "a" })).toEqual({ ok: true });
  });

  test("a block refuses until its instant, whatever the count; unblock ends it", async () => {
    const t = makeTest();
    await t.mutation(internal.features.blocks.block, { account: "b", days: 2 });
    at(1);
    expect(await t.query(api.features.blocks.mayTry, { account: "b" })).toEqual({ ok: false, retryAfter: 2 * DAY - 1 });
    at(2);
    expect(await t.mutation(internal.features.blocks.unblock, { account: "b" })).toBe(true);
    at(3);
    expect(await t.query(api.features.blocks.mayTry, { account: "b" })).toEqual({ ok: true });
  });
});

describe("features/leases.ts", () => {
  test("two exports run at once per user; the third waits for a release, or the earliest lease's expiry", async () => {
    const t = makeTest();
    const user = t.withIdentity({ tokenIdentifier: "u" });
    expect(await user.mutation(api.features.leases.startExport, {})).toEqual({ ok: true });
    at(1);
    expect(await user.mutation(api.features.leases.startExport, {})).toEqual({ ok: true });
    at(2);
    expect(await user.mutation(api.features.leases.startExport, {})).toEqual({ ok: false, retryAfter: 10 * MINUTE - 2 });
    // The two exports run and release their slots.
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    expect(await user.mutation(api.features.leases.startExport, {})).toEqual({ ok: true });
  });
});

describe("features/windows.ts", () => {
  test("never more than 100 emails in any hour: the 101st waits until the first one's hour is over, or a few ms more", async () => {
    const t = makeTest();
    for (let i = 0; i < 100; i++) {
      at(i);
      await t.mutation(internal.features.windows.sendEmail, { to: `${i}@example.com` });
    }
    at(100);
    const data = await refusal(t.mutation(internal.features.windows.sendEmail, { to: "late@example.com" }));
    // The row's log holds at most 32 entries: the first takes were merged into later ones, so their
    // slots come back no sooner than an hour after them, and only a few ms later.
    expect(data).toMatchObject({ kind: "RateLimited", name: "emails" });
    const retryAfter = (data as { retryAfter: number }).retryAfter;
    expect(retryAfter).toBeGreaterThanOrEqual(HOUR - 100);
    expect(retryAfter).toBeLessThanOrEqual(HOUR - 100 + 100 / 32);
    at(100 + retryAfter - 1);
    await refusal(t.mutation(internal.features.windows.sendEmail, { to: "late@example.com" }));
    at(100 + retryAfter);
    await t.mutation(internal.features.windows.sendEmail, { to: "late@example.com" });
  });

  test("searches are limited per signed-in user", async () => {
    const t = makeTest();
    expect(await t.withIdentity({ tokenIdentifier: "s" }).mutation(api.features.windows.search, {})).toEqual({ ok: true });
    await expect(t.mutation(api.features.windows.search, {})).rejects.toThrow("sign in to search");
  });
});

describe("features/allOrNothing.ts", () => {
  test("an upload the user's limit refuses takes nothing from the team's", async () => {
    const t = makeTest();
    const member = (name: string) => t.withIdentity({ tokenIdentifier: name, team: "T" });
    let ms = 0;
    for (let i = 0; i < 20; i++) {
      at(++ms);
      expect((await member("a").mutation(api.features.allOrNothing.upload, {})).ok).toBe(true);
    }
    for (let i = 0; i < 5; i++) {
      at(++ms);
      expect((await member("a").query(api.features.allOrNothing.canUpload, {})).ok).toBe(false);
      at(++ms);
      expect((await member("a").mutation(api.features.allOrNothing.upload, {})).ok).toBe(false);
    }
    // Had a's refused uploads counted against the team, the last of these would be refused.
    for (const name of ["b", "c", "d", "e"]) {
      for (let i = 0; i < 20; i++) {
        at(++ms);
        expect((await member(name).mutation(api.features.allOrNothing.upload, {})).ok).toBe(true);
      }
    }
    at(++ms);
    expect((await member("f").query(api.features.allOrNothing.canUpload, {})).ok).toBe(false);
  });
});

describe("features/credit.ts", () => {
  test("what a summary doesn't use of its 4,000-token estimate goes back to the budget", async () => {
    const t = makeTest();
    // 40,000 tokens a minute cover ten estimates; with the unused part given back, twenty pass.
    for (let i = 0; i < 20; i++) {
      at(i);
      expect(await t.action(internal.features.credit.summarize, { text: "a short text" })).toBe("a short text");
    }
  });
});

describe("features/headers.ts", () => {
  test("answers with RateLimit and RateLimit-Policy, then a 429 with Retry-After", async () => {
    const t = makeTest();
    expect((await t.fetch("/ping", { method: "GET" })).status).toBe(401);
    const headers = { "X-API-Key": "k" };
    const first = await t.fetch("/ping", { method: "GET", headers });
    expect(first.status).toBe(200);
    expect(await first.text()).toBe("pong");
    expect(first.headers.get("RateLimit-Policy")).toBe('"apiRequests";q=60;w=60');
    expect(first.headers.get("RateLimit")).toBe('"apiRequests";r=59;t=1');
    for (let i = 1; i < 60; i++) {
      at(i);
      expect((await t.fetch("/ping", { method: "GET", headers })).status).toBe(200);
    }
    at(60);
    const refused = await t.fetch("/ping", { method: "GET", headers });
    expect(refused.status).toBe(429);
    // One token a second: 60 ms refilled 0.06 of one, so 940 ms to wait, a second as Retry-After rounds it.
    expect(refused.headers.get("Retry-After")).toBe("1");
    expect(refused.headers.get("RateLimit")).toBe('"apiRequests";r=0;t=60');
  });
});

describe("features/dryRun.ts", () => {
  test("the dry run logs whom it would refuse and refuses no one; the enforced limit refuses the 11th", async () => {
    const t = makeTest();
    const user = t.withIdentity({ tokenIdentifier: "c" });
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      for (let i = 0; i < 10; i++) {
        at(i);
        await user.mutation(api.features.dryRun.comment, { text: "hi" });
      }
      const events = log.mock.calls.map((args) => String(args[0])).filter((line) => line.includes("rateLimit.dryRun"));
      // 3 a minute: the 4th to the 10th comments would have been refused.
      expect(events).toHaveLength(7);
      expect(JSON.parse(events[0] ?? "")).toMatchObject({ event: "rateLimit.dryRun", name: "commentsTighter", key: "c", count: 1 });
    } finally {
      log.mockRestore();
    }
    at(10);
    expect(await refusal(user.mutation(api.features.dryRun.comment, { text: "hi" }))).toMatchObject({ name: "comments" });
  });
});

describe("features/metrics.ts", () => {
  test("counts each minute's admitted and refused downloads, and the users refused most, folded or not", async () => {
    const t = makeTest();
    const user = t.withIdentity({ tokenIdentifier: "d" });
    for (let i = 0; i < 102; i++) {
      at(i);
      await user.mutation(api.features.metrics.download, {});
    }
    at(2_000); // events younger than a second are left for the next fold
    const before = await t.query(internal.features.metrics.lastHour, {});
    await t.mutation(internal.features.metrics.foldMetrics, {});
    at(2_001);
    const after = await t.query(internal.features.metrics.lastHour, {});
    for (const result of [before, after]) {
      expect(result.total).toMatchObject({ admitted: 100, refused: 2 });
      expect(result.top).toEqual([{ key: "d", refused: 2, refusedTokens: 2 }]);
    }
    expect([before.unfolded, after.unfolded]).toEqual([102, 0]);
  });
});
