// The example's calendar quotas do what the README and limits.ts say, on convex-test through the example app: features/calendar.ts (10 a minute and 1,000 a month through limitAll, resetsAt, a user's own billing cycle in their zone) and the LLM plan's monthly quota in llm.request (limitAll with reserve: the quota takes what its month has left, never borrows); each call at its own fake instant.
import { convexTest } from "convex-test";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE } from "convex-rate-limiter";
import { register } from "convex-rate-limiter/test";
import { api, internal } from "../example/convex/_generated/api.js";
import schema from "../example/convex/schema.js";
import { rateLimiter } from "../example/convex/limits.js";

const modules = import.meta.glob("../example/convex/**/*.*s");
const iso = (s: string) => Date.parse(s);
const T0 = iso("2026-03-10T12:00:00Z");

function makeTest() {
  const t = convexTest(schema, modules);
  register(t);
  return t;
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => vi.useRealTimers());

describe("features/calendar.ts", () => {
  test("10 a minute and 1,000 a month, both or neither; the month resets on the 1st (UTC)", async () => {
    const t = makeTest();
    const user = t.withIdentity({ tokenIdentifier: "u" });
    const april = iso("2026-04-01T00:00:00Z");
    for (let i = 0; i < 10; i++) {
      vi.setSystemTime(T0 + i);
      expect(await user.mutation(api.features.calendar.sendMessage, {})).toEqual({ ok: true, resetsAt: april });
    }
    vi.setSystemTime(T0 + 10);
    expect(await user.mutation(api.features.calendar.sendMessage, {})).toMatchObject({ ok: false, resetsAt: april });
    // Refused by the minute: the month lost nothing for it.
    vi.setSystemTime(T0 + 11);
    expect(await user.query(api.features.calendar.quota, {})).toEqual({ left: 990, resetsAt: april });
  });

  test("a user's own cycle: billed on the 31st in Tokyo, their month ends at midnight Tokyo time on the last day of the month", async () => {
    const t = makeTest();
    await t.mutation(internal.features.calendar.setBillingCycle, { user: "u", day: 31, timeZone: "Asia/Tokyo" });
    const user = t.withIdentity({ tokenIdentifier: "u" });
    // From midnight 28 February in Tokyo (15:00 UTC on the 27th) to midnight 31 March (15:00 UTC on the 30th).
    const end = iso("2026-03-30T15:00:00Z");
    vi.setSystemTime(T0 + 1);
    expect(await user.mutation(api.features.calendar.sendMessage, {})).toEqual({ ok: true, resetsAt: end });
    vi.setSystemTime(T0 + 2);
    expect(await user.query(api.features.calendar.quota, {})).toEqual({ left: 999, resetsAt: end });
    // Used up: a minute at a time, ten each, until the month's 1,000 are gone; then refused until its end.
    // A minute on, so the first ten don't meet the minute's limit with the message above.
    let ms = T0 + 3 + MINUTE;
    let sent = 1;
    while (sent < 1000) {
      for (let i = 0; i < 10 && sent < 1000; i++, sent++) {
        vi.setSystemTime(ms++);
        expect(await user.mutation(api.features.calendar.sendMessage, {})).toMatchObject({ ok: true });
      }
      ms += MINUTE;
    }
    vi.setSystemTime(ms);
    expect(await user.mutation(api.features.calendar.sendMessage, {})).toEqual({ ok: false, retryAfter: end - ms, resetsAt: end });
    vi.setSystemTime(end);
    expect(await user.mutation(api.features.calendar.sendMessage, {})).toEqual({ ok: true, resetsAt: iso("2026-04-29T15:00:00Z") });
  });
});

describe("llm.ts: the LLM plan's monthly quota, with the per-minute token budget through limitAll", () => {
  test("1,000 requests a month from the user's billing day in their zone; the 1,001st is refused to the month's end, taking no tokens", async () => {
    const t = makeTest();
    await t.mutation(internal.llm.setBillingCycle, { user: "u", day: 5, timeZone: "America/New_York" });
    const user = t.withIdentity({ tokenIdentifier: "u" });
    // From midnight EST on 5 March (05:00 UTC) to midnight EDT on 5 April (04:00 UTC).
    const end = iso("2026-04-05T04:00:00Z");
    // 20 an hour (llmRequests): one every 3 minutes, 1,000 in 50 hours, all within the month.
    let ms = T0;
    for (let i = 0; i < 1000; i++, ms += 3 * MINUTE) {
      vi.setSystemTime(ms);
      expect(await user.mutation(api.llm.request, { prompt: `#${i}`, tokens: 1 })).toMatchObject({ ok: true, runAfter: 0 });
    }
    vi.setSystemTime(ms);
    const value = await t.run((ctx) => rateLimiter.getValue(ctx, "llmMonthly", { key: "u" }));
    expect(value).toMatchObject({ value: 0, by: "key", resetsAt: end });
    expect(await user.mutation(api.llm.request, { prompt: "one more", tokens: 1 })).toEqual({ ok: false, retryAfter: end - ms });
    // Refused: the token budget lost nothing for it.
    vi.setSystemTime(ms + 1);
    expect((await t.run((ctx) => rateLimiter.getValue(ctx, "llmTokens"))).value).toBe(40_000);
    vi.setSystemTime(end);
    expect(await user.mutation(api.llm.request, { prompt: "April", tokens: 1 })).toMatchObject({ ok: true });
  });
});
