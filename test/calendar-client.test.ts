// Calendar quotas through the published register() helper and the typed client (the app is test/app/calendar.ts): limit, check, getValue with resetsAt, credit, reset, a customer's own cycle by a key override, limitAll with a per-minute limit, shards, asynchronous mode, a zone changed mid-period (no grant), reservations refused, and the bad-input matrix; each call at an instant the test sets, on convex-test's moving clock.
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { RateLimiter } from "../src/client/index.js";
import type * as calendar from "./app/calendar.js";
import { components, convexErrorData, makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ calendar: typeof calendar }>;
const iso = (s: string) => Date.parse(s);

// A Tuesday in March, after New York's clocks went forward (8 March) and before London's (29 March).
const T0 = iso("2026-03-10T12:00:00Z");
// New York's March: from midnight EST on the 1st to midnight EDT on 1 April.
const MARCH_NY = iso("2026-03-01T05:00:00Z");
const APRIL_NY = iso("2026-04-01T04:00:00Z");
const MAY_NY = iso("2026-05-01T04:00:00Z");
const NEXT_UTC_DAY = iso("2026-03-11T00:00:00Z");

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

type Test = ReturnType<typeof makeTest>;

/** Runs `call` with the clock at `ms`: every call of these tests has an instant of its own, later than the last. */
async function atMs<R>(ms: number, call: () => Promise<R>): Promise<R> {
  vi.setSystemTime(ms);
  return call();
}

const take = (t: Test, ms: number, args: { name: "monthly" | "daily" | "dailyAsync" | "perMinute" | "dryDaily"; key?: string; tier?: string; count?: number; reserve?: boolean }) =>
  atMs(ms, () => t.mutation(api.calendar.take, args));

describe("a monthly quota in New York", () => {
  test("admits its rate, then refuses until the period ends, retryAfter running to resetsAt; the retry there succeeds", async () => {
    const t = makeTest();
    for (let i = 0; i < 3; i++) expect(await take(t, T0 + i, { name: "monthly", key: "u" })).toEqual({ ok: true, resetsAt: APRIL_NY });
    expect(await take(t, T0 + 3, { name: "monthly", key: "u" })).toEqual({ ok: false, retryAfter: APRIL_NY - (T0 + 3), resetsAt: APRIL_NY });
    // A ms before the period ends it still refuses; at its end the whole allowance is back.
    expect(await take(t, APRIL_NY - 1, { name: "monthly", key: "u" })).toEqual({ ok: false, retryAfter: 1, resetsAt: APRIL_NY });
    expect(await take(t, APRIL_NY, { name: "monthly", key: "u" })).toEqual({ ok: true, resetsAt: MAY_NY });
    // Another user's month is untouched.
    expect(await take(t, APRIL_NY + 1, { name: "monthly", key: "v" })).toEqual({ ok: true, resetsAt: MAY_NY });
  });

  test("getValue reports the tokens left, the period's start as ts, resetsAt, and the fixed window it runs as", async () => {
    const t = makeTest();
    await take(t, T0, { name: "monthly", key: "u" });
    const value = await atMs(T0 + 1, () => t.query(api.calendar.value, { name: "monthly", key: "u" }));
    expect(value).toEqual({
      value: 2,
      ts: MARCH_NY,
      shard: 0,
      resetsAt: APRIL_NY,
      config: { kind: "fixed window", rate: 3, period: 30 * 86_400_000, capacity: 3, shards: 1, calendar: { period: "month", timeZone: "America/New_York", anchor: 1 } },
      total: { value: 2, capacity: 3, exact: true },
      // The row took 1 since its period began (its ts): one write over the period so far.
      heat: { writesPerShard: 1000 / (T0 + 1 - MARCH_NY), samples: 1, mutationMs: 25, maxWritesPerShard: 8, hot: false },
    });
  });

  test("check carries resetsAt; a per-minute limit's results keep exactly upstream's shape", async () => {
    const t = makeTest();
    expect(await atMs(T0, () => t.query(api.calendar.check, { name: "monthly", key: "u" }))).toEqual({ ok: true, resetsAt: APRIL_NY });
    expect(await take(t, T0 + 1, { name: "perMinute", key: "u" })).toEqual({ ok: true });
  });

  test("credit gives back within the period; reset makes the key full again", async () => {
    const t = makeTest();
    for (let i = 0; i < 3; i++) await take(t, T0 + i, { name: "monthly", key: "u" });
    await atMs(T0 + 3, () => t.mutation(api.calendar.credit, { name: "monthly", key: "u", count: 1 }));
    expect(await take(t, T0 + 4, { name: "monthly", key: "u" })).toEqual({ ok: true, resetsAt: APRIL_NY });
    expect(await take(t, T0 + 5, { name: "monthly", key: "u" })).toMatchObject({ ok: false });
    await atMs(T0 + 6, () => t.mutation(api.calendar.reset, { name: "monthly", key: "u" }));
    for (let i = 0; i < 3; i++) expect(await take(t, T0 + 7 + i, { name: "monthly", key: "u" })).toEqual({ ok: true, resetsAt: APRIL_NY });
    expect(await take(t, T0 + 10, { name: "monthly", key: "u" })).toMatchObject({ ok: false });
  });

  test("reserve never borrows from a month that hasn't started: it takes what is there, then refuses to resetsAt", async () => {
    const t = makeTest();
    for (let i = 0; i < 3; i++) expect(await take(t, T0 + i, { name: "monthly", key: "u", reserve: true })).toEqual({ ok: true, resetsAt: APRIL_NY });
    expect(await take(t, T0 + 3, { name: "monthly", key: "u", reserve: true })).toEqual({ ok: false, retryAfter: APRIL_NY - (T0 + 3), resetsAt: APRIL_NY });
    // Nothing was owed: April starts whole.
    const value = await atMs(APRIL_NY, () => t.query(api.calendar.value, { name: "monthly", key: "u" }));
    expect(value).toMatchObject({ value: 3, ts: APRIL_NY });
  });
});

