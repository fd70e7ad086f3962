// The bad-input matrix, table-driven on convex-test with fake timers: every config field and argument × bad values, through each entry point; each must throw an InvalidRateLimit ConvexError naming the field, write nothing, and leave the limit usable.
import type { FunctionReference } from "convex/server";
import { ConvexError } from "convex/values";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { calculateRateLimit, MINUTE, RateLimiter, SECOND, type RateLimitConfig } from "../src/client/index.js";
import { at } from "./clock.js";
import { convexErrorData, errorOf, inspectable, makeInspectableTest } from "./setup.js";

const T0 = Date.UTC(2025, 2, 3, 4, 5, 6, 7);

const api = inspectable.rateLimiter;
const makeT = makeInspectableTest;
type T = ReturnType<typeof makeT>;
/** A convex-test instance, or the runner of `at`'s one transaction. */
type Runner = Pick<T, "run">;
const rows = (t: T) => t.run((ctx) => ctx.runQuery(api.inspect.rows, {}));

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

// "sliding window" is the exact one (the default); the approximate one is a kind of its own here.
const KINDS = ["token bucket", "fixed window", "sliding window", "approximate sliding window"] as const;
type Kind = (typeof KINDS)[number];
type Numbers = {
  rate?: number;
  period?: number;
  capacity?: number;
  maxReserved?: number;
  shards?: number;
  start?: number;
  applyUpdates?: "asynchronously" | "transactionally";
};

/** A valid limit of 10 per minute, with `set` applied. `start` applies to windows only. */
function configOf(kind: Kind, set: Numbers = {}): RateLimitConfig {
  const { start, ...rest } = set;
  const common = { rate: 10, period: MINUTE, capacity: 10, ...rest };
  if (kind === "sliding window") {
    // A sliding window's capacity is its rate, so follow the rate unless the case sets capacity.
    // An exact one has no start: only a case that sets one gives it one.
    return { kind, ...common, capacity: set.capacity ?? common.rate, ...("start" in set ? { start } : {}) };
  }
  if (kind === "approximate sliding window") {
    return { kind: "sliding window", exact: false, ...common, capacity: set.capacity ?? common.rate, start: start ?? T0 };
  }
  return kind === "token bucket"
    ? { kind, ...common }
    : { kind, ...common, start: start ?? T0 };
}

const NAME = "limit";
const KEY = "user";
const long = "x".repeat(1025);

type Request = {
  config: RateLimitConfig;
  name?: string;
  key?: string;
  count?: number;
  reserve?: boolean;
  sampleShards?: number;
};
type Entry = "limit" | "check" | "getValue" | "reset" | "constructor" | "calculateRateLimit";
type Case = { why: string; field: string; kind: Kind; request: Request; entries: Entry[] };

const CONFIG_ENTRIES: Entry[] = ["limit", "check", "getValue", "constructor", "calculateRateLimit"];
const COUNT_ENTRIES: Entry[] = ["limit", "check", "calculateRateLimit"];
const RESERVE_ENTRIES: Entry[] = ["limit", "check"];
const NAME_ENTRIES: Entry[] = ["limit", "check", "getValue", "reset"];

// Config fields × bad values. [field, value, why]
const configRows: [keyof Numbers, number, string][] = [
  ["rate", NaN, "NaN compares false with everything and would disable the limit"],
  ["rate", Infinity, "an infinite rate is no limit"],
  ["rate", -Infinity, "a rate must be positive"],
  ["rate", -1, "negative rate would drain over time"],
  ["rate", 0, "a zero rate never refills: use capacity alone elsewhere"],
  ["period", NaN, "NaN period"],
  ["period", Infinity, "an infinite period never refills"],
  ["period", -Infinity, "negative infinite period"],
  ["period", -1, "a negative period runs time backwards"],
  ["period", 0, "a zero period divides by zero"],
  ["period", 0.5, "periods are whole ms of at least 1"],
  ["capacity", NaN, "NaN capacity"],
  ["capacity", Infinity, "an infinite capacity is no limit"],
  ["capacity", -Infinity, "negative infinite capacity"],
  ["capacity", -1, "a negative capacity can't hold tokens"],
  ["maxReserved", NaN, "NaN maxReserved"],
  ["maxReserved", Infinity, "explicitly infinite: leave it out for unlimited"],
  ["maxReserved", -Infinity, "negative infinite maxReserved"],
  ["maxReserved", -1, "a negative reservation cap"],
  ["start", NaN, "NaN start has no phase"],
  ["start", Infinity, "infinite start has no phase"],
  ["start", -Infinity, "negative infinite start has no phase"],
  ["shards", NaN, "NaN shards"],
  ["shards", Infinity, "infinitely many rows"],
  ["shards", -Infinity, "negative infinite shards"],
  ["shards", -1, "negative shards"],
  ["shards", 0, "zero shards hold nothing"],
  ["shards", 1.5, "shards are whole rows"],
  ["shards", 1e308, "far above the most shards allowed (1024)"],
];

