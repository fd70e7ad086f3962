// The algebra of waiting until allowed, table-driven with explicit instants (no database, no
// clock): decideRow's reservations that wait (a token bucket into debt; a fixed window in the
// window that can hold the work, taking the tokens a boundary loses; an exact sliding window
// logging the take at its instant, no earlier than notBefore; a fixed window's line bounded by
// maxReserved), and withWithdrawn, which gives a cancelled run's logged take back.
import { describe, expect, test } from "vitest";
import { decideRow, evaluate, paramsOf, type State } from "../src/shared/kinds/algebra.js";
import { decodeLog, encodeLog, withWithdrawn } from "../src/shared/kinds/window-log.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const T = 1_000_000; // a window start of every period below (start 0)
const tb: RateLimitConfig = { kind: "token bucket", rate: 2, period: 1000 };
const fw: RateLimitConfig = { kind: "fixed window", rate: 3, period: 1000, start: 0 };
const fwCarry: RateLimitConfig = { kind: "fixed window", rate: 3, period: 1000, capacity: 4, start: 0 };
const sw: RateLimitConfig = { kind: "sliding window", rate: 3, period: 1000 };
const p = (c: RateLimitConfig) => paramsOf(c, 0);

/** Reserves `counts` one after another at `now`, each no earlier than the last one's instant. */
function line(config: RateLimitConfig, counts: number[], now = T, start: State | null = null) {
  let state = start;
  let last = now;
  const at: number[] = [];
  for (const count of counts) {
    const d = decideRow(state, p(config), now, count, true, last);
    if (!d.ok) throw new Error("refused");
    state = d.next ?? state;
    last = now + (d.retryAfter ?? 0);
    at.push(last - T);
  }
  return { at, state };
}

describe("decideRow, waiting (notBefore given)", () => {
  test.each([
    // [why, config, counts, instants (ms after T)]
    ["a token bucket: 2 now, then one every 500 ms", tb, [1, 1, 1, 2], [0, 0, 500, 1500]],
    ["a fixed window: 3 a window, each in the first window that holds it", fw, [2, 1, 1, 1, 1, 1], [0, 0, 1000, 1000, 1000, 2000]],
    ["a fixed window: what a window has left that the next can't use is lost, not carried", fw, [2, 2, 2, 1, 1], [0, 1000, 2000, 2000, 3000]],
    ["a fixed window carrying 1 (capacity 4): the window's last token goes into the next", fwCarry, [3, 2, 2, 1], [0, 1000, 1000, 2000]],
    ["an exact sliding window: 3 in any 1000 ms, each logged at its instant", sw, [1, 2, 1, 2, 1], [0, 0, 1000, 1000, 2000]],
  ] as const)("%s", (_, config, counts, instants) => {
    expect(line(config, [...counts]).at).toEqual(instants);
  });

  test("an exact window: the row's ts stays now, and its value counts the takes logged ahead", () => {
    const { state } = line(sw, [3, 1]);
    expect(state!.ts).toBe(T);
    expect(decodeLog(state!.log!)).toEqual([
      { at: T, count: 3 },
      { at: T + 1000, count: 1 },
    ]);
    // 3 - 4: a request now is refused until the window holds room, at T + 1000 + 1000.
    expect(evaluate(state, p(sw), T).value).toBe(-1);
    expect(decideRow(state, p(sw), T + 10, 1, false)).toEqual({ ok: false, retryAfter: 990 });
  });

  test("an exact window: no earlier than notBefore, even with room before it", () => {
    const d = decideRow(null, p(sw), T, 1, true, T + 250);
    expect(d).toMatchObject({ ok: true, retryAfter: 250 });
  });

  test("a fixed window with room now, but work queued in a later window: it runs there", () => {
    const d = decideRow(null, p(fw), T + 10, 1, true, T + 1000);
    expect(d).toMatchObject({ ok: true, retryAfter: 990 });
  });

  test("a fixed window's maxReserved bounds the line: refused until the same request fits, to the ms", () => {
    // 3 a window, at most 3 reserved ahead: 3 now and 3 in the next window owe 3; a 7th would owe 4.
    const bounded: RateLimitConfig = { ...fw, maxReserved: 3 };
    const { at, state } = line(bounded, [1, 1, 1, 1, 1, 1]);
    expect(at).toEqual([0, 0, 0, 1000, 1000, 1000]);
    expect(decideRow(state, p(bounded), T + 10, 1, true, T + 1000)).toEqual({ ok: false, retryAfter: 990 });
    // At the next window the row owes 0, and the same request goes into the window after (+2000).
    expect(decideRow(state, p(bounded), T + 999, 1, true, T + 1000)).toMatchObject({ ok: false, retryAfter: 1 });
    expect(decideRow(state, p(bounded), T + 1000, 1, true, T + 1000)).toMatchObject({ ok: true, retryAfter: 1000 });
    // A window's leftover lost at its boundary counts toward the bound, as the row owes it: 2 now
    // (1 left, lost) and 3 in the next window owe 3 (1 - 3 - 1); with maxReserved 2, refused until
    // the next window, where all 3 run at once.
    const two: RateLimitConfig = { ...fw, maxReserved: 2 };
    const { state: s2 } = line(two, [2]);
    expect(decideRow(s2, p(two), T, 3, true, T)).toEqual({ ok: false, retryAfter: 1000 });
    expect(decideRow(s2, p(two), T + 1000, 3, true, T)).toMatchObject({ ok: true, next: { value: 0 } });
  });
});

describe("withWithdrawn", () => {
  const log = [
    { at: 10, count: 2 },
    { at: 20, count: 1 },
    { at: 30, count: 2 },
  ];
  test.each([
    ["takes the tokens off the entry at the instant", 30, 1, [{ at: 10, count: 2 }, { at: 20, count: 1 }, { at: 30, count: 1 }]],
    ["removes the entry it empties", 20, 1, [{ at: 10, count: 2 }, { at: 30, count: 2 }]],
    ["what the entry doesn't hold comes off the oldest", 20, 2, [{ at: 10, count: 1 }, { at: 30, count: 2 }]],
    ["no entry there: off the oldest, as a credit", 25, 1, [{ at: 10, count: 1 }, { at: 20, count: 1 }, { at: 30, count: 2 }]],
  ] as const)("%s", (_, at, count, expected) => {
    expect(withWithdrawn(decodeLog(encodeLog(log))!, at, count)).toEqual(expected);
  });
});