describe("each customer's own cycle: a key override with a calendar config", () => {
  test("a customer billed on the 17th in Paris: 5 a month from midnight on the 17th, Paris time", async () => {
    const t = makeTest();
    await atMs(T0, () =>
      t.mutation(api.calendar.setOverride, {
        name: "monthly",
        target: { key: "cust-17" },
        override: { config: { kind: "calendar", rate: 5, period: "month", anchor: 17, timeZone: "Europe/Paris" } },
      }),
    );
    // Paris is on CET (+1) until 29 March: the cycle runs from 16 Feb 23:00 UTC to 16 March 23:00 UTC.
    const end = iso("2026-03-16T23:00:00Z");
    for (let i = 0; i < 5; i++) expect(await take(t, T0 + 1 + i, { name: "monthly", key: "cust-17" })).toEqual({ ok: true, resetsAt: end });
    expect(await take(t, T0 + 6, { name: "monthly", key: "cust-17" })).toEqual({ ok: false, retryAfter: end - (T0 + 6), resetsAt: end });
    const value = await atMs(T0 + 7, () => t.query(api.calendar.value, { name: "monthly", key: "cust-17" }));
    expect(value).toMatchObject({ by: "key", value: 0, ts: iso("2026-02-16T23:00:00Z"), resetsAt: end, config: { calendar: { anchor: 17, timeZone: "Europe/Paris" } } });
    // The next cycle, after Paris moved to CEST (+2): 16 March 23:00 UTC to 16 April 22:00 UTC.
    expect(await take(t, end, { name: "monthly", key: "cust-17" })).toEqual({ ok: true, resetsAt: iso("2026-04-16T22:00:00Z") });
    // Everyone else keeps the named month.
    expect(await take(t, end + 1, { name: "monthly", key: "other" })).toEqual({ ok: true, resetsAt: APRIL_NY });
  });

  test("a tier's override: the pro plan gets 5 a week from Monday in New York", async () => {
    const t = makeTest();
    const week = { kind: "calendar", rate: 5, period: "week", timeZone: "America/New_York" };
    await atMs(T0, () => t.mutation(api.calendar.setOverride, { name: "monthly", target: { tier: "pro" }, override: { config: week } }));
    // Monday 16 March, midnight EDT.
    const monday = iso("2026-03-16T04:00:00Z");
    for (let i = 0; i < 5; i++) expect(await take(t, T0 + 1 + i, { name: "monthly", key: "p", tier: "pro" })).toEqual({ ok: true, resetsAt: monday });
    expect(await take(t, T0 + 6, { name: "monthly", key: "p", tier: "pro" })).toEqual({ ok: false, retryAfter: monday - (T0 + 6), resetsAt: monday });
    // Without the tier, the named month.
    expect(await take(t, T0 + 7, { name: "monthly", key: "q" })).toEqual({ ok: true, resetsAt: APRIL_NY });
  });

  test("an override's calendar fields are checked, naming them under override.config", async () => {
    const t = makeTest();
    const bad = { kind: "calendar", rate: 5, period: "month", anchor: 32 };
    const data = await convexErrorData(atMs(T0, () => t.mutation(api.calendar.setOverride, { name: "monthly", target: { key: "c" }, override: { config: bad } })));
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field: "override.config.anchor", value: "32" });
  });
});

