// Compile-time guarantees of calendar quotas, checked by tsc under `vitest --typecheck`: the config's pinned names and values (period "day" | "week" | "month", timeZone, anchor), what it refuses (capacity, maxReserved, start, a period in ms), resetsAt on a calendar quota's results only (others keep upstream's shapes), a calendar config as a key override's, and as an inline config.
import type { GenericDataModel, GenericMutationCtx, GenericQueryCtx } from "convex/server";
import { describe, expectTypeOf, test } from "vitest";
import {
  MINUTE,
  RateLimiter,
  type CalendarConfig,
  type CalendarOverrideConfig,
  type GetValueReturns,
  type GetValueReturnsWithDetails,
  type Override,
  type RateLimitReturns,
  type RateLimitReturnsWithDetails,
} from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";

declare const queryCtx: GenericQueryCtx<GenericDataModel>;
declare const mutationCtx: GenericMutationCtx<GenericDataModel>;
declare const component: ComponentApi;

const rateLimiter = new RateLimiter(component, {
  monthly: { kind: "calendar", rate: 1000, period: "month", anchor: 17, timeZone: "Europe/Paris" },
  daily: { kind: "calendar", rate: 10, period: "day" },
  perMinute: { kind: "token bucket", rate: 10, period: MINUTE },
});

describe("a calendar config", () => {
  test("takes the pinned names", () => {
    expectTypeOf<CalendarConfig["kind"]>().toEqualTypeOf<"calendar">();
    expectTypeOf<CalendarConfig["period"]>().toEqualTypeOf<"day" | "week" | "month">();
    expectTypeOf<CalendarConfig["timeZone"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<CalendarConfig["anchor"]>().toEqualTypeOf<number | undefined>();
  });

  test("refuses a period it doesn't have, a period of ms, capacity, maxReserved and start", () => {
    // @ts-expect-error: no yearly period
    new RateLimiter(component, { q: { kind: "calendar", rate: 1, period: "year" } });
    // @ts-expect-error: a calendar period is a name, not ms
    new RateLimiter(component, { q: { kind: "calendar", rate: 1, period: 86_400_000 } });
    // @ts-expect-error: no rollover, so no capacity
    new RateLimiter(component, { q: { kind: "calendar", rate: 1, period: "day", capacity: 2 } });
    // @ts-expect-error: no reservations
    new RateLimiter(component, { q: { kind: "calendar", rate: 1, period: "day", maxReserved: 2 } });
    // @ts-expect-error: the calendar places the periods
    new RateLimiter(component, { q: { kind: "calendar", rate: 1, period: "day", start: 0 } });
  });
});

describe("resetsAt: on a calendar quota's results only", () => {
  test("limit, check and getValue of a calendar quota add resetsAt", () => {
    expectTypeOf(rateLimiter.limit(mutationCtx, "monthly", { key: "u" })).resolves.toEqualTypeOf<RateLimitReturns & { resetsAt?: number }>();
    expectTypeOf(rateLimiter.limit(mutationCtx, "daily", { details: true })).resolves.toEqualTypeOf<RateLimitReturnsWithDetails & { resetsAt?: number }>();
    expectTypeOf(rateLimiter.check(queryCtx, "monthly", { key: "u" })).resolves.toEqualTypeOf<RateLimitReturns & { resetsAt?: number }>();
    expectTypeOf(rateLimiter.getValue(queryCtx, "monthly", { key: "u" })).resolves.toEqualTypeOf<GetValueReturns & { resetsAt?: number }>();
    expectTypeOf(rateLimiter.getValue(queryCtx, "daily", { details: true })).resolves.toEqualTypeOf<GetValueReturnsWithDetails & { resetsAt?: number }>();
  });

  test("an inline calendar config's results too", () => {
    const config: CalendarConfig = { kind: "calendar", rate: 5, period: "week", anchor: 0 };
    expectTypeOf(rateLimiter.limit(mutationCtx, "adhoc", { config })).resolves.toEqualTypeOf<RateLimitReturns & { resetsAt?: number }>();
  });

  test("every other limit's results keep exactly upstream's shape", () => {
    expectTypeOf(rateLimiter.limit(mutationCtx, "perMinute", { key: "u" })).resolves.toEqualTypeOf<RateLimitReturns>();
    expectTypeOf(rateLimiter.check(queryCtx, "perMinute")).resolves.toEqualTypeOf<RateLimitReturns>();
    expectTypeOf(rateLimiter.getValue(queryCtx, "perMinute")).resolves.toEqualTypeOf<GetValueReturns>();
  });

  test("reserve is an option the types allow (it is refused at runtime, naming it)", () => {
    expectTypeOf(rateLimiter.limit(mutationCtx, "monthly", { key: "u", reserve: true })).resolves.toMatchTypeOf<RateLimitReturns>();
  });
});

describe("each customer's own cycle: a calendar config as an override", () => {
  test("a key override with a calendar config, without the named config's layout", () => {
    const cycle: Override = { config: { kind: "calendar", rate: 1000, period: "month", anchor: 31, timeZone: "Asia/Tokyo" } };
    expectTypeOf(rateLimiter.setOverride(mutationCtx, "monthly", { key: "u" }, cycle)).resolves.toEqualTypeOf<void>();
    // @ts-expect-error: an override keeps the named config's shards
    const sharded: CalendarOverrideConfig = { kind: "calendar", rate: 1, period: "day", shards: 2 };
    void sharded;
  });

  test("limitAll takes a calendar quota beside a per-minute limit", () => {
    expectTypeOf(rateLimiter.limitAll(mutationCtx, [{ name: "perMinute", key: "u" }, { name: "monthly", key: "u" }])).toBeObject();
  });
});