const cases: Case[] = [];
for (const kind of KINDS) {
  for (const [field, value, why] of configRows) {
    if (field === "start" && kind === "token bucket") continue; // token buckets have no start
    const set: Numbers = { [field]: value };
    // A maxReserved only matters with reserve, but it is checked on every call.
    cases.push({ why, field: `config.${field}`, kind, request: { config: configOf(kind, set) }, entries: CONFIG_ENTRIES });
  }
  const layouts: [Numbers, string][] = [
    [{ rate: 5, capacity: 5, shards: 8 }, "rate 5 over 8 shards can't give each shard a whole token"],
    [{ rate: 2.5, capacity: 2.5, shards: 3 }, "rate 2.5 over 3 shards: one shard would get only a fraction"],
    [{ rate: 10, capacity: 3, shards: 5 }, "capacity 3 over 5 shards can't give each shard a whole token"],
    [{ rate: 2000, capacity: 2000, shards: 1025 }, "more than the 1024 shards allowed"],
  ];
  for (const [set, why] of layouts) {
    // A sliding window's capacity must equal its rate: that error comes first (tested below).
    if ((kind === "sliding window" || kind === "approximate sliding window") && set.capacity !== set.rate) continue;
    cases.push({ why, field: "config.shards", kind, request: { config: configOf(kind, set) }, entries: CONFIG_ENTRIES });
  }
  const counts: [number, string][] = [
    [NaN, "a NaN count compares false and would always pass"],
    [Infinity, "an infinite count can never succeed"],
    [-Infinity, "a negative infinite count would fill the bucket"],
    [-1, "a negative count would add tokens"],
    [1e308, "far above the capacity"],
    [11, "above the capacity of 10: it could never succeed"],
  ];
  for (const [count, why] of counts) {
    cases.push({ why, field: "count", kind, request: { config: configOf(kind), count }, entries: COUNT_ENTRIES });
  }
  cases.push({
    why: "rate 10 over 8 shards is 2,2,1,1,1,1,1,1: the smallest pair holds 2, so 3 may never fit",
    field: "count",
    kind,
    request: { config: configOf(kind, { shards: 8 }), count: 3 },
    entries: COUNT_ENTRIES,
  });
  if (kind === "sliding window" || kind === "approximate sliding window") {
    cases.push({
      why: "a sliding window holds its rate in any window: a different capacity means nothing",
      field: "config.capacity",
      kind,
      request: { config: configOf(kind, { capacity: 5 }) },
      entries: CONFIG_ENTRIES,
    });
    cases.push({
      why: "a sliding window can't reserve ahead: a maxReserved would be ignored",
      field: "config.maxReserved",
      kind,
      request: { config: configOf(kind, { maxReserved: 5 }) },
      entries: CONFIG_ENTRIES,
    });
    cases.push({
      why: "reserving on a sliding window would run work past its window's limit",
      field: "reserve",
      kind,
      request: { config: configOf(kind), count: 1, reserve: true },
      entries: RESERVE_ENTRIES,
    });
  } else {
    cases.push({
      why: "capacity 0 without reserve: nothing is ever there",
      field: "count",
      kind,
      request: { config: configOf(kind, { capacity: 0 }), count: 1 },
      entries: COUNT_ENTRIES,
    });
    cases.push({
      why: "with reserve: above capacity 10 + maxReserved 5",
      field: "count",
      kind,
      request: { config: configOf(kind, { maxReserved: 5 }), count: 16, reserve: true },
      entries: RESERVE_ENTRIES,
    });
    cases.push({
      why: "with reserve, sharded: maxReserved 8 over 8 shards is 1 each, so a pair takes at most 2 + 2",
      field: "count",
      kind,
      request: { config: configOf(kind, { shards: 8, maxReserved: 8 }), count: 5, reserve: true },
      entries: RESERVE_ENTRIES,
    });
  }
  if (kind === "sliding window") {
    // No cap on an exact window's rate (its log is bounded whatever the rate): exact-window.test.ts.
    cases.push({
      why: "an exact window has no windows for a start to align",
      field: "config.start",
      kind,
      request: { config: configOf(kind, { start: 0 }) },
      entries: CONFIG_ENTRIES,
    });
  }
  cases.push({ why: "an empty name names no limit", field: "name", kind, request: { config: configOf(kind), name: "" }, entries: NAME_ENTRIES });
  cases.push({ why: "a name over 1024 characters", field: "name", kind, request: { config: configOf(kind), name: long }, entries: NAME_ENTRIES });
  cases.push({ why: "a key over 1024 characters", field: "key", kind, request: { config: configOf(kind), key: long }, entries: NAME_ENTRIES });
  const samples: [number, string][] = [
    [0, "reading no shard gives nothing to show"],
    [-1, "a negative number of reads"],
    [1.5, "reads are whole rows"],
    [NaN, "NaN reads"],
    [Infinity, "infinitely many reads"],
    [-Infinity, "negative infinite reads"],
  ];
  for (const [sampleShards, why] of samples) {
    cases.push({
      why,
      field: "sampleShards",
      kind,
      request: { config: configOf(kind, { shards: 5 }), sampleShards },
      entries: ["getValue"],
    });
  }
}

