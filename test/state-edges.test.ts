// A row's state at its edges (src/shared/kinds/state.ts, windows.ts), as tables of explicit instants: a sliding window repaying a debt (deep, fractional, a whole number of windows, past float precision), an exact window's row without a log or with takes below its value's precision, an unchanged log kept as the same bytes, a capacity kept exactly, calendar windows and a large phase.
import { describe, expect, test } from "vitest";
import { evaluate, roomFor, valueAt, withValue, type Params, type State } from "../src/shared/kinds/state.js";
import { startOf, windowIndex } from "../src/shared/kinds/windows.js";
import { decodeLog, encodeLog, type Entry } from "../src/shared/kinds/window-log.js";
import { nominalLength } from "../src/shared/core/calendar.js";

/** A sliding window's params: `rate` per `period` ms, windows from 0 (its capacity is its rate). */
function sliding(rate: number, period: number): Params {
  return { kind: "sliding window", rate, period, capacity: rate, maxReserved: Infinity, phase: 0 };
}

/** An exact sliding window's params: `rate` per `period` ms, holding `capacity`. */
function exact(rate: number, period: number, capacity = rate): Params {
  return { kind: "exact sliding window", rate, period, capacity, maxReserved: Infinity, phase: 0 };
}

/** The entries of a state's log (none without one). */
function entries(state: State): readonly Entry[] {
  return state.log === undefined ? [] : decodeLog(state.log)!;
}

describe("a sliding window repays a debt (carried in from another kind) a window's rate per window", () => {
  const p = sliding(10, 1000);
  // [why, stored state, now, expected]; the row's window is [0, 1000).
  test.each<[string, State, number, State]>([
    ["3.5 windows owed, 3 windows after the first: 5 still owed, the window that ended took its whole rate", { value: -35, ts: 500, prev: 0 }, 4500, { value: 0, ts: 4500, prev: 10 }],
    ["4 windows after: repaid with 5 to spare, which the window that ended took, sliding back", { value: -35, ts: 500, prev: 0 }, 5500, { value: 7.5, ts: 5500, prev: 5 }],
    ["5 windows after: nothing owed, nothing behind", { value: -35, ts: 500, prev: 0 }, 6500, { value: 10, ts: 6500, prev: 0 }],
    ["exactly 3 windows owed, at the boundary that repays them: nothing left, the ended window took all", { value: -30, ts: 500, prev: 0 }, 4000, { value: 0, ts: 4000, prev: 10 }],
    ["exactly 3 windows owed, a window after they are repaid: full", { value: -30, ts: 500, prev: 0 }, 5000, { value: 10, ts: 5000, prev: 0 }],
    ["exactly 3 windows owed, half-way through the window after: the last window's take slides back", { value: -30, ts: 500, prev: 0 }, 4500, { value: 5, ts: 4500, prev: 10 }],
    ["10.5 owed, a window after the first: 0.5 still owed", { value: -10.5, ts: 0, prev: 0 }, 2000, { value: -0.5, ts: 2000, prev: 10 }],
    ["10.5 owed, two windows after the first: repaid, the window that ended took only the 0.5", { value: -10.5, ts: 0, prev: 0 }, 3000, { value: 9.5, ts: 3000, prev: 0.5 }],
  ])("%s", (_why, state, now, expected) => {
    expect(evaluate(state, p, now)).toEqual(expected);
  });

  // A rate of a third: whole numbers of windows whose float products land beside the debt.
  const third = sliding(1 / 3, 1000);
  test.each<[string, State, number, State]>([
    // 5/3 ÷ 1/3 is 5.000000000000001 in floats, yet 5 windows of 1/3 repay 5/3: the 6th owes nothing.
    ["5/3 owed: repaid after 5 windows, so the 6th window ended with its whole rate", { value: -5 / 3, ts: 0, prev: 0 }, 7000, { value: 1 / 3, ts: 7000, prev: 0 }],
    // A debt of exactly one window: repaid by the end of the first, so the second took nothing.
    ["1/3 owed, two windows after: the rate, exactly", { value: -1 / 3, ts: 0, prev: 0 }, 3000, { value: 1 / 3, ts: 3000, prev: 0 }],
  ])("%s", (_why, state, now, expected) => {
    expect(evaluate(state, third, now)).toEqual(expected);
  });

  // Debts of very many windows are counted in one step, never a window at a time: each row here
  // would take longer than the test's budget to count window by window.
  test.each<[string, State, Params, number, State]>([
    ["10^12 windows owed at half a token a window, 2 windows after", { value: -5e11, ts: 0, prev: 0 }, sliding(0.5, 1000), 3500, { value: -499999999998.75, ts: 3500, prev: 0.5 }],
    ["10^12 windows owed, a window before they are repaid", { value: -5e11, ts: 0, prev: 0 }, sliding(0.5, 1), 1e12, { value: -0.5, ts: 1e12, prev: 0.5 }],
    ["10^12 windows owed, just repaid", { value: -5e11, ts: 0, prev: 0 }, sliding(0.5, 1), 1e12 + 1, { value: 0, ts: 1e12 + 1, prev: 0.5 }],
    ["10^12 windows owed, repaid a window ago", { value: -5e11, ts: 0, prev: 0 }, sliding(0.5, 1), 1e12 + 2, { value: 0.5, ts: 1e12 + 2, prev: 0 }],
    // At 5e14 tokens the debt's half token and 0.7's float error put the quotient's ceiling one
    // window short: 714285714285716 windows repay it, not ...715.
    ["5e14 owed at 0.7 a ms: the window that repays it leaves 0.6875", { value: -500000000000000.5, ts: 0, prev: 0 }, sliding(0.7, 1), 714285714285717, { value: 0.6875, ts: 714285714285717, prev: 0.0125 }],
    ["5e14 owed at 0.7 a ms: a window later, the rate", { value: -500000000000000.5, ts: 0, prev: 0 }, sliding(0.7, 1), 714285714285718, { value: 0.7, ts: 714285714285718, prev: 0 }],
    // 10^17 windows: past 2^53, where a count of windows n less one is n again.
    ["10^17 owed at a token a window, 2 windows after", { value: -1e17, ts: 0, prev: 0 }, sliding(1, 1000), 2500, { value: -1e17, ts: 2500, prev: 1 }],
  ])("%s", (_why, state, p, now, expected) => {
    expect(evaluate(state, p, now)).toEqual(expected);
  });
});

