// Configs and options checked by the client before Convex's validators see them, table-driven: a
// wrong kind, a missing kind, an unknown field or a field of the wrong type fails when the
// RateLimiter is constructed, and an option of the wrong type (a string count) when it is called,
// each with an InvalidRateLimit ConvexError naming the field, and a suggestion for a near miss.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, type RateLimitConfig } from "../src/client/index.js";
import { validateConfigShape } from "../src/shared/validation/validate-config.js";
import { components, convexErrorData, makeTest } from "./setup.js";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2025, 0, 1));
});
afterEach(() => {
  vi.useRealTimers();
});

const KINDS = `"token bucket", "fixed window", "sliding window", "calendar" and "concurrency"`;
const BUCKET_FIELDS = "rate, period, capacity, maxReserved, shards, applyUpdates, dryRun, metrics, lockout, networks, start";

/** Builds a RateLimiter with one limit, `sendMessage`, of `config` (from JavaScript: untyped). */
const construct = (config: unknown) => () => new RateLimiter(components.rateLimiter, { sendMessage: config as RateLimitConfig });

// [why, config, field, the message before " (limit "sendMessage")"]
const rows: [string, unknown, string, string][] = [
  [
    "a hyphen for the space: the right kind is suggested",
    { kind: "token-bucket", rate: 10, period: MINUTE },
    "config.kind",
    `config.kind = "token-bucket": is not a kind of limit (the kinds are ${KINDS}); did you mean "token bucket"?`,
  ],
  [
    "camelCase",
    { kind: "slidingWindow", rate: 10, period: MINUTE },
    "config.kind",
    `config.kind = "slidingWindow": is not a kind of limit (the kinds are ${KINDS}); did you mean "sliding window"?`,
  ],
  [
    "one word of a kind",
    { kind: "fixed", rate: 10, period: MINUTE },
    "config.kind",
    `config.kind = "fixed": is not a kind of limit (the kinds are ${KINDS}); did you mean "fixed window"?`,
  ],
  [
    "a typo",
    { kind: "token bukcet", rate: 10, period: MINUTE },
    "config.kind",
    `config.kind = "token bukcet": is not a kind of limit (the kinds are ${KINDS}); did you mean "token bucket"?`,
  ],
  [
    "another algorithm: nothing to suggest",
    { kind: "leaky bucket", rate: 10, period: MINUTE },
    "config.kind",
    `config.kind = "leaky bucket": is not a kind of limit (the kinds are ${KINDS})`,
  ],
  [
    "no kind",
    { rate: 10, period: MINUTE },
    "config.kind",
    `config.kind = undefined: is missing: a config's kind is "token bucket", "fixed window", "sliding window", "calendar" or "concurrency"`,
  ],
  [
    "another limiter's name for capacity",
    { kind: "token bucket", rate: 10, period: MINUTE, burst: 5 },
    "config.burst",
    `config.burst = 5: is not a field of a token bucket config (its fields are ${BUCKET_FIELDS}); did you mean capacity?`,
  ],
  [
    "a misspelled field",
    { kind: "token bucket", rate: 10, period: MINUTE, maxReserve: 5 },
    "config.maxReserve",
    `config.maxReserve = 5: is not a field of a token bucket config (its fields are ${BUCKET_FIELDS}); did you mean maxReserved?`,
  ],
  [
    "a field no kind has",
    { kind: "fixed window", rate: 10, period: MINUTE, jitter: true },
    "config.jitter",
    `config.jitter = true: is not a field of a fixed window config (its fields are ${BUCKET_FIELDS})`,
  ],
  [
    "a number as a string",
    { kind: "token bucket", rate: "10", period: MINUTE },
    "config.rate",
    `config.rate = "10": must be a number, not a string`,
  ],
  [
    "a near-miss mode",
    { kind: "token bucket", rate: 10, period: MINUTE, applyUpdates: "asynchronous" },
    "config.applyUpdates",
    `config.applyUpdates = "asynchronous": must be "transactionally" or "asynchronously"; did you mean "asynchronously"?`,
  ],
  [
    "a flag as a string",
    { kind: "fixed window", rate: 10, period: MINUTE, dryRun: "yes" },
    "config.dryRun",
    `config.dryRun = "yes": must be true or false, not a string`,
  ],
  [
    "exact as a string",
    { kind: "sliding window", rate: 10, period: MINUTE, exact: "yes" },
    "config.exact",
    `config.exact = "yes": must be true or false, not a string`,
  ],
  [
    "exact on a token bucket",
    { kind: "token bucket", rate: 10, period: MINUTE, exact: true },
    "config.exact",
    `config.exact = true: is not a field of a token bucket config (its fields are ${BUCKET_FIELDS})`,
  ],
  [
    "a misspelled exact",
    { kind: "sliding window", rate: 10, period: MINUTE, exakt: true },
    "config.exakt",
    `config.exakt = true: is not a field of a sliding window config (its fields are rate, period, capacity, maxReserved, shards, applyUpdates, dryRun, metrics, lockout, networks, exact, start); did you mean exact?`,
  ],
  [
    "a token bucket's start",
    { kind: "token bucket", rate: 10, period: MINUTE, start: 0 },
    "config.start",
    `config.start = 0: a token bucket has no start (its tokens refill continuously); leave it out`,
  ],
  ["not an object", "10 per minute", "config", `config = "10 per minute": must be an object such as { kind: "token bucket", rate: 10, period: MINUTE }`],
  // The numbers' bounds were checked at construction before; they still are, with the name.
  ["a bound, as before", { kind: "token bucket", rate: 0, period: MINUTE }, "config.rate", `config.rate = 0: must be a finite number > 0`],
];

