// The demo's HTML report (report.ts): escaping, a self-contained page (no scripts, no network assets), one SVG chart per scenario with its lanes, and the check status; rendered from fixed results.
import { describe, expect, test } from "vitest";
import { escapeHtml, renderReport, svgChart } from "./report.js";
import type { ChartData, ScenarioResult } from "./types.js";

const chart: ChartData = {
  title: "tokens of <limit>",
  start: 0,
  end: 60_000,
  capacity: 40,
  floor: -200,
  points: [
    { at: 0, value: 40 },
    { at: 30_000, value: -120 },
    { at: 60_000, value: 10 },
  ],
  marks: [
    { at: 1_000, kind: "admitted" },
    { at: 2_000, kind: "reserved" },
    { at: 40_000, kind: "ran" },
  ],
};

function result(id: string, ok: boolean): ScenarioResult {
  return {
    id,
    title: `${id} & co`,
    about: ["what ran <here>"],
    chart,
    summary: [{ label: "admitted", value: "3", note: "all of them" }],
    checks: [{ name: "never over the bound", ok, detail: ok ? "fine" : "went 2 over" }],
    calls: 10,
    wallMs: 5,
  };
}

const meta = { command: "npm run demo -- --fast", seed: 1, clockStart: Date.UTC(2025, 0, 1), wallMs: 1234, calls: 20 };

describe("escapeHtml", () => {
  test("escapes the five special characters", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
});

describe("svgChart", () => {
  const svg = svgChart(chart, "c0");

  test("is one SVG with clip paths named after its id", () => {
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
    expect(svg).toContain('id="c0-up"');
    expect(svg).toContain('id="c0-down"');
  });

  test("draws one lane per kind of mark present, with its total", () => {
    expect(svg).toContain("admitted now: 1");
    expect(svg).toContain("reserved for later: 1");
    expect(svg).toContain("scheduled work ran: 1");
    expect(svg).not.toContain("refused:"); // no refusals: no lane
  });

  test("labels the capacity, zero and the reservation floor, and escapes the title", () => {
    expect(svg).toContain(">capacity<");
    expect(svg).toContain(">most that may be reserved<");
    expect(svg).toContain(">-200<");
    expect(svg).toContain('aria-label="tokens of &lt;limit&gt;"');
  });
});

describe("renderReport", () => {
  test("is self-contained: inline styles and SVG, no scripts, nothing fetched", () => {
    const html = renderReport([result("a", true), result("b", true)], meta);
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(http/i);
    // The only URL is the SVG namespace, which is a name, not a fetch.
    const urls = html.match(/https?:\/\/[^"'\s)]+/g) ?? [];
    expect(new Set(urls)).toEqual(new Set(["http://www.w3.org/2000/svg"]));
    expect(html.match(/<svg /g)).toHaveLength(2);
  });

  test("escapes scenario text and says whether every check passed", () => {
    const passed = renderReport([result("a", true)], meta);
    expect(passed).toContain("a &amp; co");
    expect(passed).toContain("what ran &lt;here&gt;");
    expect(passed).toContain("all 1 checks passed");
    const failed = renderReport([result("a", true), result("b", false)], meta);
    expect(failed).toContain("1 of 2 checks failed");
    expect(failed).toContain('class="bad"');
  });
});
