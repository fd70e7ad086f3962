// The words of every input error in src/shared/validation/validate.ts and of the kind errors in
// validate-config.ts, table-driven on the pure checks: the field, the value as shown and the whole
// message, which is what a developer reads after production redaction, and the limit's name where
// the caller gives it. (validation.test.ts checks each error's field through every entry point.)
import { ConvexError } from "convex/values";
import { describe, expect, test } from "vitest";
import {
  MAX_NAME_LENGTH,
  namingLimit,
  validateConcurrencyConfig,
  validateConfig,
  validateCount,
  validateCountValue,
  validateExtendBy,
  validateNameAndKey,
  validateSampleShards,
} from "../src/shared/validation/validate.js";
import { LIMIT_KINDS, validateConfigShape, validateLimits, validateOptionTypes } from "../src/shared/validation/validate-config.js";
import type { ConcurrencyConfig } from "../src/shared/shapes/concurrency-validators.js";
import type { InvalidRateLimitError, RateLimitConfig } from "../src/shared/shapes/validators.js";

const TB = "token bucket" as const;
const SW = "sliding window" as const;

/** The InvalidRateLimit data `check` throws (fails the test if it doesn't throw one). */
function errorOf(check: () => void): InvalidRateLimitError {
  try {
    check();
  } catch (e) {
    return (e as ConvexError<InvalidRateLimitError>).data;
  }
  throw new Error("no error");
}

const bucket = (extra: Partial<RateLimitConfig> = {}) => ({ kind: TB, rate: 10, period: 1000, ...extra }) as RateLimitConfig;

describe("config errors", () => {
  test.each<[string, RateLimitConfig, string]>([
    ["a negative rate", bucket({ rate: -1 }), "config.rate = -1: must be a finite number > 0"],
    ["a sub-ms period", bucket({ period: 0.5 }), "config.period = 0.5: must be a finite number of ms ≥ 1"],
    ["a negative capacity", bucket({ capacity: -1 }), "config.capacity = -1: must be a finite number ≥ 0"],
    ["a negative maxReserved", bucket({ maxReserved: -1 }), "config.maxReserved = -1: must be a finite number ≥ 0"],
    ["a NaN start", { kind: "fixed window", rate: 1, period: 1000, start: NaN }, "config.start = NaN: must be a finite number of ms"],
    [
      "a sliding window's capacity",
      { kind: SW, exact: false, rate: 10, period: 1000, capacity: 5 },
      "config.capacity = 5: a sliding window holds at most its rate (10) in any window; leave capacity out",
    ],
    [
      "a sliding window's maxReserved",
      { kind: SW, exact: false, rate: 10, period: 1000, maxReserved: 5 },
      "config.maxReserved = 5: a sliding window can't reserve ahead (reserved work would run past its window's limit); use a token bucket",
    ],
    ["a fraction of a shard", bucket({ shards: 1.5 }), "config.shards = 1.5: must be a whole number from 1 to 1024"],
    ["rate 2.5 over 3 shards", bucket({ rate: 2.5, shards: 3 }), "config.shards = 3: rate 2.5 can't give each of 3 shards a whole token; use at most 2 shards"],
    ["rate 1.5 over 2 shards: one shard", bucket({ rate: 1.5, shards: 2 }), "config.shards = 2: rate 1.5 can't give each of 2 shards a whole token; use 1 shard"],
    ["capacity 3 over 5 shards", bucket({ capacity: 3, shards: 5 }), "config.shards = 5: capacity 3 can't give each of 5 shards a whole token; use at most 3 shards"],
    ["capacity 0.5 over 2 shards", bucket({ capacity: 0.5, shards: 2 }), "config.shards = 2: capacity 0.5 can't give each of 2 shards a whole token; use 1 shard"],
    ["exact as a string", { kind: SW, rate: 10, period: 1000, exact: "yes" as never }, 'config.exact = "yes": must be true or false'],
    [
      "an exact window's start",
      { kind: SW, rate: 10, period: 1000, start: 5 },
      "config.start = 5: an exact sliding window has no windows to align; leave start out, or set exact: false",
    ],
  ])("%s", (_, config, message) => {
    const data = errorOf(() => validateConfig(config));
    expect(data.kind).toBe("InvalidRateLimit");
    expect(data.message).toBe(message);
    expect(`${data.field} = ${data.value}: `).toBe(message.slice(0, message.indexOf(": ") + 2));
  });

  test("a value shown in a message is cut to 80 characters, ending in ...", () => {
    const long = "x".repeat(81);
    const data = errorOf(() => validateNameAndKey(long.repeat(13), undefined));
    expect(data.value).toBe(`"${"x".repeat(76)}...`);
    expect(data.value.length).toBe(80);
    // 80 characters exactly are shown whole (a string of 78, quoted); 81 are cut.
    const exactly = (text: string) => errorOf(() => validateConfig({ kind: SW, rate: 1, period: 1000, exact: text as never })).value;
    expect(exactly("y".repeat(78))).toBe(`"${"y".repeat(78)}"`);
    expect(exactly("y".repeat(79))).toBe(`"${"y".repeat(76)}...`);
    expect(errorOf(() => validateSampleShards(0.5)).value).toBe("0.5");
  });
});

