// The demo's HTML report (report.ts): escaping, a self-contained page (no scripts, no network assets), one SVG chart per scenario with its axes and labelled lanes, scaling to a phone's width, and the check status; rendered from fixed results.
import { describe, expect, test } from "vitest";
import { escapeHtml, renderReport, subjectOf, svgChart } from "./report.js";
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

  test("labels each lane's total at its end, under a line saying whose requests they are", () => {
    expect(svg).toContain('<tspan class="n">1</tspan> admitted</text>');
    expect(svg).toContain('<tspan class="n">1</tspan> reserved</text>');
    expect(svg).toContain('<tspan class="n">1</tspan> ran</text>');
    expect(svg).toContain(">requests to &lt;limit&gt;, by outcome:</text>");
  });

  test("leaves out a token label that would overlap one before it, keeping its line", () => {
    // 3.1 is the top of the data, a hair above the capacity of 3: only "3" is written.
    const close = svgChart({ ...chart, capacity: 3, floor: undefined, points: [{ at: 0, value: 3.1 }, { at: 60_000, value: 0 }] }, "c1");
    expect(close).toContain(">3</text>");
    expect(close).not.toContain(">3.1</text>");
    expect(close.match(/<line x1="84" x2="580" [^>]*stroke="#(ccc|888)"/g)).toHaveLength(3); // 0, the capacity, the top
  });

  test("titles the token axis, or with the chart's own axis title", () => {
    expect(svg).toMatch(/rotate\(-90\)[^>]*>tokens available<\/text>/);
    expect(svgChart({ ...chart, axis: "free slots" }, "c2")).toMatch(/rotate\(-90\)[^>]*>free slots<\/text>/);
  });

  test("scales with its column: a viewBox and no fixed size", () => {
    const open = svg.slice(0, svg.indexOf(">"));
    expect(open).toMatch(/viewBox="0 0 720 \d+"/);
    expect(open).not.toMatch(/\s(width|height)=/);
  });

  test("labels the capacity, zero and the reservation floor, and escapes the title", () => {
    expect(svg).toContain(">capacity<");
    expect(svg).toContain(">most that may be reserved<");
    // Under the floor line, which the curve never goes below: it never crosses the curve.
    expect(svg).toMatch(/y="(\d+(\.\d+)?)" text-anchor="end" dominant-baseline="hanging" class="note">most that may be reserved</);
    expect(svg).toContain(">-200<");
    expect(svg).toContain('aria-label="tokens of &lt;limit&gt;"');
  });
});

describe("svgChart's narrow layout", () => {
  const narrow = svgChart(chart, "n0", "narrow");

  test("is 360 units wide, with the lanes' totals over their lanes, inside the chart", () => {
    expect(narrow.slice(0, narrow.indexOf(">"))).toMatch(/viewBox="0 0 360 \d+" class="chart narrow"/);
    const totals = [...narrow.matchAll(/<text x="(\d+)" y="[\d.]+" class="ax total">/g)].map((m) => Number(m[1]));
    expect(totals).toEqual([62, 62, 62]); // at the plot's left edge, not in a right margin
    expect(narrow).toContain(">requests, by outcome:</text>");
  });
});

describe("subjectOf", () => {
  test.each([
    ["tokens of sendMessage for alice", "sendMessage for alice"],
    ["tokens of freeTrialSignUp (everyone's)", "freeTrialSignUp (everyone's)"], // whose: kept
    ["tokens of llmTokens (below 0: reserved ahead)", "llmTokens"], // a note on the chart: dropped
    ["free slots of llmGenerations for ada", "llmGenerations for ada"],
    ["queue depth", "queue depth"],
  ])("%s is about %s", (title, subject) => {
    expect(subjectOf(title)).toBe(subject);
  });
});

describe("renderReport", () => {
  test("shows each chart's narrow layout below 760 px, and stacks the table at phone width", () => {
    const html = renderReport([result("a", true)], meta);
    expect(html).toContain("svg.chart.narrow { display: none; max-width: 520px; }");
    expect(html).toContain("@media (max-width: 760px) { svg.chart.wide { display: none; } svg.chart.narrow { display: block; } }");
    expect(html.match(/<svg [^>]*class="chart wide"/g)).toHaveLength(1);
    expect(html.match(/<svg [^>]*class="chart narrow"/g)).toHaveLength(1);
    const phone = html.slice(html.indexOf("@media (max-width: 640px)"));
    expect(phone).toContain("td.n { grid-column: 1 / -1; }");
  });

  test("is self-contained: inline styles and SVG, no scripts, nothing fetched", () => {
    const html = renderReport([result("a", true), result("b", true)], meta);
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(http/i);
    // The only URL is the SVG namespace, which is a name, not a fetch.
    const urls = html.match(/https?:\/\/[^"'\s)]+/g) ?? [];
    expect(new Set(urls)).toEqual(new Set(["http://www.w3.org/2000/svg"]));
    expect(html.match(/<svg /g)).toHaveLength(4); // two charts, each in two layouts
  });

  test("draws the charts alongside the first one in the same section, each with its own ids and legend", () => {
    const other = (title: string): ChartData => ({ ...chart, title, floor: undefined });
    const compared: ScenarioResult = { ...result("seam", true), alongside: [other("tokens of b"), other("tokens of c")] };
    const html = renderReport([result("a", true), compared], meta);
    const section = html.slice(html.indexOf('<section id="seam-1">'), html.indexOf("</section>", html.indexOf('<section id="seam-1">')));
    expect(section.match(/<svg [^>]*class="chart wide"/g)).toHaveLength(3);
    for (const id of ["c1-up", "c1-1-up", "c1-2-up", "c1n-up", "c1-1n-up", "c1-2n-up"]) expect(section).toContain(`id="${id}"`);
    const ids = html.match(/id="c[\dn-]+-up"/g) ?? [];
    expect(ids).toHaveLength(8);
    expect(new Set(ids).size).toBe(8); // unique on the page
    expect(section.match(/<p class="legend">/g)).toHaveLength(3);
    expect(section).toContain("requests to b, one lane per outcome");
    expect(section.indexOf('aria-label="tokens of b"')).toBeLessThan(section.indexOf('aria-label="tokens of c"'));
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
