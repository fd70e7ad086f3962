// The algebra's decisions and waits (src/shared/kinds/algebra.ts) at explicit instants: the wait search's probes, each kind's guess landing on the wait, exactWait's last whole ms, an exact window's take (stale, missing, foreign or unreadable logs, time running backwards), notBefore for each kind, and a calendar's params.
import { describe, expect, test } from "vitest";
import { decideRow, delayUntil, exactWait, leastDelay, paramsOf, type Params, type State } from "../src/shared/kinds/algebra.js";
import { decodeLog, encodeLog, type Entry } from "../src/shared/kinds/window-log.js";

const MAX = Number.MAX_SAFE_INTEGER;

/** A decision with its row's log decoded, so it compares with toEqual. */
function readable(d: ReturnType<typeof decideRow>): unknown {
  if (!d.ok || d.next === undefined) return d;
  const { log, ...rest } = d.next;
  return { ...d, next: log === undefined ? rest : { ...rest, log: decodeLog(log) } };
}

describe("leastDelay: the least wait, found from the guess in the fewest probes", () => {
  // Each row: the wait, the guess, and the waits probed in order (gallop from the guess, then
  // bisect). A guess on the wait costs two probes: it, and a ms before it.
  const now = 5000;
  test.each<[number, number, number[]]>([
    [1000, 1000, [1000, 999]],
    [2, 8, [8, 7, 5, 1, 3, 2]],
    [5, 10, [10, 9, 7, 3, 5, 4]],
    [3, 1, [1, 2, 4, 3]],
    [100, 3, [3, 4, 6, 10, 18, 34, 66, 130, 98, 114, 106, 102, 100, 99]],
    [4, 2.2, [3, 4]],
    [1, NaN, [1]],
    [2, Infinity, [1, 2]],
  ])("a wait of %d ms from a guess of %d ms", (wait, guess, probed) => {
    const asked: number[] = [];
    const d = leastDelay((t) => (asked.push(t - now), t >= now + wait), now, guess);
    expect(d).toBe(wait);
    expect(asked).toEqual(probed);
  });
});

describe("delayUntil: each kind's guess lands on the wait (the capacity, the wait and a ms before: three tests)", () => {
  /** The wait for `need` tokens, and how many times the search tested a value. */
  function searched(state: State | null, p: Params, now: number, need: number): [number, number] {
    let tests = 0;
    const d = delayUntil(state, p, now, need, (value) => (tests++, value - need >= 0));
    return [d, tests];
  }

  test("a token bucket: 0.5 of 1 token at 2 per second is 250 ms away", () => {
    const p = paramsOf({ kind: "token bucket", rate: 2, period: 1000 }, 0);
    expect(searched({ value: 0.5, ts: 0 }, p, 0, 1)).toEqual([250, 3]);
    expect(searched({ value: 0, ts: 0 }, p, 0, 1)).toEqual([500, 3]);
  });

  test("a token bucket whose row is ahead of now (time ran backwards): nothing refills until its ts", () => {
    const p = paramsOf({ kind: "token bucket", rate: 2, period: 1000 }, 0);
    // Row at 1000, now 500: the token comes 500 ms after the row's ts, 1000 ms from now.
    expect(searched({ value: 0, ts: 1000 }, p, 500, 1)).toEqual([1000, 3]);
  });

  test("a fixed window: 3 tokens at 2 a window are two boundaries away", () => {
    const p = paramsOf({ kind: "fixed window", rate: 2, period: 1000, capacity: 6 }, 100);
    // Empty in the window from 100; boundaries at 1100 (2 tokens) and 2100 (4).
    expect(searched({ value: 0, ts: 100 }, p, 350, 3)).toEqual([1750, 3]);
  });

  test("an approximate sliding window: the previous window slides out at prev / period per ms", () => {
    const p = paramsOf({ kind: "sliding window", rate: 10, period: 1000, exact: false }, 0);
    // The previous window took all 10: a token comes back every 100 ms.
    expect(searched({ value: 0, ts: 0, prev: 10 }, p, 0, 1)).toEqual([100, 3]);
  });

  test("an exact sliding window: when the takes that free enough leave the window", () => {
    const p = paramsOf({ kind: "sliding window", rate: 3, period: 1000 }, 0);
    const log = encodeLog([
      { at: 100, count: 1 },
      { at: 300, count: 2 },
    ]);
    // 2 tokens: the take at 100 frees 1 at 1100, the one at 300 the rest at 1300.
    expect(searched({ value: 0, ts: 300, log }, p, 400, 2)).toEqual([900, 3]);
  });
});

