// The demo's progress line (progress.ts) on a fake terminal and a fake pipe, with an injected clock for the throttle.
import { describe, expect, test } from "vitest";
import { Progress } from "./progress.js";

function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (text: string) => writes.push(text) };
}

describe("Progress", () => {
  test("on a terminal: one line rewritten in place, at most ten times a second, erased at the end", () => {
    const s = stream(true);
    let now = 0;
    const p = new Progress(s, () => now);
    p.start("api");
    now = 50;
    p.update("100 calls"); // 50 ms after the last draw: skipped
    now = 150;
    p.update("200 calls");
    p.done("2,000 calls");
    expect(s.writes).toEqual(["\r\x1b[Kdemo: api: starting", "\r\x1b[Kdemo: api: 200 calls", "\r\x1b[K"]);
  });

  test("elsewhere: a line when a step starts and one when it ends, no updates, no escapes", () => {
    const s = stream(false);
    const p = new Progress(s, () => 0);
    p.start("llm");
    p.update("10 calls");
    p.done("469 calls in 590ms");
    expect(s.writes).toEqual(["demo: llm ...\n", "demo: llm: 469 calls in 590ms\n"]);
  });

  test("a long status is cut short of 80 columns, so the line never wraps", () => {
    const s = stream(true);
    const p = new Progress(s, () => 0);
    p.start("x".repeat(200));
    expect(s.writes[0]!.replace("\r\x1b[K", "").length).toBeLessThanOrEqual(79);
  });
});
