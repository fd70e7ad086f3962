// checkConfig passes a config equal field by field to the last one that passed without checking
// it again (a hot limit's config, parsed anew on every call). Every config that differs from it
// in any way must still be checked: each bad config below, checked right after the good one it
// differs from, throws exactly the error the checks throw for it alone.
import { describe, expect, test } from "vitest";
import { checkConfig, validateConfigShape } from "../src/shared/validate-config.js";
import { validateConfig } from "../src/shared/validate.js";
import type { RateLimitConfig } from "../src/shared/validators.js";
import { errorData } from "./error-data.js";

const good = { kind: "token bucket", rate: 60, period: 60_000 } as const;

/** The error data of checking `config` from scratch, by the checks checkConfig runs. */
function fromScratch(config: unknown): unknown {
  return errorData(() => {
    validateConfigShape(config);
    validateConfig(config);
  });
}

/** A config with `own` as its own fields and `inherited` as its prototype's (not a plain object). */
function inheriting(own: object, inherited: object): RateLimitConfig {
  return Object.assign(Object.create(inherited) as object, own) as RateLimitConfig;
}

// [why, the good config checked first, the bad config checked right after it]
const rows: [string, unknown, unknown][] = [
  ["a value changed", good, { ...good, rate: -1 }],
  ["a value of another type", good, { ...good, rate: "60" }],
  ["a field more", good, { ...good, capacity: -1 }],
  ["a field fewer", good, { kind: good.kind, rate: good.rate }],
  ["a field renamed", good, { kind: good.kind, rate: good.rate, window: good.period }],
  ["the kind changed", good, { ...good, kind: "fixed window", start: "x" }],
  ["an inherited field the checks read", good, inheriting(good, { capacity: -1 })],
  ["a good config that inherits what the bad one lacks", inheriting({ kind: good.kind, period: good.period }, { rate: 60 }), { kind: good.kind, period: good.period }],
  ["an array", good, Object.assign([], good)],
  ["null", good, null],
];

describe("a config checked right after a good one is checked in full", () => {
  test.each(rows)("%s", (_why, first, then) => {
    checkConfig(first as RateLimitConfig);
    const expected = fromScratch(then);
    checkConfig(good);
    checkConfig(first as RateLimitConfig);
    expect(errorData(() => checkConfig(then as RateLimitConfig))).toEqual(expected);
    // Its failing leaves the good one passing, and checked again after it, it fails again.
    checkConfig(first as RateLimitConfig);
    expect(errorData(() => checkConfig(then as RateLimitConfig))).toEqual(expected);
  });

  test("the same config, a fresh object each time, passes every time", () => {
    for (let i = 0; i < 3; i++) checkConfig({ ...good });
    checkConfig({ ...good, capacity: undefined });
    checkConfig({ ...good });
  });
});