describe("request errors", () => {
  test.each<[string, () => void, string]>([
    ["a negative count", () => validateCount(-1, bucket(), false), "count = -1: must be a finite number ≥ 0"],
    [
      "reserve on a sliding window",
      () => validateCount(1, { kind: SW, rate: 10, period: 1000 }, true),
      "reserve = true: a sliding window can't reserve ahead; use a token bucket for reservations",
    ],
    ["a count over the capacity", () => validateCount(11, bucket(), false), "count = 11: can never succeed: it exceeds the capacity (10)"],
    [
      "a reserved count over capacity and maxReserved",
      () => validateCount(16, bucket({ maxReserved: 5 }), true),
      "count = 16: can never succeed: it exceeds the capacity (10) plus what may be reserved (5 in all)",
    ],
    [
      "a count over what the weakest two shards hold",
      () => validateCount(3, bucket({ shards: 8 }), false),
      "count = 3: can never succeed: it exceeds what two shards hold together (2)",
    ],
    [
      "a reserved count over two shards and maxReserved",
      () => validateCount(9, bucket({ shards: 8, maxReserved: 8 }), true),
      "count = 9: can never succeed: it exceeds what two shards hold together (2) plus what may be reserved (8 in all)",
    ],
    ["an empty name", () => validateNameAndKey("", undefined), 'name = "": must not be empty'],
    ["a name too long", () => validateNameAndKey("n".repeat(MAX_NAME_LENGTH + 1), undefined), `name = "${"n".repeat(76)}...: is 1025 characters; at most 1024 are allowed`],
    ["a key too long", () => validateNameAndKey("n", "k".repeat(MAX_NAME_LENGTH + 1)), `key = "${"k".repeat(76)}...: is 1025 characters; at most 1024 are allowed`],
    ["a fraction of a shard to sample", () => validateSampleShards(0.5), "sampleShards = 0.5: must be a whole number ≥ 1"],
  ])("%s", (_, check, message) => {
    expect(errorOf(check).message).toBe(message);
  });

  test("a reserved count within one shard pair and maxReserved is accepted, a plain one at the pair's total too", () => {
    expect(() => validateCount(4, bucket({ shards: 8, maxReserved: 8 }), true)).not.toThrow();
    expect(() => validateCount(2, bucket({ shards: 8 }), false)).not.toThrow();
    // count 0 never reserves: the pair's reservations don't enter a peek.
    expect(() => validateCount(0, bucket({ shards: 8, capacity: 0, maxReserved: 8 }), true)).not.toThrow();
  });
});

describe("concurrency errors", () => {
  const concurrency = (extra: Partial<ConcurrencyConfig>) => ({ kind: "concurrency", capacity: 2, lease: 1000, ...extra }) as ConcurrencyConfig;
  test.each<[string, () => void, string]>([
    ["no slots", () => validateConcurrencyConfig(concurrency({ capacity: 0 })), "config.capacity = 0: must be a whole number of leases from 1 to 1000"],
    ["a fraction of a slot", () => validateConcurrencyConfig(concurrency({ capacity: 1.5 })), "config.capacity = 1.5: must be a whole number of leases from 1 to 1000"],
    ["more slots than allowed", () => validateConcurrencyConfig(concurrency({ capacity: 1001 })), "config.capacity = 1001: must be a whole number of leases from 1 to 1000"],
    ["a zero lease", () => validateConcurrencyConfig(concurrency({ lease: 0 })), "config.lease = 0: must be a finite number of ms ≥ 1"],
    ["a zero extension", () => validateExtendBy(0), "by = 0: must be a finite number of ms ≥ 1"],
  ])("%s", (_, check, message) => {
    expect(errorOf(check).message).toBe(message);
  });

  test("the edges are accepted: 1 and 1000 slots, a 1 ms lease, no extension given, 1 ms of it", () => {
    expect(() => validateConcurrencyConfig(concurrency({ capacity: 1, lease: 1 }))).not.toThrow();
    expect(() => validateConcurrencyConfig(concurrency({ capacity: 1000 }))).not.toThrow();
    expect(() => validateExtendBy(undefined)).not.toThrow();
    expect(() => validateExtendBy(1)).not.toThrow();
  });
});