describe("the RateLimiter constructor checks each config's shape, naming the field", () => {
  test.each(rows)("%s", async (_, config, field, message) => {
    const data = await convexErrorData(construct(config));
    expect(data).toEqual({ kind: "InvalidRateLimit", field, value: expect.any(String), message: `${message} (limit "sendMessage")` });
  });

  test("valid configs pass, with undefined fields as if left out", () => {
    const configs: RateLimitConfig[] = [
      { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3, maxReserved: 5, shards: 2, applyUpdates: "asynchronously" },
      { kind: "token bucket", rate: 10, period: MINUTE, start: null },
      { kind: "fixed window", rate: 10, period: MINUTE, start: 0, dryRun: true, metrics: false },
      { kind: "sliding window", rate: 10, period: MINUTE, capacity: undefined, start: 5 },
    ];
    for (const config of configs) expect(() => validateConfigShape(config)).not.toThrow();
  });
});

describe("a call checks its options' types before Convex's validator does", () => {
  const limiter = new RateLimiter(components.rateLimiter, {
    sendMessage: { kind: "token bucket", rate: 10, period: MINUTE },
  });
  // From JavaScript, or through a cast: what the types would have caught.
  const loose = limiter as unknown as {
    limit: (ctx: unknown, name: string, options: unknown) => Promise<unknown>;
    limitAll: (ctx: unknown, requests: unknown[]) => Promise<unknown>;
    credit: (ctx: unknown, name: string, options: unknown) => Promise<unknown>;
  };

  test.each([
    ["a string count", { count: "2" }, { field: "count", value: `"2"`, message: `count = "2": must be a number, not a string` }],
    ["a numeric key", { key: 5 }, { field: "key", value: "5", message: "key = 5: must be a string, not a number" }],
    ["a string flag", { throws: "true" }, { field: "throws", value: `"true"`, message: `throws = "true": must be a boolean, not a string` }],
  ])("limit: %s", async (_, options, expected) => {
    const t = makeTest();
    const data = await convexErrorData(t.run((ctx) => loose.limit(ctx, "sendMessage", options)));
    expect(data).toEqual({ kind: "InvalidRateLimit", ...expected });
  });

  test("limitAll and credit: a string count", async () => {
    const t = makeTest();
    const all = await convexErrorData(t.run((ctx) => loose.limitAll(ctx, [{ name: "sendMessage", count: "2" }])));
    expect(all).toMatchObject({ kind: "InvalidRateLimit", field: "count" });
    const credited = await convexErrorData(t.run((ctx) => loose.credit(ctx, "sendMessage", { count: "2" })));
    expect(credited).toMatchObject({ kind: "InvalidRateLimit", field: "count" });
  });

  test("an inline config's shape too", async () => {
    const t = makeTest();
    const data = await convexErrorData(
      t.run((ctx) => loose.limit(ctx, "adhoc", { config: { kind: "Token Bucket", rate: 1, period: MINUTE } })),
    );
    expect(data).toMatchObject({ field: "config.kind", message: expect.stringContaining(`did you mean "token bucket"?`) });
  });
});
