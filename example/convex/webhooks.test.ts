// webhooks.notify through convex-test and register(), under fake timers: the partner's 10 a minute
// (a token bucket) lets a call go at once while a token is there; once they're used up, a call's
// action sleeps, once, until its token is back, and then calls; one that would wait more than a
// minute gives up at once, taking nothing.
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { internal } from "./_generated/api.js";
import { rateLimiter } from "./limits.js";
import { makeTest } from "./test.setup.js";

const START = Date.UTC(2025, 0, 1, 9);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => vi.useRealTimers());

test("a call goes at once, or sleeps until its turn and then calls, or gives up past a minute", async () => {
  const t = makeTest();
  expect(await t.action(internal.webhooks.notify, { event: "first" })).toBe(0);
  // A second later, nine more calls' tokens are taken in one instant: 0.1667 of a token is left.
  vi.setSystemTime(START + 1_000);
  await t.run(async (ctx) => {
    for (let i = 0; i < 9; i++) await rateLimiter.limit(ctx, "partnerWebhooks");
  });
  const waiting = t.action(internal.webhooks.notify, { event: "late" });
  let done = false;
  void waiting.then(() => (done = true));
  // A token every 6 s: the missing 0.8333 comes back in 5 s. It sleeps until then, and no sooner.
  await vi.advanceTimersByTimeAsync(5_000 - 1);
  expect(done).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  expect(await waiting).toBe(5_000);
  const late = (await t.run((ctx) => ctx.db.query("webhookCalls").collect())).find((c) => c.event === "late");
  expect(late!.at).toBeGreaterThanOrEqual(START + 6_000);
  // Ten more queued ahead: the next would wait over a minute, so it gives up, taking nothing.
  await t.run(async (ctx) => {
    for (let i = 0; i < 10; i++) await rateLimiter.limit(ctx, "partnerWebhooks", { reserve: true });
  });
  expect(await t.action(internal.webhooks.notify, { event: "too late" })).toBeNull();
  expect((await t.run((ctx) => ctx.db.query("webhookCalls").collect())).map((c) => c.event)).toEqual(["first", "late"]);
});
