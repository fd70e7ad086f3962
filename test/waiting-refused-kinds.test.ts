// Limits that can't wait until allowed, through register() and the client: a calendar quota (its period's allowance is never borrowed) and a limit with a lockout (the last token's take locks the key).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, MINUTE, RateLimiter } from "../src/client/index.js";
import { schema, sendRef } from "./app/waiting.js";
import { components, convexErrorData, makeTest } from "./setup.js";

const T0 = Date.UTC(2030, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

const limiter = new RateLimiter(components.rateLimiter, {
  daily: { kind: "calendar", rate: 3, period: "day" },
  locked: { kind: "token bucket", rate: 2, period: MINUTE, lockout: HOUR },
});


describe("limits that can't wait", () => {
  for (const [name, field, value, says] of [
    ["daily", "config.kind", "calendar", "allowance can't be borrowed"],
    ["locked", "config.lockout", HOUR, "locks the key"],
  ] as const) {
    test(`${name}: runWhenAllowed and check({ wait: true }) are refused naming ${field}, writing nothing`, async () => {
      const t = makeTest(schema);
      for (const data of [
        await t.run(async (ctx) => convexErrorData(limiter.runWhenAllowed(ctx, name, {}, sendRef, { to: "a" }))),
        await t.run(async (ctx) => convexErrorData(limiter.check(ctx, name, { wait: true } as never))),
      ]) {
        expect(data).toMatchObject({ kind: "InvalidRateLimit", field, value: JSON.stringify(value) });
        expect(String((data as { message: string }).message)).toContain(says);
      }
      // Nothing was taken: the limit still allows its whole allowance.
      const value0 = await t.run((ctx) => limiter.getValue(ctx, name));
      expect(value0.value).toBe(name === "daily" ? 3 : 2);
    });
  }
});