const matrix = cases.flatMap((c) => c.entries.map((entry) => ({ ...c, entry })));

function call(t: T, entry: Entry, r: Request): Promise<unknown> {
  const name = r.name ?? NAME;
  const key = r.key ?? KEY;
  const base = { name, key, config: r.config };
  const request = {
    ...base,
    ...(r.count === undefined ? {} : { count: r.count }),
    ...(r.reserve === undefined ? {} : { reserve: r.reserve }),
  };
  switch (entry) {
    case "limit":
      return t.run((ctx) => ctx.runMutation(api.lib.rateLimit, request));
    case "check":
      return t.run((ctx) => ctx.runQuery(api.lib.checkRateLimit, request));
    case "getValue":
      return t.run((ctx) =>
        ctx.runQuery(api.lib.getValue, { ...base, ...(r.sampleShards === undefined ? {} : { sampleShards: r.sampleShards }) }),
      );
    case "reset":
      return t.run((ctx) => ctx.runMutation(api.lib.resetRateLimit, { name, key }));
    case "constructor":
      return (async () => new RateLimiter(api, { [name]: r.config }))();
    case "calculateRateLimit":
      return (async () => calculateRateLimit(null, r.config, Date.now(), r.count))();
    default: {
      const never: never = entry;
      throw new Error(`unknown entry ${String(never)}`);
    }
  }
}

/** The total tokens left in the valid limit, read over all its rows. */
async function left(t: Runner, kind: Kind): Promise<number | undefined> {
  const gv = await t.run((ctx) => ctx.runQuery(api.lib.getValue, { name: NAME, key: KEY, config: configOf(kind), details: true }));
  return gv.total?.value;
}

/** Takes one token from the valid limit. */
const take = (t: Runner, kind: Kind) => t.run((ctx) => ctx.runMutation(api.lib.rateLimit, { name: NAME, key: KEY, config: configOf(kind) }));

// When the later valid calls run: 3 s after the take at T0, a token bucket of 10 a minute has
// refilled exactly half a token (9.5 left); the windows (start T0) hold 9 until T0 + 1 min.
const LATER = T0 + 3 * SECOND;
const leftLater = (kind: Kind) => (kind === "token bucket" ? 9.5 : 9);

describe("bad input is an InvalidRateLimit ConvexError naming the field, and writes nothing", () => {
  test.each(matrix)("$kind $entry: $field ($why)", async ({ kind, entry, field, request }) => {
    const t = makeT();
    // Some state on the same limit first, so "writes nothing" and "unaffected" mean something.
    expect(await at(t, T0, (u) => take(u, kind))).toMatchObject({ ok: true });
    const before = await rows(t);
    // The bad call's instant (T0 or 1 ms on) changes nothing: it is refused before time counts.
    const data = await convexErrorData(call(t, entry, request));
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field, value: expect.any(String), message: expect.any(String) });
    if (typeof data === "object" && data !== null && "message" in data && typeof data.message === "string") {
      expect(data.message.startsWith(field)).toBe(true); // the message names the field (and its value)
    }
    expect(await rows(t)).toEqual(before);
    // Later valid calls on the same limit see exactly the state before: at one instant, what the
    // take at T0 left, then one token fewer.
    const seen = await at(t, LATER, async (u) => [await left(u, kind), await take(u, kind), await left(u, kind)] as const);
    expect(seen).toEqual([leftLater(kind), expect.objectContaining({ ok: true }), leftLater(kind) - 1]);
  });
});