describe("an exact window's row without a log holds capacity - value tokens, taken at its ts", () => {
  const p = exact(10, 1000);
  test.each<[string, State, number, State]>([
    ["a full row stays full, with no log (not an empty one)", { value: 10, ts: 0 }, 5, { value: 10, ts: 5 }],
    ["3 taken at 1000 are still in the window at 1500", { value: 7, ts: 1000 }, 1500, { value: 7, ts: 1500, log: encodeLog([{ at: 1000, count: 3 }]) }],
    ["at 2000 they leave: full, and no log", { value: 7, ts: 1000 }, 2000, { value: 10, ts: 2000 }],
    // A debt deeper than a window's rate is held until a window's worth per window repays it.
    ["15 owed at 1000: 25 held until 3000 + 1000", { value: -15, ts: 1000 }, 3999, { value: -15, ts: 3999, log: encodeLog([{ at: 3000, count: 25 }]) }],
    ["15 owed at 1000: free at 4000", { value: -15, ts: 1000 }, 4000, { value: 10, ts: 4000 }],
  ])("%s", (_why, state, now, expected) => {
    const out = evaluate(state, p, now);
    expect(out).toStrictEqual({ ...expected, ...(expected.log === undefined ? {} : { log: out.log }) });
    expect(entries(out)).toEqual(expected.log === undefined ? [] : decodeLog(expected.log));
    expect(valueAt(state, p, now)).toBe(expected.value);
  });

  test("withValue takes from and gives back to the carried tokens", () => {
    // Another row's log trimmed first: the byte layer's one-slot memory holds that log, never this row's.
    const other = evaluate({ value: 8, ts: 900, log: encodeLog([{ at: 100, count: 1 }, { at: 900, count: 1 }]) }, p, 1500);
    expect(entries(other)).toEqual([{ at: 900, count: 1 }]);
    const row: State = { value: 7, ts: 1000 };
    const taken = withValue(row, p, 5);
    expect(taken.value).toBe(5);
    expect(entries(taken)).toEqual([{ at: 1000, count: 5 }]);
    const given = withValue(row, p, 8);
    expect(given.value).toBe(8);
    expect(entries(given)).toEqual([{ at: 1000, count: 2 }]);
    const same = withValue(row, p, 7);
    expect(same.value).toBe(7);
    expect(entries(same)).toEqual([{ at: 1000, count: 3 }]);
  });
});

