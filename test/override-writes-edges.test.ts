// What setOverride checks and stores (src/shared/admin/override-writes.ts), through the published register() helper and the typed client (the apps are test/app/overrides.ts, networks.ts and calendar.ts): a calendar quota's override stored as the fixed window it runs as, its calendar fields named under override.config; overrides and targets of the wrong shape or type refused as InvalidRateLimit errors naming the field, the value and the problem, nothing written; fields left undefined ignored, as Convex drops them. Each call at an instant of its own.
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, type Override, type OverrideTarget } from "../src/client/index.js";
import type * as calendar from "./app/calendar.js";
import { rateLimiter as calendarLimiter } from "./app/calendar.js";
import type * as networks from "./app/networks.js";
import type * as overrides from "./app/overrides.js";
import { rateLimiter } from "./app/overrides.js";
import { convexErrorData, makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ overrides: typeof overrides; networks: typeof networks; calendar: typeof calendar }>;
const T0 = Date.UTC(2030, 0, 1);
let now = T0;

beforeEach(() => {
  vi.useFakeTimers();
  now = T0;
  vi.setSystemTime(now);
});
afterEach(() => {
  vi.useRealTimers();
});

type Test = ReturnType<typeof makeTest>;

/** Moves the clock 1 ms, so every call runs at an instant of its own on convex-test's moving clock. */
function tick(): number {
  now += 1;
  vi.setSystemTime(now);
  return now;
}

/** The InvalidRateLimit error's data, as the client throws it: the field, the value as shown, and the message. */
const invalid = (field: string, value: string, problem: string) => ({ kind: "InvalidRateLimit", field, value, message: `${field} = ${value}: ${problem}` });

const set = (t: Test, target: unknown, override: unknown) => (tick(), t.mutation(api.overrides.set, { name: "llm", target, override }));
const setNetwork = (t: Test, name: "signIn" | "plain", target: unknown, override: unknown) => (tick(), t.mutation(api.networks.set, { name, target, override }));
const listAll = async (t: Test) => (tick(), (await t.query(api.overrides.list, { name: "llm", paginationOpts: { numItems: 100, cursor: null } })).page);

describe("a calendar quota's override", () => {
  test("is stored as the fixed window it runs as: the nominal month, with the customer's calendar", async () => {
    const t = makeTest();
    const override = { config: { kind: "calendar", rate: 5, period: "month", anchor: 17, timeZone: "Europe/Paris" } };
    await (tick(), t.mutation(api.calendar.setOverride, { name: "monthly", target: { key: "cust-17" }, override }));
    const stored = await (tick(), t.run(async (ctx) => calendarLimiter.getOverride(ctx, "monthly", { key: "cust-17" })));
    expect(stored).toEqual({
      target: { key: "cust-17" },
      override: { config: { kind: "fixed window", rate: 5, period: 30 * 86_400_000, calendar: { period: "month", timeZone: "Europe/Paris", anchor: 17 } } },
      updatedAt: T0 + 1,
    });
  });

  test("a tier's week in UTC takes the default anchor (Monday) and zone", async () => {
    const t = makeTest();
    await (tick(), t.mutation(api.calendar.setOverride, { name: "monthly", target: { tier: "pro" }, override: { config: { kind: "calendar", rate: 7, period: "week" } } }));
    const stored = await (tick(), t.run(async (ctx) => calendarLimiter.getOverride(ctx, "monthly", { tier: "pro" })));
    expect(stored?.override).toEqual({ config: { kind: "fixed window", rate: 7, period: 7 * 86_400_000, calendar: { period: "week", timeZone: "UTC", anchor: 1 } } });
  });

  test.each([
    [
      "an anchor past the month's days",
      { kind: "calendar", rate: 5, period: "month", anchor: 32 },
      invalid("override.config.anchor", "32", "is the day of the month a month starts on (clamped to the month's last day): a whole number from 1 to 31"),
    ],
    [
      "a time zone the runtime doesn't know",
      { kind: "calendar", rate: 5, period: "day", timeZone: "Mars/Olympus_Mons" },
      invalid("override.config.timeZone", '"Mars/Olympus_Mons"', 'is not a time zone this runtime knows: use an IANA name such as "America/New_York" or "UTC"'),
    ],
    [
      "a capacity, which a calendar quota doesn't have",
      { kind: "calendar", rate: 5, period: "day", capacity: 10 },
      invalid("override.config.capacity", "10", "a calendar quota has no capacity: nothing rolls over, each period grants its rate; leave it out"),
    ],
  ])("%s is named under override.config, and nothing is written", async (_why, config, error) => {
    const t = makeTest();
    expect(await convexErrorData((tick(), t.mutation(api.calendar.setOverride, { name: "monthly", target: { key: "c" }, override: { config } })))).toEqual(error);
    expect(await (tick(), t.run(async (ctx) => calendarLimiter.getOverride(ctx, "monthly", { key: "c" })))).toBeNull();
  });
});