// Extremes that are valid: documented edges, each must be accepted through limit and check.
describe("valid extremes are accepted", () => {
  const accepted: [string, Request][] = [
    ["rate 1e308", { config: configOf("token bucket", { rate: 1e308, capacity: 10 }) }],
    ["capacity 1e308", { config: configOf("token bucket", { capacity: 1e308 }) }],
    ["period 1e308", { config: configOf("fixed window", { period: 1e308 }) }],
    ["start 1e308 (only its phase matters)", { config: configOf("fixed window", { start: 1e308 }) }],
    ["start -1e308", { config: configOf("fixed window", { start: -1e308 }) }],
    ["start two hours ahead", { config: configOf("fixed window", { start: T0 + 2 * 60 * MINUTE }) }],
    ["maxReserved 1e308", { config: configOf("token bucket", { maxReserved: 1e308 }), count: 50, reserve: true }],
    ["maxReserved 0 (no reservation)", { config: configOf("token bucket", { maxReserved: 0 }), reserve: true }],
    ["capacity 0 with reserve (pure scheduling)", { config: configOf("fixed window", { capacity: 0 }), reserve: true }],
    ["count 0 (a peek)", { config: configOf("token bucket"), count: 0 }],
    ["count 1.5", { config: configOf("token bucket"), count: 1.5 }],
    ["count equal to the capacity", { config: configOf("fixed window"), count: 10 }],
    ["count 15 with reserve = capacity 10 + maxReserved 5", { config: configOf("token bucket", { maxReserved: 5 }), count: 15, reserve: true }],
    ["rate 10 over 8 shards, count 2 (the smallest pair)", { config: configOf("token bucket", { shards: 8 }), count: 2 }],
    ["1024 shards", { config: configOf("token bucket", { rate: 1024, capacity: 1024, shards: 1024 }) }],
    ["a name of 1024 characters", { config: configOf("token bucket"), name: "n".repeat(1024) }],
    ["a key of 1024 characters", { config: configOf("token bucket"), key: "k".repeat(1024) }],
    ['applyUpdates "transactionally"', { config: configOf("token bucket", { applyUpdates: "transactionally" }) }],
    ["an exact sliding window of rate 1000 (the most per shard)", { config: configOf("sliding window", { rate: 1000 }), count: 1000 }],
    ["an exact sliding window of rate 3000 over 3 shards", { config: configOf("sliding window", { rate: 3000, shards: 3 }) }],
    ["an approximate sliding window of rate 1e6", { config: configOf("approximate sliding window", { rate: 1e6 }) }],
  ];
  test.each(accepted)("%s", async (_, request) => {
    const t = makeT();
    for (const entry of ["check", "limit"] as const) {
      const result = await call(t, entry, request);
      expect(result).toMatchObject({ ok: expect.any(Boolean) });
    }
  });

  test("sampleShards above the shard count reads every shard", async () => {
    const t = makeT();
    const config = configOf("token bucket", { shards: 5 });
    const gv = await t.run((ctx) =>
      ctx.runQuery(api.lib.getValue, { name: NAME, key: KEY, config, sampleShards: 1e308, details: true }),
    );
    expect(gv).toMatchObject({ total: { value: 10, capacity: 10, exact: true } });
  });
});

