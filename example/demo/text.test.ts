// The demo's terminal text (text.ts): the colour decision, check lines, a scenario block within 80 columns, and the closing lines listing failures; from fixed results.
import { describe, expect, test } from "vitest";
import { visibleWidth } from "./chart.js";
import { checkLines, closingText, scenarioText, useColor } from "./text.js";
import type { ScenarioResult } from "./types.js";

describe("useColor", () => {
  test.each([
    [{ isTTY: true }, {}, true], // a terminal, NO_COLOR unset
    [{ isTTY: true }, { NO_COLOR: "1" }, false], // NO_COLOR set
    [{ isTTY: true }, { NO_COLOR: "" }, true], // NO_COLOR empty counts as unset
    [{ isTTY: false }, {}, false], // a pipe or a file
    [{}, {}, false], // a stream that doesn't say
  ])("%o with %o: %s", (stream, env, expected) => {
    expect(useColor(stream, env)).toBe(expected);
  });
});

const long = "a detail long enough to need wrapping on an eighty column terminal, and then some more words";
const result: ScenarioResult = {
  id: "llm",
  title: "LLM requests reserve a token budget; the work runs when promised",
  about: ["Requests of 1k to 15k tokens arrive through llm.request at about 16 a minute for 3m: more than the budget."],
  chart: {
    title: "tokens",
    start: 0,
    end: 180_000,
    capacity: 40_000,
    points: [
      { at: 0, value: 40_000 },
      { at: 90_000, value: -150_000 },
    ],
    marks: [
      { at: 0, kind: "admitted" },
      { at: 100_000, kind: "refused" },
    ],
  },
  summary: [
    { label: "requests", value: "46", note: "376,500 tokens; about 16 a minute for 3m, 1k to 15k tokens each" },
    { label: "waits", value: "mean 3m03s, max 4m59s", note: "runAfter of reserved requests (retryAfter + jitter)" },
  ],
  checks: [
    { name: "every reserved job ran", ok: true, detail: "43 of 43 jobs" },
    { name: "no job ran early", ok: false, detail: long },
  ],
  calls: 840,
  wallMs: 1000,
};

describe("checkLines", () => {
  test("a passed check gets ✓, a failed one ✗, wrapped under its text", () => {
    expect(checkLines(result.checks[0]!, { width: 80, color: false })).toEqual(["  ✓ every reserved job ran: 43 of 43 jobs"]);
    const lines = checkLines(result.checks[1]!, { width: 80, color: false });
    expect(lines[0]!.startsWith("  ✗ no job ran early: ")).toBe(true);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines[1]!.startsWith("    ")).toBe(true);
  });
});

describe("scenarioText", () => {
  test.each([false, true])("fits 80 columns (colour %s)", (color) => {
    const lines = scenarioText(result, 4, 5, { width: 80, color });
    expect(lines[0]).toContain("4/5 LLM requests");
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
    expect(lines.join("\n").includes("\x1b[")).toBe(color);
  });

  test("a heading too long for the width wraps at word boundaries, under itself", () => {
    const lines = scenarioText(result, 4, 5, { width: 60, color: false });
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(60);
    // "── 4/5 LLM requests reserve a token budget; the work runs" is 58 wide: two rule characters follow.
    expect(lines[0]).toBe("── 4/5 LLM requests reserve a token budget; the work runs ──");
    expect(lines[1]).toBe("   when promised");
  });

  test("draws the charts alongside the first one, in order, each under its title", () => {
    const compared: ScenarioResult = {
      ...result,
      alongside: [
        { ...result.chart, title: "tokens of b" },
        { ...result.chart, title: "tokens of c" },
      ],
    };
    const lines = scenarioText(compared, 1, 1, { width: 80, color: false });
    const titles = lines.filter((l) => l === "tokens" || l.startsWith("tokens of "));
    expect(titles).toEqual(["tokens", "tokens of b", "tokens of c"]);
    // Each chart is followed by a blank line before the next.
    expect(lines[lines.indexOf("tokens of b") - 1]).toBe("");
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
  });

  test("a heading that fits stays on one line, ruled to the width", () => {
    const short = { ...result, title: "a short title" };
    expect(scenarioText(short, 1, 2, { width: 40, color: false })[0]).toBe(`── 1/2 a short title ${"─".repeat(19)}`);
  });
});

describe("closingText", () => {
  test("all passed: says so, with the calls and the report path", () => {
    const ok = { ...result, checks: [result.checks[0]!] };
    const lines = closingText([ok], { wallMs: 2000, report: "demo-report.html" }, { width: 80, color: false });
    expect(lines[0]).toBe("all 1 checks passed");
    // The scenarios' time (1 s), then the whole run's (2 s): wrapped at spaces to the width.
    expect(lines.join(" ")).toContain("840 convex-test calls in 1s of scenarios (840 per second); 2s in all, loading the app included");
    expect(lines.at(-1)).toBe("report: demo-report.html");
  });

  test("failures are listed with their scenario", () => {
    const lines = closingText([result], { wallMs: 2000, report: null }, { width: 80, color: false });
    expect(lines[0]).toBe("1 of 2 checks FAILED:");
    expect(lines[1]).toBe("  ✗ LLM requests reserve a token budget; the work runs when promised: no job ran");
    expect(lines[2]!.startsWith("    early: a detail long enough")).toBe(true); // wrapped under the mark
    expect(lines.join("\n")).not.toContain("report:");
  });
});