describe("an override of the wrong shape or type", () => {
  const forms = "must be { config } (the config in force for the target) or { blockedUntil } (an instant, UTC ms)";

  test.each([
    ["null", null, '"null"'],
    ["a number", 5, '"5"'],
    ["a string", "pro", '"\\"pro\\""'],
    ["no form", {}, '"{}"'],
    // Shown as Convex passes it on: its fields in order of name.
    ["two forms at once", { config: {}, blockedUntil: 1 }, '"{\\"blockedUntil\\":1,\\"config\\":{}}"'],
  ])("%s for a key names override, offering a key's two forms", async (_why, override, shown) => {
    const t = makeTest();
    expect(await convexErrorData(set(t, { key: "u" }, override))).toEqual(invalid("override", shown, forms));
    expect(await listAll(t)).toEqual([]);
  });

  test("no form for a network offers its third, { allow: true }", async () => {
    const t = makeTest();
    expect(await convexErrorData(setNetwork(t, "signIn", { network: "203.0.113.0/24" }, {}))).toEqual(invalid("override", '"{}"', `${forms} or { allow: true } (never limited)`));
  });

  test("undefined, from the client directly, names override", async () => {
    const t = makeTest();
    const data = await convexErrorData((tick(), t.run(async (ctx) => rateLimiter.setOverride(ctx, "llm", { key: "u" }, undefined as unknown as Override))));
    expect(data).toEqual(invalid("override", "undefined", forms));
  });

  test.each([
    ["null", null, "null"],
    ["a string", "pro", '"pro"'],
  ])("a config that is %s names override.config", async (_why, config, shown) => {
    const t = makeTest();
    expect(await convexErrorData(set(t, { key: "u" }, { config }))).toEqual(
      invalid("override.config", shown, 'must be an object such as { kind: "token bucket", rate: 10, period: MINUTE }'),
    );
    expect(await listAll(t)).toEqual([]);
  });

  test("an allow for a key is refused: only a network's entry exempts", async () => {
    const t = makeTest();
    expect(await convexErrorData(set(t, { key: "u" }, { allow: true }))).toEqual(
      invalid("override.allow", "true", "only a network's entry may allow (exempt its addresses); for a key or a tier, set a config"),
    );
  });

  test("a network's allow that isn't true is refused", async () => {
    const t = makeTest();
    expect(await convexErrorData(setNetwork(t, "signIn", { network: "203.0.113.0/24" }, { allow: false }))).toEqual(
      invalid("override.allow", "false", "must be true (remove the entry to stop exempting the network)"),
    );
  });

  test("a field left undefined is no field, as Convex drops it: the block is set", async () => {
    const t = makeTest();
    const override = { blockedUntil: T0 + HOUR, note: undefined } as unknown as Override;
    await (tick(), t.run(async (ctx) => rateLimiter.setOverride(ctx, "llm", { key: "u" }, override)));
    expect(await listAll(t)).toEqual([{ target: { key: "u" }, override: { blockedUntil: T0 + HOUR }, updatedAt: T0 + 1 }]);
    expect(await (tick(), t.mutation(api.overrides.take, { name: "llm", key: "u" }))).toEqual({ ok: false, retryAfter: HOUR - 3 });
  });
});

