// The Playground's log entries (entries.ts) and form reading (config.ts): outcomes from a server's
// result, their wording, chart marks with shards, the request a form describes, and a policy in words.
import { describe, expect, it } from "vitest";
import type { RateLimitConfig } from "convex-rate-limiter";
import { applies, DEFAULT_FORM, describePolicy, FIELD_OF, requestOf, type KindField } from "./config.js";
import { describe as say, describeShards, marksOf, outcomeOf, type Entry } from "./entries.js";

describe("outcomeOf", () => {
  it.each([
    [{ ok: true }, { kind: "admitted" }],
    [{ ok: true, retryAfter: 2000 }, { kind: "reserved", runAt: 12_000 }],
    [{ ok: false, retryAfter: 500 }, { kind: "refused", retryAt: 10_500 }],
  ] as const)("%j at 10 s is %j", (result, outcome) => {
    expect(outcomeOf(result, 10_000)).toEqual(outcome);
  });
});

describe("describe", () => {
  it.each([
    [{ kind: "admitted" }, "admitted"],
    [{ kind: "reserved", runAt: 4000 }, "reserved: runs in 4 s"],
    [{ kind: "refused", retryAt: 2 * 3600_000 }, "refused: retry in 2 h"], // long waits in hours
    [{ kind: "invalid", message: "count = 99: can never succeed" }, "error: count = 99: can never succeed"],
  ] as const)("%j reads %s", (outcome, text) => {
    expect(say(outcome, 0)).toBe(text);
  });
});

describe("describeShards", () => {
  it.each([
    [[3], "3"],
    [[1, 4], "1 and 4"],
    [[4, 0, 2], "3: 0, 2, 4"],
  ])("%j reads %s", (shards, text) => {
    expect(describeShards(shards)).toBe(text);
  });
});

describe("marksOf", () => {
  const entry = (id: number, extra: Partial<Entry>): Entry => ({
    id,
    t: 1000,
    count: 1,
    reserve: false,
    outcome: { kind: "admitted" },
    after: 2,
    ...extra,
  });

  it("marks each decision at its tokens after, naming shards of a sharded limit, and skips errors", () => {
    const marks = marksOf(
      [
        entry(1, { sharded: true, shards: [2] }),
        entry(2, { outcome: { kind: "invalid", message: "bad" }, after: undefined }),
        entry(3, { outcome: { kind: "refused", retryAt: 3000 } }),
      ],
      0,
    );
    expect(marks).toEqual([
      { id: 1, t: 1000, outcome: "admitted", v: 2, label: "#1 at 1 s, count 1: admitted, shards 2" },
      { id: 3, t: 1000, outcome: "refused", v: 2, label: "#3 at 1 s, count 1: refused: retry in 2 s" },
    ]);
  });
});

describe("requestOf", () => {
  it("reads the default form as 5 per 10 s, one token, no reserve", () => {
    expect(requestOf(DEFAULT_FORM)).toEqual({
      config: { kind: "token bucket", rate: 5, period: 10_000, shards: 1 },
      count: 1,
      reserve: false,
    });
  });

  it("leaves checking to the component: blanks are NaN or absent, nonsense is kept as typed", () => {
    const { config, count } = requestOf({ ...DEFAULT_FORM, rate: "", capacity: "-3", maxReserved: " ", count: "x" });
    expect(config.rate).toBeNaN();
    expect(config.capacity).toBe(-3);
    expect("maxReserved" in config).toBe(false);
    expect(count).toBeNaN();
  });

  it("maps every config field the component names to an input", () => {
    expect(Object.keys(FIELD_OF).sort()).toEqual(
      ["config.capacity", "config.exact", "config.maxReserved", "config.period", "config.rate", "config.shards", "count", "reserve"].sort(),
    );
  });

  it("reads a sliding window as exact unless the box is unchecked; the other kinds never send exact", () => {
    const sliding = { ...DEFAULT_FORM, kind: "sliding window" } as const;
    expect(requestOf(sliding).config).toEqual({ kind: "sliding window", rate: 5, period: 10_000, shards: 1 });
    expect(requestOf({ ...sliding, exact: false }).config).toEqual({ kind: "sliding window", exact: false, rate: 5, period: 10_000, shards: 1 });
    expect(requestOf({ ...DEFAULT_FORM, exact: false }).config).toEqual({ kind: "token bucket", rate: 5, period: 10_000, shards: 1 });
  });

  it("reads a sliding window without the fields it doesn't have (see form.test.ts for why)", () => {
    const form = { ...DEFAULT_FORM, kind: "sliding window", capacity: "3", maxReserved: "2", reserve: true } as const;
    expect(requestOf(form)).toEqual({
      config: { kind: "sliding window", rate: 5, period: 10_000, shards: 1 },
      count: 1,
      reserve: false,
    });
    expect(["capacity", "maxReserved", "reserve"].map((f) => applies("sliding window", f as KindField))).toEqual([false, false, false]);
    expect(["capacity", "maxReserved", "reserve"].map((f) => applies("fixed window", f as KindField))).toEqual([true, true, true]);
  });
});

describe("describePolicy", () => {
  it.each([
    [{ kind: "token bucket", rate: 10, period: 60_000, capacity: 3 }, "Bursts of up to 3, then one every 6 s."],
    [{ kind: "fixed window", rate: 100, period: 3_600_000 }, "100 per window of 3600 s, up to 100 saved."],
    [{ kind: "sliding window", rate: 10, period: 60_000 }, "At most 10 in any 60 s."],
    [{ kind: "sliding window", rate: 5, period: 1500, shards: 5 }, "At most 5 in any 1.5 s."],
  ] satisfies [RateLimitConfig, string][])("%j reads %s", (config, text) => {
    expect(describePolicy(config)).toBe(text);
  });
});
