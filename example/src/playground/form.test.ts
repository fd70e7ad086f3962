// The Playground form against the rate limiter component (the example app on convex-test, as the
// offline UI runs it): for every kind, the request a form describes is checked with `check` before
// anything is fired, and that verdict agrees field by field with what `limit` (the server's
// mutation) answers for the same request; every field it names is one the form shows for the kind.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isInvalidRateLimitError } from "convex-rate-limiter";
import { seededRandom } from "../../../tools/random.js";
import { makeTest } from "../../convex/test.setup.js";
import { Lane } from "../offline/lane.js";
import { ORIGIN } from "../offline/simulation.js";
import { applies, countNote, DEFAULT_FORM, FIELD_OF, formError, KINDS, requestOf, type Form, type Kind } from "./config.js";

function freshLane(): Lane {
  const t = makeTest();
  return new Lane(async (at, fn) => {
    vi.setSystemTime(at);
    return fn(t);
  });
}

/** What the server's `limit` says about a request: ok, refused, or the field it names as invalid. */
async function served(lane: Lane, form: Form): Promise<string> {
  try {
    const r = await lane.limit(ORIGIN, requestOf(form));
    return r.result.ok ? "ok" : "refused";
  } catch (error) {
    if (isInvalidRateLimitError(error)) return `invalid ${error.data.field}: ${error.data.message}`;
    throw error;
  }
}

/** The fields a form for `kind` shows (as inputs that can be edited, or the kind selector). */
function shown(kind: Kind): Set<keyof Form> {
  const all: (keyof Form)[] = ["kind", "rate", "periodSeconds", "capacity", "maxReserved", "shards", "count", "reserve"];
  return new Set(all.filter((f) => (f === "capacity" || f === "maxReserved" || f === "reserve" ? applies(kind, f) : true)));
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(ORIGIN);
  vi.spyOn(Math, "random").mockImplementation(seededRandom(3));
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Forms that are wrong in one field each, or that hold values the kind doesn't use. */
const FORMS: [string, Partial<Form>][] = [
  ["the default", {}],
  ["a blank rate", { rate: "" }],
  ["a zero rate", { rate: "0" }],
  ["a zero period", { periodSeconds: "0" }],
  ["more shards than tokens", { shards: "9" }],
  ["half a shard", { shards: "1.5" }],
  ["a count above the rate", { count: "6" }],
  ["a negative count", { count: "-1" }],
  ["a capacity of 3", { capacity: "3" }],
  ["a capacity of 8 and a count of 7", { capacity: "8", count: "7" }],
  ["a negative capacity", { capacity: "-1" }],
  ["max reserved 2, reserving 7", { maxReserved: "2", reserve: true, count: "7" }],
  ["a negative max reserved", { maxReserved: "-2" }],
  ["reserve", { reserve: true }],
];

describe.each(KINDS.map((kind) => [kind]))("a %s", (kind) => {
  it.each(FORMS)("%s: check names what limit names, and only fields the form shows", async (_why, change) => {
    const form: Form = { ...DEFAULT_FORM, ...change, kind };
    const lane = freshLane();
    const verdict = await lane.check(ORIGIN, requestOf(form));
    const server = await served(lane, form);
    if (verdict.ok) {
      expect(server).toMatch(/^(ok|refused)$/);
      expect(server).toBe(verdict.result.ok ? "ok" : "refused");
      return;
    }
    expect(server).toBe(`invalid ${verdict.error.field}: ${verdict.error.message}`);
    const field = FIELD_OF[verdict.error.field];
    expect(field, `${verdict.error.field} belongs to an input`).toBeDefined();
    expect(shown(kind).has(field!), `${field} is shown for a ${kind}`).toBe(true);
  });
});

describe("a sliding window", () => {
  const sliding = { ...DEFAULT_FORM, kind: "sliding window" } satisfies Form;

  it("sends no capacity, max reserved or reserve, whatever the hidden fields hold", () => {
    expect(requestOf({ ...sliding, capacity: "3", maxReserved: "2", reserve: true })).toEqual({
      config: { kind: "sliding window", rate: 5, period: 10_000, shards: 1 },
      count: 1,
      reserve: false,
    });
  });

  it("would be refused by the component for each of them, naming the field the form hides", async () => {
    // Why the form doesn't send them: the component refuses each one, naming it.
    const lane = freshLane();
    const config = requestOf(sliding).config;
    const cases = [
      [{ config: { ...config, capacity: 3 }, count: 1, reserve: false }, "config.capacity"],
      [{ config: { ...config, maxReserved: 2 }, count: 1, reserve: false }, "config.maxReserved"],
      [{ config, count: 1, reserve: true }, "reserve"],
    ] as const;
    for (const [request, field] of cases) {
      const verdict = await lane.check(ORIGIN, request);
      expect(verdict.ok === false && verdict.error.field).toBe(field);
      expect(FIELD_OF[field]).toBeDefined();
    }
  });
});

describe("what the form refuses itself, before the component sees NaN or Infinity", () => {
  it.each([
    ["a blank rate", { rate: "" }, "config.rate", "Rate is required"],
    ["a blank period", { periodSeconds: " " }, "config.period", "Period is required"],
    ["a blank count", { count: "" }, "count", "Count is required"],
    ["text", { rate: "ten" }, "config.rate", 'Rate: "ten" is not a number'],
    ["1e400, beyond the largest number", { rate: "1e400" }, "config.rate", 'Rate: "1e400" is too large to be a number (the largest is about 1.8e308)'],
    ["-1e400 as a capacity", { capacity: "-1e400" }, "config.capacity", 'Capacity: "-1e400" is too large to be a number (the largest is about 1.8e308)'],
  ] satisfies [string, Partial<Form>, string, string][])("%s", (_, change, field, message) => {
    const error = formError({ ...DEFAULT_FORM, ...change });
    expect(error).toMatchObject({ kind: "InvalidRateLimit", field, message });
    expect(FIELD_OF[field]).toBeDefined(); // shown under its input
  });

  it("leaves blank optional fields, fields the kind hides, and numbers to the component", () => {
    expect(formError(DEFAULT_FORM)).toBeUndefined();
    expect(formError({ ...DEFAULT_FORM, rate: "0", shards: "1.5" })).toBeUndefined(); // the component's to refuse
    expect(formError({ ...DEFAULT_FORM, kind: "sliding window", capacity: "abc", maxReserved: "1e999" })).toBeUndefined();
  });

  it("says what a peek and a fraction of a token do", () => {
    expect(countNote("0")).toMatch(/^0 is a peek: it takes nothing/);
    expect(countNote("0.5")).toBe("a fraction of a token: each request takes 0.5 (as a budget of LLM tokens might)");
    expect(countNote("1")).toBeUndefined();
    expect(countNote("")).toBeUndefined();
  });
});