describe("an exact window's row whose bytes aren't a log holds capacity - value tokens, taken at its ts", () => {
  const p = exact(10, 1000);
  // Header 3 is neither a compact entry (even) nor a full one (1).
  const row: State = { value: 7, ts: 1000, log: new Uint8Array([3]).buffer };
  test("read, and written back unchanged, as the carried log's bytes", () => {
    expect(evaluate(row, p, 1500)).toStrictEqual({ value: 7, ts: 1500, log: encodeLog([{ at: 1000, count: 3 }]) });
    const same = withValue(row, p, 7);
    expect(same.value).toBe(7);
    expect(same.log).not.toBe(row.log);
    expect(entries(same)).toEqual([{ at: 1000, count: 3 }]);
  });
});

describe("an exact window's log", () => {
  const p = exact(10, 1000);
  const log = encodeLog([
    { at: 500, count: 2 },
    { at: 900, count: 3 },
  ]);
  test("an entry at exactly now - period has left; the rest stays", () => {
    const out = evaluate({ value: 5, ts: 900, log }, p, 1500);
    expect(out.value).toBe(7);
    expect(entries(out)).toEqual([{ at: 900, count: 3 }]);
    expect(valueAt({ value: 5, ts: 900, log }, p, 1500)).toBe(7);
    expect(valueAt({ value: 5, ts: 900, log }, p, 1499)).toBe(5);
  });

  test("before the row's ts (clock skew), a window is read as at its ts: what left by then stays gone", () => {
    // Written at 1500 without trimming (as an earlier version may have): the take at 300 left at 1300.
    const row: State = { value: 7, ts: 1500, log: encodeLog([{ at: 300, count: 1 }, { at: 900, count: 2 }]) };
    expect(evaluate(row, p, 1200).value).toBe(8);
    expect(valueAt(row, p, 1200)).toBe(8);
    expect(valueAt(row, p, 1500)).toBe(8);
    expect(valueAt(row, p, 1900)).toBe(10);
  });

  test("a log with nothing to trim and a value unchanged come back as the same bytes, not re-encoded", () => {
    const cur = evaluate({ value: 5, ts: 900, log }, p, 1000);
    expect(cur.log).toBe(log);
    const same = withValue(cur, p, cur.value);
    expect(same).toStrictEqual({ value: 5, ts: 1000, log });
    expect(same.log).toBe(log);
  });

  test("a take too small to show in the value (1e-11 beside a capacity of 1000) stays in the log beside the next", () => {
    const big = exact(1000, 1000);
    const cur = evaluate({ value: 1000, ts: 100, log: encodeLog([{ at: 100, count: 1e-11 }]) }, big, 100);
    expect(cur.value).toBe(1000);
    const next = withValue(cur, big, 999);
    expect(next.value).toBe(999);
    expect(entries(next)).toEqual([{ at: 100, count: 1.00000000001 }]);
  });

  test("a window with no takes holds its capacity exactly, even one that subtracting 0 would round", () => {
    const odd = exact(1, 1000, 1.00000000000005);
    expect(roomFor([], odd)).toBe(1.00000000000005);
    const row: State = { value: 0.00000000000005, ts: 0, log: encodeLog([{ at: 0, count: 1 }]) };
    expect(valueAt(row, odd, 1000)).toBe(1.00000000000005);
    expect(evaluate(row, odd, 1000)).toStrictEqual({ value: 1.00000000000005, ts: 1000 });
  });
});

describe("fixed windows in time", () => {
  test("a phase past half the period: the window holding t, though (t + phase) / period would say the next", () => {
    const p = { phase: 900, period: 1000 };
    expect(windowIndex(6200, p)).toBe(5);
    expect(startOf(5, p)).toBe(5900);
    expect(windowIndex(6899, p)).toBe(5);
    expect(windowIndex(6900, p)).toBe(6);
  });

  test("a calendar month is a month, not its nominal 30 days", () => {
    const p = { phase: 0, period: nominalLength("month"), cal: { period: "month" as const, timeZone: "UTC", anchor: 1 } };
    // Months since the year 0: March 2026 is 2026 × 12 + 2.
    expect(windowIndex(Date.UTC(2026, 2, 15), p)).toBe(24314);
    expect(startOf(24314, p)).toBe(Date.UTC(2026, 2, 1));
    expect(startOf(24315, p)).toBe(Date.UTC(2026, 3, 1));
  });
});