describe("kind errors list every kind, concurrency too", () => {
  // Written out here on purpose: LIMIT_KINDS comes from the validators, and this is the check on it.
  const EVERY = `"token bucket", "fixed window", "sliding window", "calendar" and "concurrency"`;

  test("LIMIT_KINDS is every kind the validators accept, rate limits' first", () => {
    expect(LIMIT_KINDS).toEqual(["token bucket", "fixed window", "sliding window", "calendar", "concurrency"]);
  });

  test.each<[string, () => void, string]>([
    [
      "an unknown kind in the constructor: all four listed",
      () => validateLimits({ llm: { kind: "leaky bucket", rate: 1, period: 1000 } }),
      `config.kind = "leaky bucket": is not a kind of limit (the kinds are ${EVERY}) (limit "llm")`,
    ],
    [
      "a misspelled concurrency: it is suggested",
      () => validateLimits({ llm: { kind: "concurency", capacity: 2, lease: 1000 } }),
      `config.kind = "concurency": is not a kind of limit (the kinds are ${EVERY}); did you mean "concurrency"? (limit "llm")`,
    ],
    [
      "concurrency in another case",
      () => validateLimits({ llm: { kind: "Concurrency", capacity: 2, lease: 1000 } }),
      `config.kind = "Concurrency": is not a kind of limit (the kinds are ${EVERY}); did you mean "concurrency"? (limit "llm")`,
    ],
    [
      "no kind",
      () => validateLimits({ llm: { capacity: 2, lease: 1000 } }),
      `config.kind = undefined: is missing: a config's kind is "token bucket", "fixed window", "sliding window", "calendar" or "concurrency" (limit "llm")`,
    ],
    [
      "a concurrency config inline, where a rate limit's is needed",
      () => validateOptionTypes({ config: { kind: "concurrency", capacity: 2, lease: 1000 } }),
      `config.kind = "concurrency": is a concurrency limit's kind, but a rate limit's config is needed here (its kind "token bucket", "fixed window" or "sliding window"); a concurrency limit is named in the RateLimiter and taken with acquire`,
    ],
    [
      "a concurrency config sent to the component's rate functions",
      () => validateConfigShape({ kind: "concurrency", capacity: 2, lease: 1000 }),
      `config.kind = "concurrency": is a concurrency limit's kind, but a rate limit's config is needed here (its kind "token bucket", "fixed window" or "sliding window"); a concurrency limit is named in the RateLimiter and taken with acquire`,
    ],
  ])("%s", (_, check, message) => {
    const data = errorOf(check);
    expect(data).toEqual({ kind: "InvalidRateLimit", field: "config.kind", value: expect.any(String), message });
  });

  test("a concurrency config passes the constructor", () => {
    expect(() => validateLimits({ llm: { kind: "concurrency", capacity: 2, lease: 1000 } })).not.toThrow();
  });
});

describe("a request's count error names the limit, as config errors do", () => {
  test("validateCountValue given the name: the same field and value, the message ending in the limit", () => {
    expect(errorOf(() => validateCountValue(-1, "sendMessage"))).toEqual({
      kind: "InvalidRateLimit",
      field: "count",
      value: "-1",
      message: `count = -1: must be a finite number ≥ 0 (limit "sendMessage")`,
    });
    expect(errorOf(() => validateCountValue(NaN, "llm tokens")).message).toBe(`count = NaN: must be a finite number ≥ 0 (limit "llm tokens")`);
  });

  test("without a name it says what it said (the pure helpers, which know no name)", () => {
    expect(errorOf(() => validateCountValue(-1)).message).toBe("count = -1: must be a finite number ≥ 0");
  });

  test("valid counts pass: 0 (a peek), fractions, the largest finite", () => {
    for (const count of [0, 0.5, 1, Number.MAX_VALUE]) expect(() => validateCountValue(count, "sendMessage")).not.toThrow();
  });

  test("namingLimit names a message once, and leaves other errors alone", () => {
    const named = namingLimit(new ConvexError({ kind: "InvalidRateLimit", field: "count", value: "-1", message: "count = -1: x" }), "a");
    expect(namingLimit(named, "a")).toBe(named);
    expect((named as ConvexError<InvalidRateLimitError>).data.message).toBe(`count = -1: x (limit "a")`);
    const plain = new Error("boom");
    expect(namingLimit(plain, "a")).toBe(plain);
    const limited = new ConvexError({ kind: "RateLimited", name: "a", retryAfter: 5 });
    expect(namingLimit(limited, "a")).toBe(limited);
  });
});
