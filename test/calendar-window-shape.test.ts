// A fixed window's `calendar` (the form a calendar quota runs as) from untyped code: each of its fields checked and named, an InvalidRateLimit error where a TypeError was thrown.
import { describe, expect, test } from "vitest";
import { checkConfig, validateConfigShape, validateLimits } from "../src/shared/validation/validate-config.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { errorData } from "./error-data.js";

const window = (calendar: unknown) => ({ kind: "fixed window", rate: 10, period: 86_400_000, calendar }) as unknown as RateLimitConfig;
const invalid = (field: string, value: string, message: string) => ({ kind: "InvalidRateLimit", field, value, message });

describe("a fixed window's calendar that isn't one", () => {
  test.each([
    ["a number", 5, invalid("config.calendar", "5", "config.calendar = 5: must be an object, not a number")],
    ["null", null, invalid("config.calendar", "null", "config.calendar = null: must be an object, not null")],
    ["an array", ["day"], invalid("config.calendar", '["day"]', 'config.calendar = ["day"]: must be an object, not an array')],
    [
      "a timeZone missing",
      { period: "day", anchor: 0 },
      invalid("config.calendar.timeZone", "undefined", "config.calendar.timeZone = undefined: is missing from config.calendar"),
    ],
    [
      "a timeZone that is a number",
      { period: "day", timeZone: 5, anchor: 0 },
      invalid("config.calendar.timeZone", "5", "config.calendar.timeZone = 5: must be a string, not a number"),
    ],
    [
      "a period in ms",
      { period: 86_400_000, timeZone: "UTC", anchor: 0 },
      invalid("config.calendar.period", "86400000", 'config.calendar.period = 86400000: must be "day", "week" or "month"'),
    ],
    [
      "an anchor that is a string",
      { period: "day", timeZone: "UTC", anchor: "9" },
      invalid("config.calendar.anchor", '"9"', 'config.calendar.anchor = "9": must be a number, not a string'),
    ],
    [
      "a field it doesn't have, a near miss",
      { period: "day", timeZone: "UTC", anchor: 0, timezone: "UTC" },
      invalid("config.calendar.timezone", '"UTC"', 'config.calendar.timezone = "UTC": is not a field of config.calendar (its fields are period, timeZone, anchor); did you mean timeZone?'),
    ],
  ])("%s: named, with its value", (_why, calendar, data) => {
    expect(errorData(() => validateConfigShape(window(calendar)))).toStrictEqual(data);
    // The component's check and the RateLimiter's (which adds the limit's name) refuse it the same way.
    expect(errorData(() => checkConfig(window(calendar)))).toStrictEqual(data);
    expect(errorData(() => validateLimits({ daily: window(calendar) }))).toMatchObject({ field: data.field, value: data.value });
  });

  test("a whole calendar, and one with a field left undefined (Convex drops it), pass the shape check", () => {
    expect(() => validateConfigShape(window({ period: "week", timeZone: "Europe/Paris", anchor: 1 }))).not.toThrow();
    expect(() => validateConfigShape(window({ period: "week", timeZone: "Europe/Paris", anchor: 1, extra: undefined }))).not.toThrow();
  });
});
