// Property (fast-check): configs, options and overrides from untyped code (any field set to any value, or left out, at any depth) are accepted or refused with an InvalidRateLimit ConvexError naming a field, never a TypeError or another crash; DEEP=1 runs many more; replay with FC_SEED (and FC_PATH).
import { fc, test } from "@fast-check/vitest";
import { ConvexError } from "convex/values";
import { describe, expect } from "vitest";
import { runs, TIMEOUT } from "../tools/fast-check.js";
import { validateLimits, validateOptionTypes } from "../src/shared/validation/validate-config.js";
import { validateOverride, windowOverride } from "../src/shared/admin/override-writes.js";
import type { OverrideEntry, OverrideTarget } from "../src/shared/shapes/override-validators.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

/** A valid config of every kind and form, to spoil one field at a time. */
const VALID: readonly Record<string, unknown>[] = [
  { kind: "token bucket", rate: 10, period: 1000, capacity: 20, maxReserved: 5, shards: 2 },
  { kind: "fixed window", rate: 10, period: 1000, start: 0, capacity: 12 },
  { kind: "fixed window", rate: 10, period: 86_400_000, calendar: { period: "day", timeZone: "UTC", anchor: 0 } },
  { kind: "sliding window", rate: 10, period: 1000 },
  { kind: "sliding window", rate: 10, period: 1000, exact: false, shards: 2 },
  { kind: "calendar", rate: 100, period: "month", timeZone: "Europe/Paris", anchor: 1 },
  { kind: "concurrency", capacity: 2, lease: 1000 },
  { kind: "token bucket", rate: 1, period: 1000, lockout: 5000, metrics: true, dryRun: false, applyUpdates: "transactionally" },
];

/** Field names: every kind's, near misses, and other names. */
const FIELD = fc.constantFrom(
  ...["kind", "rate", "period", "capacity", "maxReserved", "shards", "start", "exact", "calendar", "timeZone", "anchor"],
  ...["lease", "lockout", "metrics", "dryRun", "applyUpdates", "networks", "limit", "timezone", "burst", "", "constructor", "__proto__"],
);

/** Any value untyped code may send, objects and arrays included (nested a little). */
const JUNK: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(undefined, null, true, false, 0, -1, 0.5, NaN, Infinity, -Infinity, 1e300, "", "day", "UTC", "token bucket", "calendar", "concurrency", "asynchronously"),
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.oneof(FIELD, fc.string()), tie("value"), { maxKeys: 4 }),
    fc.record({ period: tie("value"), timeZone: tie("value"), anchor: tie("value") }, { requiredKeys: [] }),
  ),
})).value;

/** A valid config with 1 to 3 fields set to junk or deleted, or, rarely, junk in its place. */
const CONFIG: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 9, arbitrary: fc.tuple(fc.constantFrom(...VALID), fc.array(fc.tuple(FIELD, fc.option(JUNK, { nil: undefined }), fc.boolean()), { minLength: 1, maxLength: 3 })).map(([base, edits]) => {
    const config: Record<string, unknown> = structuredClone(base);
    for (const [field, value, remove] of edits) {
      if (remove) delete config[field];
      else Object.defineProperty(config, field, { value, enumerable: true, writable: true, configurable: true });
    }
    return config;
  }) },
  { weight: 1, arbitrary: JUNK },
);

/** Calls `check`; passes when it returns or throws an InvalidRateLimit ConvexError naming a field in its message. */
function refusedCleanly(check: () => void): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof ConvexError)) throw error;
    const data = error.data as { kind?: unknown; field?: unknown; message?: unknown };
    expect(data.kind).toBe("InvalidRateLimit");
    expect(typeof data.field).toBe("string");
    expect(typeof data.message === "string" && data.message.includes(String(data.field))).toBe(true);
  }
}

describe("untyped configs", () => {
  test.prop([CONFIG], runs(2000, 50_000))(
    "the RateLimiter's check of its limits accepts or names the field",
    (config) => refusedCleanly(() => validateLimits({ limit: config })),
    TIMEOUT,
  );

  test.prop([CONFIG, fc.dictionary(fc.constantFrom("count", "key", "reserve", "throws", "tier", "ip", "maxWait", "wait", "details"), JUNK, { maxKeys: 3 })], runs(1000, 20_000))(
    "a call's options and inline config: accepted or named",
    (config, options) => refusedCleanly(() => validateOptionTypes({ ...options, config })),
    TIMEOUT,
  );
});

describe("untyped overrides (setOverride's checks, as the client runs them)", () => {
  const named: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000, networks: true };
  const TARGET = fc.oneof(
    fc.record({ key: JUNK }),
    fc.record({ tier: JUNK }),
    fc.record({ network: fc.oneof(JUNK, fc.constantFrom("10.0.0.0/8", "2001:db8::/32", "1.2.3.4", "::1/200", "10.0.0.0/33")) }),
    JUNK,
  );
  const OVERRIDE = fc.oneof(
    fc.record({ config: CONFIG }),
    fc.record({ blockedUntil: JUNK }),
    fc.record({ allow: JUNK }),
    fc.dictionary(fc.constantFrom("config", "blockedUntil", "allow", "block"), JUNK, { maxKeys: 3 }),
    JUNK,
  );

  test.prop([TARGET, OVERRIDE, fc.option(JUNK, { nil: undefined })], runs(1000, 20_000))(
    "a target, an override and a note: accepted or named",
    (target, override, note) =>
      refusedCleanly(() => {
        // The client's order: the options' types (the note's), then the override.
        validateOptionTypes({ note });
        validateOverride("limit", target as OverrideTarget, windowOverride(override as OverrideEntry), named, note as string | undefined);
      }),
    TIMEOUT,
  );
});
