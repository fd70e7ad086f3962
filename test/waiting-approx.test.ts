// Why the approximate sliding window can't wait, with explicit instants (no database): its row can't hold takes in future windows, and carrying them as a debt puts work too early; the refusal through register() names config.exact.
import { describe, expect, test } from "vitest";
import { decideRow, evaluate, paramsOf, type State } from "../src/shared/kinds/algebra.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { rateLimiter, schema, sendRef } from "./app/waiting.js";
import { convexErrorData, makeTest } from "./setup.js";

const S = 1000;
const period = 60 * S;
const T = 100 * period; // a window start
const approx: RateLimitConfig = { kind: "sliding window", rate: 3, period, exact: false };
const p = paramsOf(approx, 0);

/** Admits one token at each instant (ms after T) in turn, as plain requests; throws if one is refused. */
function replay(instants: number[]): State | null {
  let state: State | null = null;
  for (const at of instants) {
    const d = decideRow(state, p, T + at, 1, false);
    if (!d.ok) throw new Error(`refused at ${at}`);
    state = d.next ?? state;
  }
  return state;
}

/** The first instants (ms after T) n plain takes of one token are admitted at, each no earlier than the one before. */
function firstInstants(n: number): number[] {
  let state: State | null = null;
  let at = T;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    let d = decideRow(state, p, at, 1, false);
    if (!d.ok) {
      at += d.retryAfter;
      d = decideRow(state, p, at, 1, false);
    }
    if (!d.ok) throw new Error("refused after retryAfter");
    state = d.next ?? state;
    out.push(at - T);
  }
  return out;
}

describe("the approximate sliding window can't wait exactly", () => {
  test("seven takes of 3 a minute at their first allowed instants: the count of each aligned window decides", () => {
    // Window 0 takes 3; window 1, behind a full window (weight 1 - f), only 2 before its end;
    // the 6th falls on window 2's start, where it counts in full, so the 7th waits until 150 s.
    expect(firstInstants(7)).toEqual([0, 0, 0, 80 * S, 100 * S, 120 * S, 150 * S]);
    const before = replay([0, 0, 0, 80 * S, 100 * S, 120 * S]);
    expect(decideRow(before, p, T + 149_999, 1, false).ok).toBe(false);
    expect(decideRow(before, p, T + 150 * S, 1, false).ok).toBe(true);
  });

  test("the row holds one window's count and the one before, so seven queued at T can only be a debt, and a debt runs the 7th at 140 s", () => {
    // 3 taken and 4 reserved ahead at T: the most the row can say is 4 tokens owed. It repays
    // a window's rate per window, as if window 1 had taken 3; it took 2 (at 80 s and 100 s).
    const debt: State = { value: 3 - 7, ts: T, prev: 0 };
    expect(evaluate(debt, p, T + 140 * S).value).toBe(0);
    // Replayed as plain requests, a run at 140 s is refused: scheduled 10 s too early.
    const six = replay([0, 0, 0, 80 * S, 100 * S, 120 * S]);
    expect(decideRow(six, p, T + 140 * S, 1, false).ok).toBe(false);
    // And a plain request the debt row admits at 170 s would pass the limit too.
    expect(evaluate(debt, p, T + 170 * S).value).toBeGreaterThanOrEqual(1);
    const seven = replay([0, 0, 0, 80 * S, 100 * S, 120 * S, 150 * S]);
    expect(decideRow(seven, p, T + 170 * S, 1, false).ok).toBe(false);
  });

  test("so runWhenAllowed refuses it: an InvalidRateLimit naming config.exact, nothing written", async () => {
    const t = makeTest(schema);
    expect(await convexErrorData(t.run((ctx) => rateLimiter.runWhenAllowed(ctx, "approx", { key: "a" }, sendRef, { to: "x" })))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "config.exact",
    });
    expect((await t.run((ctx) => rateLimiter.getValue(ctx, "approx", { key: "a" }))).value).toBe(3);
  });
});
