// Which terms a pending take was taken under (src/shared/flow/settle.ts, takenUnder), at the calendar's edge: a day's fixed window and a calendar day quota of the same rate share every number but the calendar, and are different terms both ways.
import { expect, test } from "vitest";
import { takenUnder } from "../src/shared/flow/settle.js";
import { resolvePhase } from "../src/shared/shards/layout.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { calendarWindow } from "../src/shared/validation/validate-config.js";

const phaseOf = (c: RateLimitConfig) => resolvePhase(c, "n", undefined);
const calendarDay = calendarWindow({ kind: "calendar", rate: 3, period: "day" });
const plainDay: RateLimitConfig = { kind: "fixed window", rate: 3, period: 86_400_000 };

test.each([
  // [why, the take's config, the config now]
  ["taken under a calendar day, a plain day's window now", calendarDay, plainDay],
  ["taken under a plain day's window, a calendar day now", plainDay, calendarDay],
] as const)("%s: other terms", (_why, under, now) => {
  expect(takenUnder({ shard: 0, count: 1, ts: 0, config: under }, now, phaseOf)).toBe(false);
});

test("the same calendar day, written again: the same terms", () => {
  expect(takenUnder({ shard: 0, count: 1, ts: 0, config: calendarDay }, calendarWindow({ kind: "calendar", rate: 3, period: "day" }), phaseOf)).toBe(true);
});
