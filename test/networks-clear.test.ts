// Network entries after clearAll and removeOverride, through register() and the client (the app is test/app/networks.ts): the intervals a request reads are rebuilt from the entries left, so an entry clearAll deleted (or one gone by other means) is never in force.
import { convexTest } from "convex-test";
import { anyApi, componentsGeneric, defineSchema, type ApiFromModules, type FunctionReference } from "convex/server";
import { v } from "convex/values";
import batchWorker from "@convex-dev/batch-worker/test";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR } from "../src/client/index.js";
import { mutation } from "../src/component/_generated/server.js";
import { modules, schema } from "../src/test.js";
import type * as networks from "./app/networks.js";
import { components } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ networks: typeof networks }>;
const T0 = Date.UTC(2030, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

// A network entry's document deleted with nothing rebuilt, as an earlier clearAll could leave its intervals.
const inspect = {
  dropEntry: mutation({
    args: { name: v.string(), network: v.string() },
    handler: async (ctx, { name, network }) => {
      const doc = await ctx.db
        .query("rateLimitOverrides")
        .withIndex("target", (i) => i.eq("name", name).eq("scope", "network").eq("target", network))
        .unique();
      await ctx.db.delete(doc!._id);
    },
  }),
};

const { dropEntry } = (componentsGeneric() as unknown as { rateLimiter: { inspect: { dropEntry: FunctionReference<"mutation", "internal", { name: string; network: string }, null> } } }).rateLimiter.inspect;

function makeTest() {
  const t = convexTest(defineSchema({}), import.meta.glob("./app/**/*.ts"));
  t.registerComponent("rateLimiter", schema, { ...modules, "./component/inspect.ts": async () => inspect });
  batchWorker.register(t, "rateLimiter/batchWorker");
  return t;
}
type T = ReturnType<typeof makeTest>;

/** Moves the clock to `T0 + ms`, so the next call's instant is exactly that (on convex-test's moving clock). */
const at = (ms: number) => vi.setSystemTime(T0 + ms);
const signIn = (t: T, ip: string) => t.withRequestMetadata({ ip, userAgent: "Mozilla/5.0 (test)" }).mutation(api.networks.signIn, {});
const set = (t: T, target: object, override: object) => t.mutation(api.networks.set, { name: "signIn", target, override });
const networksListed = async (t: T) =>
  (await t.query(api.networks.list, { name: "signIn", paginationOpts: { numItems: 100, cursor: null } })).page.map((r) => (r.target as { network: string }).network);

/** Four sign-ins from `ip`, 1 ms apart from `from`: signIn allows 3 a minute, so a 4th ok is an allow entry's doing. */
async function fourSignIns(t: T, ip: string, from: number) {
  const oks = [];
  for (let i = 0; i < 4; i++) {
    at(from + i);
    oks.push((await signIn(t, ip)).ok);
  }
  return oks;
}

describe("clearAll and network entries", () => {
  test("an entry clearAll deleted is no longer in force, though setting a nested one later re-inserted its intervals", async () => {
    const t = makeTest();
    at(10);
    await set(t, { network: "10.0.0.0/8" }, { allow: true });
    at(1000);
    await set(t, { network: "10.1.0.0/16" }, { blockedUntil: T0 + 10 * HOUR });
    at(2000);
    await t.run((ctx) => ctx.runMutation(components.rateLimiter.lib.clearAll, { before: T0 + 500 }));
    at(2001);
    expect(await networksListed(t)).toEqual(["10.1.0.0/16"]);
    // 10.2.0.1 was in the deleted allow entry's range only: limited as any address.
    expect(await fourSignIns(t, "10.2.0.1", 3000)).toEqual([true, true, true, false]);
    // The entry clearAll kept is still in force.
    at(4000);
    expect(await signIn(t, "10.1.2.3")).toMatchObject({ ok: false });
  });

  test("clearAll of every entry leaves no network in force", async () => {
    const t = makeTest();
    at(10);
    await set(t, { network: "10.0.0.0/8" }, { allow: true });
    at(20);
    await set(t, { network: "10.1.0.0/16" }, { allow: true });
    at(2000);
    await t.run((ctx) => ctx.runMutation(components.rateLimiter.lib.clearAll, {}));
    at(2001);
    expect(await networksListed(t)).toEqual([]);
    expect(await fourSignIns(t, "10.1.0.1", 3000)).toEqual([true, true, true, false]);
  });
});

describe("removeOverride of a network", () => {
  test("rebuilds the intervals even when the entry is already gone, so none outlives its entry", async () => {
    const t = makeTest();
    at(10);
    await set(t, { network: "10.0.0.0/8" }, { allow: true });
    at(20);
    await t.run((ctx) => ctx.runMutation(dropEntry, { name: "signIn", network: "10.0.0.0/8" }));
    // The interval left behind still allows (what the rebuild below fixes).
    expect(await fourSignIns(t, "10.2.0.1", 100)).toEqual([true, true, true, true]);
    at(200);
    expect(await t.mutation(api.networks.remove, { name: "signIn", target: { network: "10.0.0.0/8" } })).toBe(false);
    expect(await fourSignIns(t, "10.3.0.1", 300)).toEqual([true, true, true, false]);
  });
});