// Wrong types never reach our validation: Convex's argument validators stop them. Nothing is written.
describe("values of the wrong type are stopped by the argument validators", () => {
  const good = { name: NAME, key: KEY, config: configOf("token bucket") };
  const wrong: [string, "rateLimit" | "checkRateLimit" | "getValue" | "resetRateLimit" | "clearAll", Record<string, unknown>][] = [
    ['rate: "10"', "rateLimit", { ...good, config: { ...good.config, rate: "10" } }],
    ['period: "60000"', "rateLimit", { ...good, config: { ...good.config, period: "60000" } }],
    ["capacity: null", "rateLimit", { ...good, config: { ...good.config, capacity: null } }],
    ['exact: "yes"', "rateLimit", { ...good, config: { ...configOf("sliding window"), exact: "yes" } }],
    ['shards: "2"', "checkRateLimit", { ...good, config: { ...good.config, shards: "2" } }],
    ["maxReserved: true", "rateLimit", { ...good, config: { ...good.config, maxReserved: true } }],
    ['a fixed window with start: "now"', "rateLimit", { ...good, config: { ...configOf("fixed window"), start: "now" } }],
    ["an unknown config field", "rateLimit", { ...good, config: { ...good.config, burst: 5 } }],
    ["no config", "rateLimit", { name: NAME, key: KEY }],
    ['count: "1"', "rateLimit", { ...good, count: "1" }],
    ["count: null", "checkRateLimit", { ...good, count: null }],
    ["name: 5", "rateLimit", { ...good, name: 5 }],
    ["key: 7", "rateLimit", { ...good, key: 7 }],
    ['reserve: "yes"', "rateLimit", { ...good, reserve: "yes" }],
    ["throws: 1", "rateLimit", { ...good, throws: 1 }],
    ["an unknown argument", "rateLimit", { ...good, shard: 3 }],
    ['sampleShards: "1"', "getValue", { ...good, sampleShards: "1" }],
    ["reset with name: 5", "resetRateLimit", { name: 5 }],
    ['clearAll with before: "now"', "clearAll", { before: "now" }],
  ];
  test.each(wrong)("%s (%s)", async (_, fn, args) => {
    const t = makeT();
    await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, good));
    const before = await rows(t);
    // Deliberately mistyped: this is what a JavaScript caller or a stale client could send.
    const e = await errorOf(
      t.run(async (ctx) => {
        switch (fn) {
          case "rateLimit":
          case "resetRateLimit":
          case "clearAll":
            return ctx.runMutation(api.lib[fn] as FunctionReference<"mutation", "internal">, args);
          case "checkRateLimit":
          case "getValue":
            return ctx.runQuery(api.lib[fn] as FunctionReference<"query", "internal">, args);
        }
      }),
    );
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(ConvexError);
    expect(String(e)).toMatch(/validator/i);
    expect(await rows(t)).toEqual(before);
  });

  // The functions take one object with every kind's fields, `kind` and `applyUpdates` as strings
  // (configArgValidator: unions checked member by member cost more than the decision), so a field
  // of another kind, or a kind or mode that doesn't exist, gets past Convex's validator; the flow
  // stops it, naming the field, before it reads or writes anything.
  const otherKinds: [string, Record<string, unknown>, string][] = [
    ['kind: "leaky bucket"', { ...configOf("token bucket"), kind: "leaky bucket" }, "config.kind"],
    ['applyUpdates: "later"', { ...configOf("token bucket"), applyUpdates: "later" }, "config.applyUpdates"],
    ["a token bucket with a start", { ...configOf("token bucket"), start: 5 }, "config.start"],
    ["a fixed window with start: null", { ...configOf("fixed window"), start: null }, "config.start"],
    ["a sliding window with start: null", { ...configOf("approximate sliding window"), start: null }, "config.start"],
    ["a token bucket with exact: true", { ...configOf("token bucket"), exact: true }, "config.exact"],
  ];
  test.each(otherKinds)("%s: an InvalidRateLimit error naming %s, nothing written", async (_, config, field) => {
    const t = makeT();
    await t.run((ctx) => ctx.runMutation(api.lib.rateLimit, good));
    const before = await rows(t);
    const args = { ...good, config };
    const data = [
      await convexErrorData(t.run((ctx) => ctx.runMutation(api.lib.rateLimit as FunctionReference<"mutation", "internal">, args))),
      await convexErrorData(t.run((ctx) => ctx.runQuery(api.lib.checkRateLimit as FunctionReference<"query", "internal">, args))),
      await convexErrorData(t.run((ctx) => ctx.runQuery(api.lib.getValue as FunctionReference<"query", "internal">, args))),
      await convexErrorData(t.run((ctx) => ctx.runMutation(api.lib.credit as FunctionReference<"mutation", "internal">, { ...args, count: 1 }))),
      await convexErrorData(t.run((ctx) => ctx.runMutation(api.lib.limitAll as FunctionReference<"mutation", "internal">, { requests: [{ name: NAME, key: KEY, config }] }))),
      await convexErrorData(t.run((ctx) => ctx.runQuery(api.lib.checkAll as FunctionReference<"query", "internal">, { requests: [{ name: NAME, key: KEY, config }] }))),
      // Twice in one limitAll: named as the config's field, not as two different configs.
      await convexErrorData(t.run((ctx) => ctx.runMutation(api.lib.limitAll as FunctionReference<"mutation", "internal">, { requests: [{ name: NAME, key: KEY, config: good.config }, { name: NAME, key: KEY, config }] }))),
      // Asynchronous: decided first on a stale snapshot, in a query of its own.
      await convexErrorData(t.run((ctx) => ctx.runMutation(api.lib.rateLimit as FunctionReference<"mutation", "internal">, { ...args, config: { applyUpdates: "asynchronously", ...config } }))),
    ];
    for (const d of data) expect(d).toMatchObject({ kind: "InvalidRateLimit", field });
    expect(await rows(t)).toEqual(before);
  });
});
