// calculateRateLimit with { reserve: true } models what the server grants: tables with explicit
// instants, and a fast-check property that it agrees with the server's own row decision
// (decideRow, as lib.rateLimit runs it unsharded) on every reservation the server accepts.
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { calculateRateLimit, decideRateLimit, HOUR, MINUTE, SECOND } from "../src/client/index.js";
import { decideRow, paramsOf, phaseOf } from "../src/shared/kinds/algebra.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const TB = "token bucket" as const;
const FW = "fixed window" as const;

describe("calculateRateLimit(..., { reserve: true })", () => {
  const llm: RateLimitConfig = { kind: TB, rate: 10, period: MINUTE, maxReserved: 20 };

  test("a count above capacity within maxReserved: a negative value and when the debt is repaid", () => {
    // 10 + 15 = 25 taken from a full 10: 15 owed, repaid at 10 a minute in 90 s.
    expect(calculateRateLimit(null, llm, 0, 25, { reserve: true })).toEqual({
      value: -15,
      ts: 0,
      retryAfter: 90 * SECOND,
      windowStart: undefined,
    });
    // The server grants it, and says the same.
    expect(decideRateLimit(null, llm, { now: 0, count: 25, reserve: true })).toEqual({
      ok: true,
      retryAfter: 90 * SECOND,
      value: -15,
      ts: 0,
    });
  });

  test("without reserve the same count can never be there: an InvalidRateLimit naming count", () => {
    expect(() => calculateRateLimit(null, llm, 0, 25)).toThrow(/count = 25/);
  });

  test("beyond capacity + maxReserved: refused by validation either way", () => {
    expect(() => calculateRateLimit(null, llm, 0, 31, { reserve: true })).toThrow(/count = 31/);
  });

  test("within capacity, reserve and not agree on retryAfter", () => {
    const state = { value: 1, ts: 0 };
    const fw: RateLimitConfig = { kind: FW, rate: 4, period: HOUR, start: 0, maxReserved: 8 };
    for (const config of [llm, fw]) {
      const plain = calculateRateLimit(state, config, 1000, 3);
      const reserved = calculateRateLimit(state, config, 1000, 3, { reserve: true });
      expect(reserved).toEqual(plain);
    }
  });
});

const configArb = fc
  .record({
    kind: fc.constantFrom(TB, FW),
    rate: fc.integer({ min: 1, max: 50 }),
    period: fc.constantFrom(SECOND, MINUTE, HOUR),
    capacity: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
    maxReserved: fc.integer({ min: 0, max: 80 }),
    start: fc.integer({ min: 0, max: HOUR }),
  })
  .map(({ kind, start, capacity, ...rest }): RateLimitConfig =>
    kind === TB
      ? { kind, ...rest, ...(capacity === undefined ? {} : { capacity }) }
      : { kind, ...rest, start, ...(capacity === undefined ? {} : { capacity }) },
  );

describe("agreement with the server", () => {
  test.prop([
    configArb,
    fc.double({ min: -80, max: 60, noNaN: true }),
    fc.integer({ min: 0, max: 2 * HOUR }),
    fc.integer({ min: 0, max: 3 * HOUR }),
    fc.double({ min: 0.01, max: 1, noNaN: true }),
  ])(
    "on every reservation the server grants, calculateRateLimit gives its value, ts and retryAfter",
    (config, stored, ts, later, share) => {
      const capacity = config.capacity ?? config.rate;
      const maxReserved = config.maxReserved ?? 0;
      // A config that admits nothing, even reserving, takes no count at all (validation says so).
      fc.pre(capacity + maxReserved > 0);
      const count = share * (capacity + maxReserved);
      const state = { value: Math.min(stored, capacity), ts };
      const now = ts + later;
      const p = paramsOf(config, config.kind === FW ? phaseOf(config.start ?? 0, config.period) : 0);
      const server = decideRow(state, p, now, count, true);
      const modelled = calculateRateLimit(state, config, now, count, { reserve: true });
      if (server.ok) {
        expect(modelled.value).toBe(server.next?.value ?? modelled.value);
        if (server.next) expect(modelled.ts).toBe(server.next.ts);
        expect(modelled.retryAfter).toBe(server.retryAfter);
        expect(modelled.value).toBeGreaterThanOrEqual(-maxReserved);
      } else {
        // Refused: the modelled row would be deeper in debt than the server allows.
        expect(modelled.value).toBeLessThan(-maxReserved);
      }
    },
  );
});
