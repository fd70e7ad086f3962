// Calendar quotas against a reference outside the product: over random histories, zones, periods, anchors, shards and modes (transactional or asynchronous), through the client and the component (convex-test, register()), the tokens admitted within each calendar period never exceed the allowance, an unsharded quota admits exactly what is left, and a refusal's resetsAt is the reference's next period boundary, where the retry succeeds.
//
// The reference labels an instant with its period by reading the local date and time from its own
// Intl formatter (another locale and format than the product's) and doing the calendar's
// arithmetic on those fields: a day anchored at hour h is the local date of the local time less h
// hours; a week is the date of the last local midnight on the anchor weekday; a month is (year,
// month) once the local date reaches the anchor day clamped to the month's length, else the month
// before. No search for instants, no code of src/shared/core/calendar.ts: a boundary is where the label
// changes, checked at resetsAt - 1 and resetsAt.
import { fc, test } from "@fast-check/vitest";
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test as vitestTest, vi } from "vitest";
import { recordTally, runs, TIMEOUT } from "../tools/fast-check.js";
import type * as calendar from "./app/calendar.js";
import { makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ calendar: typeof calendar }>;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

const ZONES = ["UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Chatham", "America/Sao_Paulo"];

const formats = new Map<string, Intl.DateTimeFormat>();
/** The local date and time of `t` in `zone`, read from "sv-SE" (ISO-like) text, as numbers. */
function local(t: number, zone: string): { y: number; m: number; d: number; h: number } {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("sv-SE", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", hourCycle: "h23" });
    formats.set(zone, f);
  }
  // e.g. "2026-03-08 14"
  const match = /^(\d+)-(\d+)-(\d+) (\d+)$/.exec(f.format(t));
  if (!match) throw new Error(`unexpected local text ${f.format(t)}`);
  return { y: Number(match[1]), m: Number(match[2]), d: Number(match[3]), h: Number(match[4]) % 24 };
}

type Quota = { period: "day" | "week" | "month"; timeZone: string; anchor: number };

/** The reference's label of the period holding `t`: equal labels, same period; later periods, larger labels. */
function label(t: number, q: Quota): number {
  const { y, m, d, h } = local(t, q.timeZone);
  const dayNumber = Date.UTC(y, m - 1, d) / DAY;
  switch (q.period) {
    case "day":
      return h >= q.anchor ? dayNumber : dayNumber - 1;
    case "week": {
      const weekday = (((dayNumber + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday
      return dayNumber - ((weekday - q.anchor + 7) % 7);
    }
    case "month": {
      const length = new Date(Date.UTC(y, m, 0)).getUTCDate();
      return d >= Math.min(q.anchor, length) ? y * 12 + m : y * 12 + m - 1;
    }
  }
}

const quotaArb = fc.oneof(
  fc.record({ period: fc.constant("day" as const), anchor: fc.integer({ min: 0, max: 23 }) }),
  fc.record({ period: fc.constant("week" as const), anchor: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ period: fc.constant("month" as const), anchor: fc.integer({ min: 1, max: 31 }) }),
);

// Steps between requests: within a period, across several, or to the next change of a DST zone's
// clocks; starting in 2026 before each change of the zones above.
const stepArb = fc.oneof(
  fc.integer({ min: 1, max: 60_000 }),
  fc.integer({ min: 1, max: 6 * 3_600_000 }),
  fc.integer({ min: 1, max: 3 * DAY }),
  fc.integer({ min: 1, max: 40 * DAY }),
);

const seen = { refused: 0, retried: 0, crossed: 0 };
recordTally("calendar", seen);

describe("calendar quotas against a reference", () => {
  test.prop(
    [
      quotaArb,
      fc.constantFrom(...ZONES),
      fc.integer({ min: 1, max: 4 }),
      fc.constantFrom(1, 2),
      fc.boolean(),
      fc.integer({ min: 0, max: 330 * DAY }),
      fc.array(fc.record({ step: stepArb, count: fc.integer({ min: 1, max: 2 }), retry: fc.boolean() }), { minLength: 10, maxLength: 30 }),
    ],
    { ...runs(60, 600), timeout: TIMEOUT },
  )("never more than the allowance in a period; exactly what is left when unsharded; resetsAt is the next boundary", async (shape, timeZone, rate, shards, async, start, steps) => {
    const q: Quota = { ...shape, timeZone };
    const config = {
      kind: "calendar",
      rate: shards === 2 ? Math.max(2, rate) : rate,
      period: q.period,
      timeZone,
      anchor: q.anchor,
      ...(shards === 2 ? { shards } : {}),
      ...(async ? { applyUpdates: "asynchronously" } : {}),
    };
    const t = makeTest();
    const used = new Map<number, number>();
    const labels = new Set<number>();
    let now = T0 + start;
    const take = async (at: number, count: number) => {
      vi.setSystemTime(at);
      return t.mutation(api.calendar.takeInline, { key: "k", config: { ...config }, count });
    };
    let refusedHere = false;
    let retriedHere = false;
    for (const { step, count: asked, retry } of steps) {
      now += step;
      // Never more than a shard pair serves, or than the rate (validation refuses those).
      const count = Math.min(asked, config.rate);
      const l = label(now, q);
      labels.add(l);
      const before = used.get(l) ?? 0;
      const result = (await take(now, count)) as { ok: boolean; retryAfter?: number; resetsAt?: number };
      if (result.ok) used.set(l, before + count);
      // Unsharded, it admits exactly what is left (asynchronously too: convex-test's stale
      // snapshot is the current state, and takes not yet applied are folded in).
      if (shards === 1) expect(result.ok, `at ${new Date(now).toISOString()} with ${before} used`).toBe(before + count <= config.rate);
      expect(used.get(l) ?? 0).toBeLessThanOrEqual(config.rate);
      // resetsAt is the reference's next boundary: the last ms of this period, then a new one.
      const resetsAt = result.resetsAt!;
      expect(label(resetsAt - 1, q)).toBe(l);
      expect(label(resetsAt, q)).toBeGreaterThan(l);
      if (!result.ok) {
        refusedHere = true;
        if (shards === 1) expect(result.retryAfter).toBe(resetsAt - now);
        if (retry) {
          // The retry at resetsAt succeeds: a new period, its whole allowance.
          now = resetsAt;
          const again = (await take(now, count)) as { ok: boolean };
          expect(again.ok).toBe(true);
          const nl = label(now, q);
          labels.add(nl);
          used.set(nl, (used.get(nl) ?? 0) + count);
          retriedHere = true;
        }
      }
    }
    if (refusedHere) seen.refused++;
    if (retriedHere) seen.retried++;
    if (labels.size > 1) seen.crossed++;
  });

  vitestTest("and the runs above were refused, retried at resetsAt, and crossed periods", () => {
    for (const [what, count] of Object.entries(seen)) expect(count, what).toBeGreaterThan(0);
  });
});
