// The whole messages of validate-config.ts's shape checks, on the pure functions: calendar and concurrency configs' fields, each near-miss rule of the suggestions and its bounds, each article, and what is skipped (undefined fields, a missing config).
import { describe, expect, test } from "vitest";
import { errorData } from "./error-data.js";
import {
  validateCalendarShape,
  validateConcurrencyShape,
  validateConfigShape,
  validateLimits,
  validateOptionTypes,
} from "../src/shared/validation/validate-config.js";
import type { InvalidRateLimitError } from "../src/shared/shapes/validators.js";

/** The InvalidRateLimit data `check` throws (any other error is rethrown; no throw fails the test). */
const errorOf = (check: () => void) => errorData(check) as InvalidRateLimitError;

const invalid = (field: string, value: string, message: string): InvalidRateLimitError => ({ kind: "InvalidRateLimit", field, value, message });

const KINDS = `"token bucket", "fixed window", "sliding window", "calendar" and "concurrency"`;
const CALENDAR_FIELDS = "rate, period, timeZone, anchor, shards, applyUpdates, dryRun, metrics, lockout";
const BUCKET_FIELDS = "rate, period, capacity, maxReserved, shards, applyUpdates, dryRun, metrics, lockout, networks, start";
const PERIODS = `"day", "week" or "month"`;

const calendar = (extra: object) => ({ kind: "calendar", rate: 100, period: "month", ...extra });
const concurrency = (extra: object) => ({ kind: "concurrency", capacity: 2, lease: 1000, ...extra });
const bucket = (extra: object) => ({ kind: "token bucket", rate: 10, period: 1000, ...extra });

describe("a calendar quota's fields", () => {
  // [why, config, field, value as shown, message]
  const rows: [string, object, string, string, string][] = [
    ["a field no kind has: its fields listed, kind not among them", calendar({ jitter: true }), "config.jitter", "true", `is not a field of a calendar config (its fields are ${CALENDAR_FIELDS})`],
    // Only `kind` is skipped: a field named "" is checked as any other.
    ["a field with no name", calendar({ "": 1 }), "config.", "1", `is not a field of a calendar config (its fields are ${CALENDAR_FIELDS})`],
    ["another limiter's name for rate", calendar({ limit: 5 }), "config.limit", "5", `is not a field of a calendar config (its fields are ${CALENDAR_FIELDS}); did you mean rate?`],
    ["another limiter's name for period", calendar({ window: "day" }), "config.window", `"day"`, `is not a field of a calendar config (its fields are ${CALENDAR_FIELDS}); did you mean period?`],
    // burst means capacity, which a calendar quota has not: no hint rather than a wrong one.
    ["a synonym of a field it lacks", calendar({ burst: 5 }), "config.burst", "5", `is not a field of a calendar config (its fields are ${CALENDAR_FIELDS})`],
    ["another case", calendar({ timezone: "UTC" }), "config.timezone", `"UTC"`, `is not a field of a calendar config (its fields are ${CALENDAR_FIELDS}); did you mean timeZone?`],
    ["one word of a camelCase field", calendar({ zone: "UTC" }), "config.zone", `"UTC"`, `is not a field of a calendar config (its fields are ${CALENDAR_FIELDS}); did you mean timeZone?`],
    ["a typo, unquoted", calendar({ anchr: 1 }), "config.anchr", "1", `is not a field of a calendar config (its fields are ${CALENDAR_FIELDS}); did you mean anchor?`],
    ["a period of ms", calendar({ period: 86_400_000 }), "config.period", "86400000", `a calendar quota's period is ${PERIODS}; for a period of ms, use a fixed window`],
    ["a period it has not", calendar({ period: "year" }), "config.period", `"year"`, `must be ${PERIODS}`],
    ["a period in capitals: a 3-letter value matched by its words", calendar({ period: "DAY" }), "config.period", `"DAY"`, `must be ${PERIODS}; did you mean "day"?`],
    ["a period one letter off", calendar({ period: "days" }), "config.period", `"days"`, `must be ${PERIODS}; did you mean "day"?`],
    ["a zone as a number", calendar({ timeZone: 5 }), "config.timeZone", "5", "must be a string, not a number"],
    ["a null zone", calendar({ timeZone: null }), "config.timeZone", "null", "must be a string, not null"],
    ["a zone as an object", calendar({ timeZone: {} }), "config.timeZone", "{}", "must be a string, not an object"],
    ["zones as an array", calendar({ timeZone: ["UTC"] }), "config.timeZone", `["UTC"]`, "must be a string, not an array"],
    ["a zone as a flag", calendar({ timeZone: true }), "config.timeZone", "true", "must be a string, not a boolean"],
    ["a rate as a string", calendar({ rate: "100" }), "config.rate", `"100"`, "must be a number, not a string"],
    ["a flag as a string", calendar({ dryRun: "yes" }), "config.dryRun", `"yes"`, "must be true or false, not a string"],
    ["a mode as a number: two choices, nothing to suggest", calendar({ applyUpdates: 5 }), "config.applyUpdates", "5", `must be "transactionally" or "asynchronously"`],
    [
      "a capacity",
      calendar({ capacity: 5 }),
      "config.capacity",
      "5",
      "a calendar quota has no capacity: nothing rolls over, each period grants its rate; leave it out",
    ],
    ["no rate", { kind: "calendar", period: "day" }, "config.rate", "undefined", "is missing from the calendar config"],
    ["no period", { kind: "calendar", rate: 1 }, "config.period", "undefined", "is missing from the calendar config"],
  ];

  test.each(rows)("%s", (_, config, field, value, problem) => {
    const message = `${field} = ${value}: ${problem}`;
    expect(errorOf(() => validateCalendarShape(config))).toEqual(invalid(field, value, message));
    expect(errorOf(() => validateLimits({ quota: config }))).toEqual(invalid(field, value, `${message} (limit "quota")`));
    expect(errorOf(() => validateOptionTypes({ config }))).toEqual(invalid(field, value, message));
  });

  test("undefined fields are as if left out, the refused ones too", () => {
    const config = calendar({ capacity: undefined, timeZone: undefined, jitter: undefined });
    expect(() => validateCalendarShape(config)).not.toThrow();
    expect(() => validateLimits({ quota: config })).not.toThrow();
  });
});

