// The demo's discrete-event timeline (timeline.ts): order, ties, actions that schedule more, and the clock callback, with a recorded list of instants.
import { describe, expect, test } from "vitest";
import { Timeline } from "./timeline.js";

describe("Timeline", () => {
  test("runs actions in time order, ties in the order scheduled, moving the clock first", async () => {
    const log: string[] = [];
    const tl = new Timeline((at) => {
      log.push(`clock ${at}`);
    });
    tl.at(30, () => void log.push("c"));
    tl.at(10, () => void log.push("a"));
    tl.at(20, () => void log.push("b1"));
    tl.at(20, () => void log.push("b2")); // same instant: after b1
    expect(await tl.runUntil(100)).toBe(4);
    expect(log).toEqual(["clock 10", "a", "clock 20", "b1", "clock 20", "b2", "clock 30", "c"]);
  });

  test("stops at `until` (inclusive) and keeps the rest for later", async () => {
    const ran: number[] = [];
    const tl = new Timeline(() => {});
    for (const at of [5, 10, 15]) tl.at(at, () => void ran.push(at));
    expect(await tl.runUntil(10)).toBe(2);
    expect(tl.size).toBe(1);
    await tl.runUntil(20);
    expect(ran).toEqual([5, 10, 15]);
  });

  test("actions may schedule more, which run in order with the rest", async () => {
    const ran: string[] = [];
    const tl = new Timeline(() => {});
    tl.at(0, () => {
      ran.push("send");
      tl.at(6, () => void ran.push("retry")); // e.g. after retryAfter
    });
    tl.at(5, () => void ran.push("other"));
    await tl.runUntil(10);
    expect(ran).toEqual(["send", "other", "retry"]);
  });

  test("an action scheduled in the past runs at the current instant: time never goes back", async () => {
    const clock: number[] = [];
    const tl = new Timeline((at) => void clock.push(at));
    tl.at(50, () => tl.at(10, () => {}));
    await tl.runUntil(100);
    expect(clock).toEqual([50, 50]);
  });

  test("awaits async actions before the next one", async () => {
    const log: string[] = [];
    const tl = new Timeline(() => {});
    tl.at(1, async () => {
      await Promise.resolve();
      log.push("first done");
    });
    tl.at(1, () => void log.push("second"));
    await tl.runUntil(1);
    expect(log).toEqual(["first done", "second"]);
  });

  test("many actions come out sorted (the heap keeps its order)", async () => {
    const ran: number[] = [];
    const tl = new Timeline(() => {});
    // A fixed pseudo-random order of 200 instants.
    const ats = Array.from({ length: 200 }, (_, i) => (i * 7919) % 211);
    for (const at of ats) tl.at(at, () => void ran.push(at));
    await tl.runUntil(1000);
    expect(ran).toEqual([...ats].sort((a, b) => a - b));
  });
});