describe("a target of the wrong shape or type", () => {
  const shapes = "must be { key } (one key; {} for the limit without a key), { network } (a CIDR network) or { tier }";

  test.each([
    ["null", null, '"null"'],
    ["a number", 5, '"5"'],
    ["a field no target has", { user: "u" }, JSON.stringify(JSON.stringify({ user: "u" }))],
    ["a key and a tier at once", { key: "u", tier: "pro" }, JSON.stringify(JSON.stringify({ key: "u", tier: "pro" }))],
  ])("%s names target", async (_why, target, shown) => {
    const t = makeTest();
    expect(await convexErrorData(set(t, target, { blockedUntil: T0 + HOUR }))).toEqual(invalid("target", shown, shapes));
    expect(await listAll(t)).toEqual([]);
  });

  test("undefined, from the client directly, names target", async () => {
    const t = makeTest();
    const data = await convexErrorData((tick(), t.run(async (ctx) => rateLimiter.setOverride(ctx, "llm", undefined as unknown as OverrideTarget, { blockedUntil: T0 + HOUR }))));
    expect(data).toEqual(invalid("target", "undefined", shapes));
  });

  // Before, null threw a TypeError from the length check, and a number reached Convex's validator,
  // whose error names no field.
  test.each([
    ["a null key", { key: null }, "target.key", "null"],
    ["a numeric key", { key: 5 }, "target.key", "5"],
    ["a null tier", { tier: null }, "target.tier", "null"],
    ["a numeric tier", { tier: 5 }, "target.tier", "5"],
  ])("%s, from the client directly, names the field", async (_why, target, field, shown) => {
    const t = makeTest();
    const data = await convexErrorData((tick(), t.run(async (ctx) => rateLimiter.setOverride(ctx, "llm", target as unknown as OverrideTarget, { blockedUntil: T0 + HOUR }))));
    expect(data).toEqual(invalid(field, shown, "must be a string"));
    expect(await listAll(t)).toEqual([]);
  });

  // An unset variable as the tier or network: Convex would drop it and set the global key's override.
  test.each([
    ["a tier", { tier: undefined }, "target.tier"],
    ["a network", { network: undefined }, "target.network"],
  ])("%s given as undefined, from the client directly, is refused naming it, nothing written (not the limit without a key's)", async (_why, target, field) => {
    const t = makeTest();
    const data = await convexErrorData((tick(), t.run(async (ctx) => rateLimiter.setOverride(ctx, "llm", target as unknown as OverrideTarget, { blockedUntil: T0 + HOUR }))));
    expect(data).toEqual(invalid(field, "undefined", "must be a string; for the limit without a key, the target is {}"));
    expect(await listAll(t)).toEqual([]);
  });

  test("a field left undefined is no field, as Convex drops it: the tier's override is set", async () => {
    const t = makeTest();
    const target = { tier: "pro", key: undefined } as unknown as OverrideTarget;
    await (tick(), t.run(async (ctx) => rateLimiter.setOverride(ctx, "llm", target, { blockedUntil: T0 + HOUR })));
    expect(await listAll(t)).toEqual([{ target: { tier: "pro" }, override: { blockedUntil: T0 + HOUR }, updatedAt: T0 + 1 }]);
  });

  test("a malformed network is named before the limit's lack of network entries", async () => {
    const t = makeTest();
    const data = await convexErrorData(setNetwork(t, "plain", { network: "203.0.113.0/33" }, { blockedUntil: T0 + HOUR }));
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field: "target.network", value: '"203.0.113.0/33"' });
  });
});