describe("a concurrency limit's fields", () => {
  const FIELDS = "capacity, lease, metrics";
  const rows: [string, object, string, string, string][] = [
    [
      "shards",
      concurrency({ shards: 2 }),
      "config.shards",
      "2",
      "a concurrency limit can't be sharded: a shard's share of the slots would refuse while another shard has one free; leave shards out",
    ],
    ["a field no kind has: its fields listed, kind not among them", concurrency({ jitter: true }), "config.jitter", "true", `is not a field of a concurrency config (its fields are ${FIELDS})`],
    ["a field with no name", concurrency({ "": 1 }), "config.", "1", `is not a field of a concurrency config (its fields are ${FIELDS})`],
    ["another limiter's name for capacity", concurrency({ max: 3 }), "config.max", "3", `is not a field of a concurrency config (its fields are ${FIELDS}); did you mean capacity?`],
    ["another limiter's name for lease", concurrency({ ttl: 1000 }), "config.ttl", "1000", `is not a field of a concurrency config (its fields are ${FIELDS}); did you mean lease?`],
    ["a 4-letter near miss, unquoted", concurrency({ leas: 5 }), "config.leas", "5", `is not a field of a concurrency config (its fields are ${FIELDS}); did you mean lease?`],
    // Two letters off as leas is one, but three letters are too few to guess from.
    ["a 3-letter near miss: nothing suggested", concurrency({ lea: 5 }), "config.lea", "5", `is not a field of a concurrency config (its fields are ${FIELDS})`],
    ["a capacity as a string", concurrency({ capacity: "2" }), "config.capacity", `"2"`, "must be a number, not a string"],
    ["metrics as a number", concurrency({ metrics: 1 }), "config.metrics", "1", "must be true or false, not a number"],
    ["no lease", { kind: "concurrency", capacity: 2 }, "config.lease", "undefined", "is missing from the concurrency config"],
    ["no capacity", { kind: "concurrency", lease: 1000 }, "config.capacity", "undefined", "is missing from the concurrency config"],
  ];

  test.each(rows)("%s", (_, config, field, value, problem) => {
    const message = `${field} = ${value}: ${problem}`;
    expect(errorOf(() => validateConcurrencyShape(config))).toEqual(invalid(field, value, message));
    expect(errorOf(() => validateLimits({ llm: config }))).toEqual(invalid(field, value, `${message} (limit "llm")`));
  });

  test("undefined fields are as if left out, shards too", () => {
    const config = concurrency({ shards: undefined, metrics: undefined, jitter: undefined });
    expect(() => validateConcurrencyShape(config)).not.toThrow();
    expect(() => validateLimits({ llm: config })).not.toThrow();
  });
});