describe("exactWait: a wait is exact up to the last whole ms, Number.MAX_SAFE_INTEGER", () => {
  const p = { rate: 3, period: 1000 };
  test("a retry landing exactly on Number.MAX_SAFE_INTEGER is told", () => {
    expect(exactWait(10, MAX - 10, 1, p)).toBe(10);
  });
  test("one ms past it is an InvalidRateLimit error naming the count, the rate and the wait", () => {
    expect(() => exactWait(11, MAX - 10, 7, p)).toThrow(
      /count = 7: can never succeed in time that can be told: at rate 3 per 1000 ms its wait \(11 ms\) runs past Number.MAX_SAFE_INTEGER ms/,
    );
  });
});

describe("decideRow: an exact sliding window's take, whatever its row holds", () => {
  const exact = paramsOf({ kind: "sliding window", rate: 3, period: 1000 }, 0);
  const log = encodeLog([
    { at: 100, count: 1 },
    { at: 300, count: 1 },
  ]);
  const row: State = { value: 1, ts: 300, log };

  test("a peek (count 0) is ok and writes nothing, with or without reserve", () => {
    expect(decideRow(row, exact, 400, 0, false)).toEqual({ ok: true });
    expect(decideRow(row, exact, 400, 0, true)).toEqual({ ok: true });
  });

  test("a take is logged at now, after the takes still in the window", () => {
    expect(readable(decideRow(row, exact, 400, 1, false))).toEqual({
      ok: true,
      next: { value: 0, ts: 400, log: [{ at: 100, count: 1 }, { at: 300, count: 1 }, { at: 400, count: 1 }] },
    });
  });

  test("the oldest take has left the window (at its at + period): the log keeps the rest", () => {
    expect(readable(decideRow(row, exact, 1150, 1, false))).toEqual({
      ok: true,
      next: { value: 1, ts: 1150, log: [{ at: 300, count: 1 }, { at: 1150, count: 1 }] },
    });
  });

  test("every take has left the window: the log holds the new take alone", () => {
    // The take at 300 leaves at exactly 1300.
    expect(readable(decideRow(row, exact, 1300, 1, false))).toEqual({
      ok: true,
      next: { value: 2, ts: 1300, log: [{ at: 1300, count: 1 }] },
    });
  });

  test("a fractional take: logged as it is, not to whole tokens", () => {
    expect(readable(decideRow(row, exact, 400, 0.5, false))).toEqual({
      ok: true,
      next: { value: 0.5, ts: 400, log: [{ at: 100, count: 1 }, { at: 300, count: 1 }, { at: 400, count: 0.5 }] },
    });
  });

  test("time running backwards (now before the row's ts; pure layer only: convex-test's clock never runs back): the take is logged at the row's ts", () => {
    expect(readable(decideRow(row, exact, 200, 1, false))).toEqual({
      ok: true,
      next: { value: 0, ts: 300, log: [{ at: 100, count: 1 }, { at: 300, count: 2 }] },
    });
    // A row whose ts is after its last take: now (400) is after that take but before the ts.
    expect(readable(decideRow({ ...row, ts: 500 }, exact, 400, 1, false))).toEqual({
      ok: true,
      next: { value: 0, ts: 500, log: [{ at: 100, count: 1 }, { at: 300, count: 1 }, { at: 500, count: 1 }] },
    });
  });

  test("a row without a log (carried from another kind): its used tokens count as taken at its ts", () => {
    const expected = { ok: true, next: { value: 0, ts: 400, log: [{ at: 300, count: 2 }, { at: 400, count: 1 }] } };
    expect(readable(decideRow({ value: 1, ts: 300 }, exact, 400, 1, false))).toEqual(expected);
    // Bytes that aren't a log (an entry of count 0) are read the same way.
    const unreadable = new Uint8Array([2, 0]).buffer;
    expect(readable(decideRow({ value: 1, ts: 300, log: unreadable }, exact, 400, 1, false))).toEqual(expected);
  });

  test("another kind's row that still carries an exact window's log: the log is not read", () => {
    const bucket = paramsOf({ kind: "token bucket", rate: 3, period: 1000 }, 0);
    // 1 token at 300, 0.3 more by 400.
    expect(decideRow(row, bucket, 400, 1, false)).toEqual({ ok: true, next: { value: 0.3, ts: 400 } });
    const fixed = paramsOf({ kind: "fixed window", rate: 3, period: 1000 }, 0);
    expect(decideRow(row, fixed, 400, 1, false)).toEqual({ ok: true, next: { value: 0, ts: 300 } });
  });
});