describe("limitAll: 2 a minute and 3 a month in one call", () => {
  test("refused by the minute, then by the month, retryAfter running to the month's end", async () => {
    const t = makeTest();
    const both = (ms: number) => atMs(ms, () => t.mutation(api.calendar.takeBoth, { key: "u" }));
    expect(await both(T0)).toEqual({ ok: true, results: [{ ok: true }, { ok: true, resetsAt: APRIL_NY }] });
    expect(await both(T0 + 1)).toMatchObject({ ok: true });
    const minute = await both(T0 + 2);
    expect(minute).toMatchObject({ ok: false, results: [{ ok: false }, { ok: true, resetsAt: APRIL_NY }] });
    // Refused: nothing was taken from the month.
    expect(await both(T0 + 60_000)).toMatchObject({ ok: true });
    expect(await both(T0 + 120_000)).toEqual({
      ok: false,
      retryAfter: APRIL_NY - (T0 + 120_000),
      results: [{ ok: true }, { ok: false, retryAfter: APRIL_NY - (T0 + 120_000), resetsAt: APRIL_NY }],
    });
  });
});

describe("shards and asynchronous mode", () => {
  test("a day of 4 over two shards admits 4 in all, then 4 again the next day", async () => {
    const t = makeTest();
    let admitted = 0;
    for (let i = 0; i < 8; i++) if ((await take(t, T0 + i, { name: "daily", key: "u" })).ok) admitted++;
    expect(admitted).toBe(4);
    const value = await atMs(T0 + 8, () => t.query(api.calendar.value, { name: "daily", key: "u" }));
    expect(value).toMatchObject({ resetsAt: NEXT_UTC_DAY, total: { value: 0, capacity: 4, exact: true } });
    let next = 0;
    for (let i = 0; i < 8; i++) if ((await take(t, NEXT_UTC_DAY + i, { name: "daily", key: "u" })).ok) next++;
    expect(next).toBe(4);
  });

  test("asynchronously, a day of 4 admits at most 4", async () => {
    const t = makeTest();
    let admitted = 0;
    for (let i = 0; i < 8; i++) {
      const result = await take(t, T0 + i, { name: "dailyAsync", key: "u" });
      if (result.ok) admitted++;
      else expect(result).toEqual({ ok: false, retryAfter: NEXT_UTC_DAY - (T0 + i), resetsAt: NEXT_UTC_DAY });
    }
    expect(admitted).toBe(4);
    // Metrics (dailyAsync records them): 4 admitted, 4 refused, counted unfolded and after the fold.
    const counts = { admitted: 4, admittedTokens: 4, refused: 4, refusedTokens: 4, reserved: 0 };
    const before = await atMs(T0 + 8, () => t.query(api.calendar.metrics, { from: T0, to: T0 + 60_000 }));
    expect(before.total).toMatchObject(counts);
    await atMs(T0 + 9, () => t.mutation(api.calendar.foldMetrics, {}));
    const after = await atMs(T0 + 10, () => t.query(api.calendar.metrics, { from: T0, to: T0 + 60_000 }));
    expect(after.total).toMatchObject(counts);
  });
});

describe("a dry run", () => {
  test("admits what it would refuse, and logs it, with resetsAt as enforced", async () => {
    const t = makeTest();
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    expect(await take(t, T0, { name: "dryDaily", key: "u" })).toEqual({ ok: true, resetsAt: NEXT_UTC_DAY });
    expect(await take(t, T0 + 1, { name: "dryDaily", key: "u" })).toEqual({ ok: true, resetsAt: NEXT_UTC_DAY });
    expect(log).toHaveBeenCalledTimes(1);
    expect(String(log.mock.calls[0]?.[0])).toContain('"rateLimit.dryRun"');
  });
});