describe("a rate limit's kind and fields, and the suggestions' rules", () => {
  const kindError = (kind: string, value: string, hint = "") =>
    invalid("config.kind", value, `config.kind = ${value}: is not a kind of limit (the kinds are ${KINDS})${hint}`);

  test.each<[string, unknown, string, string]>([
    ["the same words up to spaces, however far apart", "t-o-k-e-n-bucket", `"t-o-k-e-n-bucket"`, `; did you mean "token bucket"?`],
    ["a word alone after a separator", "_sliding", `"_sliding"`, `; did you mean "sliding window"?`],
    // window is a word of two kinds: neither is suggested.
    ["a word of two kinds", "window", `"window"`, ""],
    // Two letters off bucket, but far from "token bucket" as a whole.
    ["a typo of one word alone", "bukcet", `"bukcet"`, ""],
    ["a number", 5, "5", ""],
    ["an empty string", "", `""`, ""],
  ])("%s", (_, kind, shown, hint) => {
    expect(errorOf(() => validateConfigShape({ kind, rate: 10, period: 1000 }))).toEqual(kindError(String(kind), shown, hint));
  });

  test("a calendar quota's kind where a rate limit's config is needed", () => {
    expect(errorOf(() => validateConfigShape(calendar({})))).toEqual(
      invalid(
        "config.kind",
        `"calendar"`,
        `config.kind = "calendar": is a calendar quota's kind, which the RateLimiter runs as a fixed window with \`calendar\` (see calendarWindow); name it in a RateLimiter or pass it to one`,
      ),
    );
  });

  test("a concurrency limit's kind where a rate limit's config is needed: the three kinds listed", () => {
    expect(errorOf(() => validateConfigShape(concurrency({})))).toEqual(
      invalid(
        "config.kind",
        `"concurrency"`,
        `config.kind = "concurrency": is a concurrency limit's kind, but a rate limit's config is needed here (its kind "token bucket", "fixed window" or "sliding window"); a concurrency limit is named in the RateLimiter and taken with acquire`,
      ),
    );
  });

  const fieldError = (field: string, value: string, hint: string) =>
    invalid(`config.${field}`, value, `config.${field} = ${value}: is not a field of a token bucket config (its fields are ${BUCKET_FIELDS})${hint}`);

  test.each<[string, string, string]>([
    ["one word of a camelCase field", "reserved", "; did you mean maxReserved?"],
    ["two letters off", "maxResrvd", "; did you mean maxReserved?"],
    ["three letters off: nothing suggested", "maxRsrvd", ""],
    ["one letter off", "rates", "; did you mean rate?"],
    ["another limiter's name", "interval", "; did you mean period?"],
    ["no near miss", "jitter", ""],
    ["no name", "", ""],
  ])("a field: %s", (_, field, hint) => {
    expect(errorOf(() => validateConfigShape(bucket({ [field]: 1 })))).toEqual(fieldError(field, "1", hint));
  });

  test("a mode of the wrong type: the two choices, no suggestion", () => {
    expect(errorOf(() => validateConfigShape(bucket({ applyUpdates: true })))).toEqual(
      invalid("config.applyUpdates", "true", `config.applyUpdates = true: must be "transactionally" or "asynchronously"`),
    );
  });
});

describe("a limit that is not an object", () => {
  test.each<[unknown, string]>([
    ["10 per minute", `"10 per minute"`],
    [null, "null"],
  ])("%j", (config, shown) => {
    const message = `config = ${shown}: must be an object such as { kind: "token bucket", rate: 10, period: MINUTE }`;
    expect(errorOf(() => validateLimits({ sendMessage: config }))).toEqual(invalid("config", shown, `${message} (limit "sendMessage")`));
    expect(errorOf(() => validateOptionTypes({ config }))).toEqual(invalid("config", shown, message));
  });
});

describe("a call's options", () => {
  test.each<[string, object, string, string, string]>([
    ["a null count", { count: null }, "count", "null", "must be a number, not null"],
    ["a count as an array", { count: [1] }, "count", "[1]", "must be a number, not an array"],
    ["a count as an object", { count: {} }, "count", "{}", "must be a number, not an object"],
    ["a key as a flag", { key: true }, "key", "true", "must be a string, not a boolean"],
    ["a flag as a number", { reserve: 1 }, "reserve", "1", "must be a boolean, not a number"],
  ])("%s", (_, options, field, value, problem) => {
    expect(errorOf(() => validateOptionTypes(options))).toEqual(invalid(field, value, `${field} = ${value}: ${problem}`));
  });

  test("undefined options and an undefined config are as if left out; options it doesn't type are left to Convex", () => {
    expect(() => validateOptionTypes({ count: undefined, key: undefined, config: undefined })).not.toThrow();
    expect(() => validateOptionTypes({ other: 5 })).not.toThrow();
    expect(() => validateOptionTypes(undefined)).not.toThrow();
  });
});
