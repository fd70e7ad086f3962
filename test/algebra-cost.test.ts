// What an exact sliding window's decision costs in log bytes (src/shared/kinds/algebra.ts's decideRow): the byte functions it calls (window-log-bytes.ts, wrapped to count, never timed) — a take from a row with a log writes one buffer (takenLog), whatever the log's trimming; a peek or a row without a log never asks takenLog.
import { beforeEach, describe, expect, test, vi } from "vitest";
import { decideRow, paramsOf, type State } from "../src/shared/kinds/algebra.js";
import { decodeLog, encodeLog } from "../src/shared/kinds/window-log.js";

type Bytes = typeof import("../src/shared/kinds/window-log-bytes.js");
const calls = vi.hoisted(() => ({ scanLog: 0, trimmedLog: 0, appendedLog: 0, takenLog: 0 }));

// The real functions, counted: every decision below is the real one. Calls within the module
// (takenLog's own appendedLog) are not counted: they write no other buffer.
vi.mock("../src/shared/kinds/window-log-bytes.js", async (importOriginal) => {
  const real = await importOriginal<Bytes>();
  return {
    ...real,
    scanLog: (...a: Parameters<Bytes["scanLog"]>) => (calls.scanLog++, real.scanLog(...a)),
    trimmedLog: (...a: Parameters<Bytes["trimmedLog"]>) => (calls.trimmedLog++, real.trimmedLog(...a)),
    appendedLog: (...a: Parameters<Bytes["appendedLog"]>) => (calls.appendedLog++, real.appendedLog(...a)),
    takenLog: (...a: Parameters<Bytes["takenLog"]>) => (calls.takenLog++, real.takenLog(...a)),
  };
});

beforeEach(() => {
  calls.scanLog = calls.trimmedLog = calls.appendedLog = calls.takenLog = 0;
});

const exact = paramsOf({ kind: "sliding window", rate: 3, period: 1000 }, 0);
const row = (): State => ({
  value: 1,
  ts: 300,
  log: encodeLog([
    { at: 100, count: 1 },
    { at: 300, count: 1 },
  ]),
});

/** The log of a decision's row, decoded. */
const logOf = (d: ReturnType<typeof decideRow>) => (d.ok && d.next?.log !== undefined ? decodeLog(d.next.log) : undefined);

describe("an exact window's take from a row with a log: one scan, one buffer", () => {
  test("the oldest take has left (the log is trimmed as it is taken from)", () => {
    const d = decideRow(row(), exact, 1150, 1, false);
    expect(logOf(d)).toEqual([
      { at: 300, count: 1 },
      { at: 1150, count: 1 },
    ]);
    expect(calls).toEqual({ scanLog: 1, trimmedLog: 0, appendedLog: 0, takenLog: 1 });
  });

  test("every take still in the window, and the take fills it exactly (0 left)", () => {
    const d = decideRow(row(), exact, 400, 1, false);
    expect(d.ok && d.next?.value).toBe(0);
    expect(calls).toEqual({ scanLog: 1, trimmedLog: 0, appendedLog: 0, takenLog: 1 });
  });
});

describe("what takenLog can't write is never asked of it", () => {
  test("a peek (count 0): the row as of now, no take", () => {
    expect(decideRow(row(), exact, 1150, 0, false)).toEqual({ ok: true });
    expect(calls.takenLog).toBe(0);
  });

  test("a row without a log: its bytes are written once, from its value, and scanned once", () => {
    const d = decideRow({ value: 1, ts: 300 }, exact, 400, 1, false);
    expect(logOf(d)).toEqual([
      { at: 300, count: 2 },
      { at: 400, count: 1 },
    ]);
    expect(calls).toEqual({ scanLog: 1, trimmedLog: 0, appendedLog: 1, takenLog: 0 });
  });
});