describe("changes never grant: a zone changed mid-period", () => {
  test("UTC to Tokyo: what was used counts until the old day ends, and comes back at the first Tokyo day starting then or later", async () => {
    const t = makeTest();
    const utc = { kind: "calendar", rate: 2, period: "day", timeZone: "UTC" };
    const tokyo = { ...utc, timeZone: "Asia/Tokyo" };
    for (let i = 0; i < 2; i++) expect(await atMs(T0 + i, () => t.mutation(api.calendar.takeInline, { key: "u", config: utc }))).toMatchObject({ ok: true });
    // Tokyo's days start at 15:00 UTC. The UTC day ends at midnight; the first Tokyo day starting
    // then or later starts at 15:00 UTC on the 11th.
    const back = iso("2026-03-11T15:00:00Z");
    const now = T0 + 2;
    expect(await atMs(now, () => t.mutation(api.calendar.takeInline, { key: "u", config: tokyo }))).toEqual({ ok: false, retryAfter: back - now, resetsAt: back });
    // Tokyo's 11 March starts at 15:00 UTC on the 10th: no allowance there (that would grant).
    expect(await atMs(iso("2026-03-10T15:00:00Z"), () => t.mutation(api.calendar.takeInline, { key: "u", config: tokyo }))).toMatchObject({ ok: false });
    expect(await atMs(back, () => t.mutation(api.calendar.takeInline, { key: "u", config: tokyo }))).toMatchObject({ ok: true });
  });
});

describe("the bad-input matrix: an InvalidRateLimit error naming the field", () => {
  const base = { kind: "calendar", rate: 10, period: "month" } as const;
  const cases: [string, Record<string, unknown>, string, string][] = [
    ["an unknown zone", { ...base, timeZone: "Mars/Olympus" }, "config.timeZone", '"Mars/Olympus"'],
    ["an empty zone", { ...base, timeZone: "" }, "config.timeZone", '""'],
    ["anchor 0 for a month", { ...base, anchor: 0 }, "config.anchor", "0"],
    ["anchor 32 for a month", { ...base, anchor: 32 }, "config.anchor", "32"],
    ["a fractional anchor", { ...base, anchor: 1.5 }, "config.anchor", "1.5"],
    ["anchor 7 for a week", { ...base, period: "week", anchor: 7 }, "config.anchor", "7"],
    ["anchor 24 for a day", { ...base, period: "day", anchor: 24 }, "config.anchor", "24"],
    ['period "year"', { ...base, period: "year" }, "config.period", '"year"'],
    ["a period of ms", { ...base, period: 86_400_000 }, "config.period", "86400000"],
    ["a calendar limit with capacity", { ...base, capacity: 20 }, "config.capacity", "20"],
    ["a calendar limit with maxReserved", { ...base, maxReserved: 5 }, "config.maxReserved", "5"],
    ["a calendar limit with start", { ...base, start: 0 }, "config.start", "0"],
    ["a rate of 0", { ...base, rate: 0 }, "config.rate", "0"],
    ["no period", { kind: "calendar", rate: 10 }, "config.period", "undefined"],
  ];

  test.each(cases)("%s, in the constructor", (_why, config, field, value) => {
    let thrown: unknown;
    try {
      new RateLimiter(components.rateLimiter, { quota: config as never });
    } catch (error) {
      thrown = error;
    }
    expect((thrown as { data?: unknown } | undefined)?.data).toMatchObject({ kind: "InvalidRateLimit", field, value });
  });

  test.each(cases)("%s, inline: nothing is written", async (_why, config, field, value) => {
    const t = makeTest();
    const data = await convexErrorData(atMs(T0, () => t.mutation(api.calendar.takeInline, { key: "u", config })));
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field, value });
    // The key is untouched: a valid config finds it full.
    const ok = { kind: "calendar", rate: 1, period: "day" };
    expect(await atMs(T0 + 1, () => t.mutation(api.calendar.takeInline, { key: "u", config: ok }))).toEqual({ ok: true, resetsAt: NEXT_UTC_DAY });
  });
});
