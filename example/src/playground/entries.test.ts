// The Playground's log entries (entries.ts) and form reading (config.ts): outcomes from a server's
// result, their wording, chart marks with shards, and the request a form describes.
import { describe, expect, it } from "vitest";
import { DEFAULT_FORM, FIELD_OF, requestOf } from "./config.js";
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
      ["config.capacity", "config.maxReserved", "config.period", "config.rate", "config.shards", "count"].sort(),
    );
  });
});
