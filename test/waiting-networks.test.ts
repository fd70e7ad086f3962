// Waiting until allowed behind a limit with network entries (test/app/waitingNetworks.ts): a network's block refuses runWhenAllowed, waitUntilAllowed and check/getValue with `wait: true`, taking and running nothing; an allowed network runs at once; an explicit `ip` wins. The fake clock moves one millisecond before every call, so each call's instant is known on convex-test's moving clock.
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, SECOND } from "../src/client/index.js";
import type * as app from "./app/waitingNetworks.js";
import { schema } from "./app/waitingNetworks.js";
import { convexErrorData, makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ waitingNetworks: typeof app }>;
const T0 = Date.UTC(2030, 0, 1);
let now = T0;

/** Moves the clock to a new millisecond, so the next call's instant is exactly `now`. */
function tick(ms = 1): number {
  now += ms;
  vi.setSystemTime(now);
  return now;
}

beforeEach(() => {
  vi.useFakeTimers();
  now = T0;
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

type T = ReturnType<typeof makeTest>;

const BLOCKED = "203.0.113.9";
const OUTSIDE = "203.0.114.1";
const ALLOWED = "203.0.113.200";
const from = (t: T, ip: string | null) => t.withRequestMetadata({ ip, userAgent: "test" });
const set = (t: T, target: object, override: object) => (tick(), t.mutation(api.waitingNetworks.set, { target, override }));
/** Runs every scheduled job (the component schedules the work), then says which work ran. */
async function ran(t: T): Promise<string[]> {
  await t.finishAllScheduledFunctions(vi.runAllTimers);
  now = Date.now();
  tick();
  return (await t.query(api.waitingNetworks.done, {})).map((d) => d.to);
}
/** The key's tokens now, read from an address no entry holds. */
const tokens = async (t: T, key: string) => (tick(), (await t.query(api.waitingNetworks.valueQuery, { key, ip: OUTSIDE })).value);

/** Blocks 203.0.113.0/24 until T0 + 1 h. */
async function blockNetwork(t: T) {
  await set(t, { network: "203.0.113.0/24" }, { blockedUntil: T0 + HOUR });
}

describe("a network's block", () => {
  test("refuses runWhenAllowed from an address in it, as limit does, scheduling and taking nothing", async () => {
    const t = makeTest(schema);
    await blockNetwork(t);
    tick();
    expect(await from(t, BLOCKED).mutation(api.waitingNetworks.take, { key: BLOCKED })).toEqual({ ok: false, retryAfter: T0 + HOUR - now });
    tick();
    expect(await from(t, BLOCKED).mutation(api.waitingNetworks.queue, { to: "a", key: BLOCKED })).toEqual({ ok: false, retryAfter: T0 + HOUR - now });
    // Any key: the entry is matched by the address, not the key.
    tick();
    expect(await from(t, "::ffff:203.0.113.77").mutation(api.waitingNetworks.queue, { to: "b", key: "someone" })).toEqual({ ok: false, retryAfter: T0 + HOUR - now });
    tick();
    expect(await convexErrorData(from(t, BLOCKED).mutation(api.waitingNetworks.queue, { to: "c", key: BLOCKED, throws: true }))).toEqual({
      kind: "RateLimited",
      name: "signIn",
      retryAfter: T0 + HOUR - now,
    });
    expect(await tokens(t, BLOCKED)).toBe(3);
    expect(await tokens(t, "someone")).toBe(3);
    // Nothing queued either: from outside the network the same key's work runs at once, alone.
    tick();
    expect(await from(t, OUTSIDE).mutation(api.waitingNetworks.queue, { to: "d", key: BLOCKED })).toMatchObject({ ok: true, runAt: now });
    expect(await ran(t)).toEqual(["d"]);
  });

  test("refuses waitUntilAllowed in an action from an address in it, taking nothing", async () => {
    const t = makeTest(schema);
    await blockNetwork(t);
    tick();
    expect(await from(t, BLOCKED).action(api.waitingNetworks.waitHere, { key: BLOCKED })).toEqual({ ok: false, retryAfter: T0 + HOUR - now });
    tick();
    expect(await convexErrorData(from(t, BLOCKED).action(api.waitingNetworks.waitHere, { key: BLOCKED, throws: true }))).toMatchObject({
      kind: "RateLimited",
      retryAfter: T0 + HOUR - now,
    });
    expect(await tokens(t, BLOCKED)).toBe(3);
    tick();
    expect(await from(t, OUTSIDE).action(api.waitingNetworks.waitHere, { key: BLOCKED })).toEqual({ ok: true, waited: 0 });
  });

  test("check and getValue with wait: true say it would be refused, from a request at an address in it", async () => {
    const t = makeTest(schema);
    await blockNetwork(t);
    tick();
    expect(await from(t, BLOCKED).mutation(api.waitingNetworks.checkHere, { key: BLOCKED })).toEqual({ ok: false, retryAfter: T0 + HOUR - now });
    tick();
    const value = await from(t, BLOCKED).mutation(api.waitingNetworks.valueHere, { key: BLOCKED });
    expect(value).toMatchObject({ value: 3, blockedUntil: T0 + HOUR, blockedBy: "network", network: "203.0.113.0/24" });
    expect(value).not.toHaveProperty("runAt");
    // Outside the network both say the work would run now.
    tick();
    expect(await from(t, OUTSIDE).mutation(api.waitingNetworks.checkHere, { key: BLOCKED })).toEqual({ ok: true, runAt: now });
    tick();
    expect(await from(t, OUTSIDE).mutation(api.waitingNetworks.valueHere, { key: BLOCKED })).toMatchObject({ value: 3, runAt: now });
  });

  test("an explicit ip is matched instead of the request's own, in mutations and in queries (which have none)", async () => {
    const t = makeTest(schema);
    await blockNetwork(t);
    // A request with no address (a server-to-server call), given one in the network.
    tick();
    expect(await t.mutation(api.waitingNetworks.queue, { to: "a", key: "k", ip: BLOCKED })).toEqual({ ok: false, retryAfter: T0 + HOUR - now });
    // The explicit address wins over the request's own, either way.
    tick();
    expect(await from(t, OUTSIDE).mutation(api.waitingNetworks.queue, { to: "b", key: "k", ip: BLOCKED })).toEqual({ ok: false, retryAfter: T0 + HOUR - now });
    tick();
    expect(await from(t, OUTSIDE).action(api.waitingNetworks.waitHere, { key: "k", ip: BLOCKED })).toEqual({ ok: false, retryAfter: T0 + HOUR - now });
    tick();
    expect(await t.query(api.waitingNetworks.checkQuery, { key: "k", ip: BLOCKED })).toEqual({ ok: false, retryAfter: T0 + HOUR - now });
    tick();
    expect(await t.query(api.waitingNetworks.valueQuery, { key: "k", ip: BLOCKED })).not.toHaveProperty("runAt");
    expect(await tokens(t, "k")).toBe(3);
    tick();
    expect(await from(t, BLOCKED).mutation(api.waitingNetworks.queue, { to: "c", key: "k", ip: OUTSIDE })).toMatchObject({ ok: true, runAt: now });
    expect(await ran(t)).toEqual(["c"]);
    // Without an address a query matches no entry.
    tick();
    expect(await t.query(api.waitingNetworks.checkQuery, { key: "k" })).toEqual({ ok: true, runAt: now });
  });

  test("a malformed ip is an InvalidRateLimit naming ip, scheduling nothing", async () => {
    const t = makeTest(schema);
    tick();
    expect(await convexErrorData(t.mutation(api.waitingNetworks.queue, { to: "a", key: "k", ip: "203.0.113" }))).toMatchObject({ kind: "InvalidRateLimit", field: "ip" });
    tick();
    expect(await convexErrorData(t.query(api.waitingNetworks.checkQuery, { key: "k", ip: "nope" }))).toMatchObject({ kind: "InvalidRateLimit", field: "ip" });
    expect(await ran(t)).toEqual([]);
    expect(await tokens(t, "k")).toBe(3);
  });
});

describe("an allowed network", () => {
  test("runs the work at once past a spent limit, taking nothing", async () => {
    const t = makeTest(schema);
    await set(t, { network: "203.0.113.128/25" }, { allow: true });
    // Spend the key's burst from outside: work queued now waits 20 s for a token.
    for (let i = 0; i < 3; i++) {
      tick();
      expect(await from(t, OUTSIDE).mutation(api.waitingNetworks.take, { key: "k" })).toMatchObject({ ok: true });
    }
    tick();
    expect(await from(t, OUTSIDE).mutation(api.waitingNetworks.checkHere, { key: "k" })).toEqual({ ok: true, runAt: T0 + 2 + 20 * SECOND });
    tick();
    const queued = await from(t, ALLOWED).mutation(api.waitingNetworks.queue, { to: "allowed", key: "k" });
    expect(queued).toMatchObject({ ok: true, runAt: now });
    expect(await ran(t)).toEqual(["allowed"]);
    tick();
    expect(await from(t, ALLOWED).mutation(api.waitingNetworks.checkHere, { key: "k" })).toEqual({ ok: true, runAt: now });
    tick();
    expect(await from(t, ALLOWED).mutation(api.waitingNetworks.valueHere, { key: "k" })).toMatchObject({ allowed: true, runAt: now });
    tick();
    expect(await from(t, ALLOWED).action(api.waitingNetworks.waitHere, { key: "k" })).toEqual({ ok: true, waited: 0 });
    // The spent key is as it was: the allowed requests took nothing.
    tick();
    expect(await from(t, OUTSIDE).mutation(api.waitingNetworks.checkHere, { key: "k" })).toEqual({ ok: true, runAt: T0 + 2 + 20 * SECOND });
  });
});

test("runWhenAllowed with no options (from JavaScript) queues on the global key, without a TypeError after scheduling", async () => {
  const t = makeTest(schema);
  tick();
  expect(await from(t, OUTSIDE).mutation(api.waitingNetworks.queueNoOptions, { to: "x" })).toMatchObject({ ok: true, runAt: now });
  expect(await ran(t)).toEqual(["x"]);
});
