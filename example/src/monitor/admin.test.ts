// The admin view's model (admin.ts) on explicit instants: the chart's span in whole minutes, the
// minutes filled in where none was listed, the sentence read to screen readers, and a key's cells.
import { describe, expect, it } from "vitest";
import { MINUTE } from "convex-rate-limiter";
import { adminLimits, busiest, chartSpan, describeSeries, keyCells, minuteLabel, minuteSeries } from "./admin.js";

const T0 = Date.UTC(2025, 0, 1, 9, 0);
const zero = { admittedTokens: 0, reservedTokens: 0, refusedTokens: 0, blocked: 0, overridden: 0 };

describe("chartSpan", () => {
  it("ends after the minute holding now and starts whole minutes earlier", () => {
    expect(chartSpan(T0 + 30_000, 10)).toEqual({ from: T0 - 9 * MINUTE, to: T0 + MINUTE });
    // At a minute's first ms that minute is the last one shown.
    expect(chartSpan(T0, 1)).toEqual({ from: T0, to: T0 + MINUTE });
    expect(chartSpan(T0 - 1, 1)).toEqual({ from: T0 - MINUTE, to: T0 });
  });
});

describe("minuteSeries", () => {
  it("lists every minute of the span, zero where the metrics list none", () => {
    const series = minuteSeries({
      from: T0,
      to: T0 + 3 * MINUTE,
      buckets: [{ bucket: T0 + MINUTE, admitted: 5, reserved: 1, refused: 2, ...zero }],
    });
    expect(series).toEqual([
      { bucket: T0, admitted: 0, reserved: 0, refused: 0 },
      { bucket: T0 + MINUTE, admitted: 5, reserved: 1, refused: 2 },
      { bucket: T0 + 2 * MINUTE, admitted: 0, reserved: 0, refused: 0 },
    ]);
    expect(busiest(series)).toBe(8);
    expect(busiest([])).toBe(0);
  });
});

describe("describeSeries", () => {
  it("sums the outcomes over the span, in UTC clock times", () => {
    const series = minuteSeries({
      from: T0,
      to: T0 + 2 * MINUTE,
      buckets: [
        { bucket: T0, admitted: 5, reserved: 0, refused: 2, ...zero },
        { bucket: T0 + MINUTE, admitted: 1, reserved: 3, refused: 0, ...zero },
      ],
    });
    expect(describeSeries(series)).toBe("From 09:00 to 09:02 UTC: 6 requests admitted, 3 reserved and 2 refused; at most 7 in one minute.");
    expect(describeSeries(minuteSeries({ from: T0, to: T0 + MINUTE, buckets: [] }))).toBe("No requests from 09:00 to 09:01 UTC.");
    expect(describeSeries([])).toBe("No minutes to show.");
    expect(minuteLabel(T0 + 65 * MINUTE)).toBe("10:05");
  });
});

describe("keyCells", () => {
  it("writes the tokens now of the capacity, and when the key is full again", () => {
    const key = { key: "key-a", value: 2.5, capacity: 5, fullIn: 30_000, idle: false, rows: 1, pending: 0 };
    expect(keyCells(key)).toEqual({ key: "key-a", tokens: "2.5 of 5", full: "in 30 s" });
    expect(keyCells({ ...key, key: undefined, value: 5, fullIn: 0 })).toEqual({ key: "(global)", tokens: "5 of 5", full: "full" });
  });
});

describe("adminLimits", () => {
  it("lists the limits with metrics first, each group in the app's order", () => {
    const bucket = { kind: "token bucket", rate: 1, period: MINUTE } as const;
    expect(adminLimits({ a: bucket, b: { ...bucket, metrics: true }, c: { ...bucket, metrics: false }, d: { ...bucket, metrics: true } })).toEqual([
      { name: "b", metrics: true },
      { name: "d", metrics: true },
      { name: "a", metrics: false },
      { name: "c", metrics: false },
    ]);
  });
});