describe("decideRow: work that waits until allowed (notBefore), by kind", () => {
  const bucket = paramsOf({ kind: "token bucket", rate: 3, period: 1000 }, 0);
  const fixed = paramsOf({ kind: "fixed window", rate: 3, period: 1000 }, 0);
  const exact = paramsOf({ kind: "sliding window", rate: 3, period: 1000 }, 0);

  test("a token bucket takes now, whatever notBefore: no wait when the tokens are there", () => {
    expect(decideRow(null, bucket, 0, 1, true, 500)).toEqual({ ok: true, next: { value: 2, ts: 0 } });
  });

  test("without reserve, notBefore changes nothing: refused until the next window", () => {
    expect(decideRow({ value: 0, ts: 0 }, fixed, 100, 1, false, 500)).toEqual({ ok: false, retryAfter: 900 });
  });

  test("a fixed window's peek with reserve and notBefore is a peek", () => {
    expect(decideRow({ value: 1, ts: 0 }, fixed, 100, 0, true, 500)).toEqual({ ok: true });
  });

  test("a fixed window's reserve without notBefore takes into debt now; the window's rest is not lost", () => {
    // 1 left, 3 taken: owes 2 until the boundary at 1000 brings 3.
    expect(decideRow({ value: 1, ts: 0 }, fixed, 100, 3, true)).toEqual({ ok: true, next: { value: -2, ts: 0 }, retryAfter: 900 });
  });

  test("a fixed window's reserve with notBefore now: the window's last token is lost with the work's", () => {
    expect(decideRow({ value: 1, ts: 0 }, fixed, 100, 3, true, 100)).toEqual({ ok: true, next: { value: -3, ts: 0 }, retryAfter: 900 });
  });

  test("a fixed window's notBefore already past: the work runs now, with no wait", () => {
    expect(decideRow({ value: 2, ts: 0 }, fixed, 100, 1, true, 50)).toEqual({ ok: true, next: { value: 1, ts: 0 } });
  });

  test("an exact window's notBefore already past, or now: logged now, with no wait", () => {
    const row: State = { value: 1, ts: 300, log: encodeLog([{ at: 100, count: 1 }, { at: 300, count: 1 }]) };
    const now: Entry[] = [{ at: 100, count: 1 }, { at: 300, count: 1 }, { at: 400, count: 1 }];
    for (const notBefore of [350, 400]) {
      expect(readable(decideRow(row, exact, 400, 1, true, notBefore))).toEqual({ ok: true, next: { value: 0, ts: 400, log: now } });
    }
  });
});

describe("paramsOf: a calendar quota", () => {
  test("keeps its calendar, at phase 0 whatever phase is passed, and reserves nothing ahead, whatever maxReserved says", () => {
    const calendar = { period: "month" as const, timeZone: "UTC", anchor: 1 };
    expect(paramsOf({ kind: "fixed window", rate: 100, period: 30 * 86_400_000, maxReserved: 5, calendar }, 12_345)).toEqual({
      kind: "fixed window",
      rate: 100,
      period: 30 * 86_400_000,
      capacity: 100,
      maxReserved: 0,
      phase: 0,
      cal: calendar,
    });
  });
});
