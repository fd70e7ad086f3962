// The public conveniences (calculateRateLimit, decideRateLimit) check a config's shape as the
// component does: a field its kind doesn't have, or a field of the wrong type, is an
// InvalidRateLimit error naming the field and the value, never a decision on a config the server
// would refuse.
import { ConvexError } from "convex/values";
import { describe, expect, test } from "vitest";
import { calculateRateLimit, decideRateLimit } from "../src/client/index.js";
import type { InvalidRateLimitError, RateLimitConfig } from "../src/shared/shapes/validators.js";

/** The InvalidRateLimit data `call` throws (fails the test if it doesn't throw one). */
function errorOf(call: () => unknown): InvalidRateLimitError {
  try {
    call();
  } catch (e) {
    expect(e).toBeInstanceOf(ConvexError);
    return (e as ConvexError<InvalidRateLimitError>).data;
  }
  throw new Error("no error");
}

const calendar = { period: "day", timeZone: "UTC", anchor: 0 };

describe("a config the component would refuse", () => {
  test.each<[string, object, string, string]>([
    // Before, a token bucket with a calendar reserved into debt as a plain bucket (value -2).
    // The value as the error shows it: an object as JSON, a string quoted.
    ["a token bucket with a calendar", { kind: "token bucket", rate: 3, period: 1000, calendar }, "config.calendar", '{"period":"day","timeZone":"UTC","anchor":0}'],
    ["a sliding window with a calendar", { kind: "sliding window", rate: 3, period: 1000, calendar }, "config.calendar", '{"period":"day","timeZone":"UTC","anchor":0}'],
    ["a token bucket with a start", { kind: "token bucket", rate: 3, period: 1000, start: 5 }, "config.start", "5"],
    ["a field no kind has", { kind: "fixed window", rate: 3, period: 1000, burst: 4 }, "config.burst", "4"],
    ["a rate of the wrong type", { kind: "fixed window", rate: "3", period: 1000 }, "config.rate", '"3"'],
  ])("%s", (_, config, field, value) => {
    for (const call of [
      () => decideRateLimit(null, config as RateLimitConfig, { now: 0, count: 5, reserve: true }),
      () => calculateRateLimit(null, config as RateLimitConfig, 0, 5, { reserve: true }),
    ]) {
      const data = errorOf(call);
      expect(data.kind).toBe("InvalidRateLimit");
      expect(data.field).toBe(field);
      expect(data.value).toBe(value);
    }
  });

  test("a well-formed config with every field of its kind is decided", () => {
    const config: RateLimitConfig = { kind: "token bucket", rate: 3, period: 1000, capacity: 4, maxReserved: 2, shards: 1, start: null };
    expect(decideRateLimit(null, config, { now: 0, count: 5, reserve: true })).toEqual({ ok: true, retryAfter: 334, value: -1, ts: 0 });
  });
});
