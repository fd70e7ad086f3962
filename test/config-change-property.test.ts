// Config changes under a live key, as a fast-check property of the rule in src/component/README.md
// ("Changing the config: the rule"): random histories of limit, check and throwing calls on one key
// (every kind: token bucket, fixed window, sliding window), with random config changes at random instants, run through
// the component's own flow (`requestFlow`) on the in-memory store of tools/memory-store.ts. After
// every change it checks the bound H + G(e, b) over every interval up to the next change; for every
// refusal, that the same request with the same draws is admitted at exactly `now + retryAfter` and
// not a millisecond before, whether the refused call's writes were kept or rolled back; and that a
// `check` answers as the call that follows it at the same instant with the same draws. Then the
// counterexamples it found, as plain tests. DEEP=1 runs many more histories; replay with FC_SEED
// (and FC_PATH) as printed on failure.
//
// Checked to catch (each reintroduced by hand in src/shared/shards/layout.ts, then restored), within a
// few runs each:
// - the old token-bucket carry-over, capping a raised bucket by what its own terms give by the
//   reader's `now` and stamping `now`: the retry check fails (a `retryAfter` is refused at the
//   retry);
// - `relayout` dropping a debt (a negative total split as 0s): the bound fails;
// - a fixed window carried over from its `ts` instead of the end of its own window: the bound fails.
import { fc, test } from "@fast-check/vitest";
import { ConvexError } from "convex/values";
import { describe, expect } from "vitest";
import type { KeyRow } from "../src/shared/flow/flow.js";
import { expandRow, resolvePhase, shardParams } from "../src/shared/shards/layout.js";
import { splitTotal } from "../src/shared/core/split.js";
import { validateConfig, validateCount } from "../src/shared/validation/validate.js";
import type { RateLimitArgs, RateLimitConfig, RateLimitResult } from "../src/shared/shapes/validators.js";
import { grant, owing } from "../tools/bounds.js";
import { MemoryStore } from "../tools/memory-store.js";
import { seededRandom, streamSeed } from "../tools/random.js";
import { recordTally, RUN_SHARE, runs, TIMEOUT } from "../tools/fast-check.js";


const TB = "token bucket" as const;
const FW = "fixed window" as const;
const SW = "sliding window" as const;
type Kind = typeof TB | typeof FW | typeof SW;
const T0 = 1_700_000_000_000;
const NAME = "limit";
/** Relative float slack for sums of fractional tokens. */
const EPS = 1e-9;

// ---------------------------------------------------------------------------------------------
// Configs and changes

/** A config's fields before validation (`shards` is lowered until the config is valid). */
type Draft = {
  kind: Kind;
  /** A sliding window's `exact` (the others ignore it). */
  exact: boolean;
  shards: number;
  rate: number;
  period: number;
  capacity: number | undefined;
  maxReserved: number | undefined;
  start: number | undefined;
};

const rateArb = fc.oneof(fc.integer({ min: 1, max: 12 }), fc.constantFrom(0.5, 10 / 3, 4.5));
// Small periods, so histories cross many windows; 2.5 puts window starts between whole ms.
const periodArb = fc.constantFrom(2.5, 7, 10, 60, 1000);
const capacityArb = fc.oneof(fc.constant(undefined), fc.constant(0), fc.integer({ min: 1, max: 24 }), fc.constant(7.5));
const maxReservedArb = fc.oneof(fc.constant(undefined), fc.constant(0), fc.integer({ min: 1, max: 10 }), fc.constant(2.5));
const startArb = fc.option(fc.integer({ min: -1000, max: 1000 }), { nil: undefined });

const draftArb: fc.Arbitrary<Draft> = fc.record({
  kind: fc.constantFrom<Kind>(TB, FW, SW),
  exact: fc.boolean(),
  shards: fc.integer({ min: 1, max: 4 }),
  rate: rateArb,
  period: periodArb,
  capacity: capacityArb,
  maxReserved: maxReservedArb,
  start: startArb,
});

/** One field of a config changed, as an operator edits it. */
type Tweak =
  | { field: "shards"; by: 1 | -1 }
  | { field: "kind" }
  | { field: "rate"; value: number }
  | { field: "period"; value: number }
  | { field: "start"; value: number | undefined }
  | { field: "capacity"; value: number | undefined }
  | { field: "maxReserved"; value: number | undefined };

const tweakArb: fc.Arbitrary<Tweak> = fc.oneof(
  fc.constantFrom<1 | -1>(1, -1).map((by): Tweak => ({ field: "shards", by })),
  fc.constant<Tweak>({ field: "kind" }),
  rateArb.map((value): Tweak => ({ field: "rate", value })),
  periodArb.map((value): Tweak => ({ field: "period", value })),
  startArb.map((value): Tweak => ({ field: "start", value })),
  capacityArb.map((value): Tweak => ({ field: "capacity", value })),
  maxReservedArb.map((value): Tweak => ({ field: "maxReserved", value })),
);

/** A change: one field (mostly), several at once, or a whole new config. */
type Change = { tweaks: Tweak[] } | { draft: Draft };

const changeArb: fc.Arbitrary<Change> = fc.oneof(
  { weight: 5, arbitrary: tweakArb.map((t): Change => ({ tweaks: [t] })) },
  { weight: 2, arbitrary: fc.array(tweakArb, { minLength: 2, maxLength: 4 }).map((tweaks): Change => ({ tweaks })) },
  { weight: 1, arbitrary: draftArb.map((draft): Change => ({ draft })) },
);

/** Whether validation accepts a config. */
function isValid(config: RateLimitConfig): boolean {
  try {
    validateConfig(config);
    return true;
  } catch {
    return false;
  }
}

/**
 * The config a draft describes, with `shards` lowered until validation accepts it (a shard needs
 * a whole token of rate and of a non-zero capacity). One shard is always valid.
 */
function configOf(d: Draft): RateLimitConfig {
  for (let shards = d.shards; ; shards--) {
    const common = {
      rate: d.rate,
      period: d.period,
      ...(d.capacity === undefined ? {} : { capacity: d.capacity }),
      ...(d.maxReserved === undefined ? {} : { maxReserved: d.maxReserved }),
      ...(shards === 1 ? {} : { shards }),
    };
    const start = d.start === undefined ? {} : { start: d.start };
    // A sliding window takes no capacity (it is its rate) and no maxReserved.
    const config: RateLimitConfig =
      d.kind === TB
        ? { kind: TB, ...common }
        : d.kind === FW
          ? { kind: FW, ...common, ...start }
          : d.exact
            ? { kind: SW, rate: d.rate, period: d.period, ...(shards === 1 ? {} : { shards }) }
            : { kind: SW, exact: false, rate: d.rate, period: d.period, ...(shards === 1 ? {} : { shards }), ...start };
    if (shards <= 1 || isValid(config)) return config;
  }
}

/** The draft a config came from (the inverse of {@link configOf} on a valid config). */
function draftOf(c: RateLimitConfig): Draft {
  return {
    kind: c.kind,
    exact: c.kind === SW && c.exact !== false,
    shards: c.shards ?? 1,
    rate: c.rate,
    period: c.period,
    capacity: c.capacity,
    maxReserved: c.maxReserved,
    start: c.kind === TB ? undefined : c.start,
  };
}

/** The config after `change` (valid: shards lowered as needed). */
function changed(config: RateLimitConfig, change: Change): RateLimitConfig {
  if ("draft" in change) return configOf(change.draft);
  const d = draftOf(config);
  for (const t of change.tweaks) {
    switch (t.field) {
      case "shards":
        d.shards = Math.min(4, Math.max(1, d.shards + t.by));
        break;
      case "kind":
        // Token bucket, fixed window, approximate sliding window, exact sliding window, and round.
        if (d.kind === SW && !d.exact) d.exact = true;
        else {
          d.kind = d.kind === TB ? FW : d.kind === FW ? SW : TB;
          d.exact = false;
        }
        break;
      case "rate":
      case "period":
      case "start":
      case "capacity":
      case "maxReserved":
        d[t.field] = t.value as never;
        break;
      default: {
        const never: never = t;
        throw new Error(`unknown tweak ${JSON.stringify(never)}`);
      }
    }
  }
  return configOf(d);
}

// ---------------------------------------------------------------------------------------------
// Histories

/** How many tokens a request asks for, relative to the config in force when it runs. */
type CountShape = "zero" | "one" | "half" | "two" | "quarter" | "most" | "all";

const countArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant<CountShape>("zero") },
  { weight: 6, arbitrary: fc.constant<CountShape>("one") },
  { weight: 1, arbitrary: fc.constant<CountShape>("half") },
  { weight: 2, arbitrary: fc.constant<CountShape>("two") },
  { weight: 2, arbitrary: fc.constant<CountShape>("quarter") },
  { weight: 2, arbitrary: fc.constant<CountShape>("most") },
  { weight: 1, arbitrary: fc.constant<CountShape>("all") },
);

/**
 * How long before a step (ms, whole): none, a few ms, a fraction of the period in force, a few
 * periods, or backwards (clock skew between servers).
 */
type Delay = { type: "zero" } | { type: "ms"; n: number } | { type: "periods"; x: number } | { type: "back"; x: number };

const delayArb: fc.Arbitrary<Delay> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Delay>({ type: "zero" }) },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }).map((n): Delay => ({ type: "ms", n })) },
  { weight: 5, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((x): Delay => ({ type: "periods", x })) },
  { weight: 1, arbitrary: fc.double({ min: 1, max: 4, noNaN: true }).map((x): Delay => ({ type: "periods", x })) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((x): Delay => ({ type: "back", x })) },
);

/**
 * A call: `limit` keeps whatever it writes (a refusal may write a migration); `throw` is a limit
 * with `throws: true`, which writes nothing when refused or reserved for later (its transaction
 * rolls back); `check` never writes.
 */
type Call = "limit" | "throw" | "check";

type Step =
  | { type: "call"; delay: Delay; call: Call; count: CountShape; reserve: boolean }
  | { type: "change"; delay: Delay; change: Change };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .record({
        delay: delayArb,
        call: fc.constantFrom<Call>("limit", "limit", "throw", "check"),
        count: countArb,
        reserve: fc.boolean(),
      })
      .map((s): Step => ({ type: "call", ...s })),
  },
  { weight: 1, arbitrary: fc.record({ delay: delayArb, change: changeArb }).map((s): Step => ({ type: "change", ...s })) },
);

type History = { initial: RateLimitConfig; key: string | undefined; seed: number; steps: Step[] };

const historyArb: fc.Arbitrary<History> = fc.record({
  initial: draftArb.map(configOf),
  key: fc.option(fc.constantFrom("a", "user:42"), { nil: undefined }),
  seed: fc.integer(),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 60, size: "max" }),
});

/** The delay in ms (whole) under the config in force. */
function msOf(delay: Delay, config: RateLimitConfig): number {
  switch (delay.type) {
    case "zero":
      return 0;
    case "ms":
      return delay.n;
    case "periods":
      return Math.round(delay.x * config.period);
    case "back":
      return -1 - Math.round(delay.x * config.period);
    default: {
      const never: never = delay;
      throw new Error(`unknown delay ${JSON.stringify(never)}`);
    }
  }
}

/** Whether validation accepts `count` for a config. */
function countValid(count: number, config: RateLimitConfig, reserve: boolean): boolean {
  try {
    validateCount(count, config, reserve);
    return true;
  } catch {
    return false;
  }
}

/**
 * The count a shape asks for under a config: the shape's target, lowered by quarters until
 * validation accepts it (down to 1, then 0.5); undefined when no positive count is valid (capacity
 * 0 without `reserve`).
 */
function countOf(shape: CountShape, config: RateLimitConfig, reserve: boolean): number | undefined {
  const cap = config.capacity ?? config.rate;
  const reserved = reserve ? Math.min(config.maxReserved ?? 2 * config.rate, 4 * config.rate) : 0;
  const target = {
    zero: 0,
    one: 1,
    half: 0.5,
    two: 2,
    quarter: Math.ceil(cap / 4),
    most: Math.ceil((3 * cap) / 4),
    all: cap + reserved,
  }[shape];
  for (let c = target; c >= 1; c = Math.floor((3 * c) / 4)) if (countValid(c, config, reserve)) return c;
  if (target === 0) return 0;
  return countValid(0.5, config, reserve) ? 0.5 : undefined;
}

// ---------------------------------------------------------------------------------------------
// The bound

/**
 * What a key held at a change, for its bound: per stored shard of the old layout, its value and
 * the instant its promise ends (a token bucket row's `ts`; a fixed window row's `ts` plus its own
 * recorded period), and the part of the new config's rate that refills it from then (the new rate
 * split over the old shard count, as `relayout` carries it over; the parts add up to the whole
 * rate, so this is G(e, b) taken shard by shard, tighter than from the earliest promise end). A key
 * with no rows is new: it meets the new config as a full key (as a deleted, idle key does; see
 * "State" in the README), granted from the first instant it is used.
 */
type Held =
  | { fresh: true; capacity: number }
  | { fresh: false; sharded: boolean; parts: { value: number; ends: number; rate: number }[] };

/** The bound's starting point for a key whose rows are `rows` when the config becomes `config`. */
function heldAt(rows: readonly KeyRow<number>[], config: RateLimitConfig, writer: RateLimitConfig, phase: number): Held {
  if (rows.length === 0) return { fresh: true, capacity: config.capacity ?? config.rate };
  const n = rows.find((r) => r.shards !== undefined)?.shards ?? 1;
  const ends = (row: KeyRow<number>) => (row.kind === FW ? row.ts + row.period! : row.ts);
  // A missing shard (none once a key exists: its first write creates every shard) is a full one of
  // the layout that wrote the rows, refilled, at the most, from the earliest promise end.
  const earliest = Math.min(...rows.map(ends));
  const parts = Array.from({ length: n }, (_, i) => {
    const rate = splitTotal(config.rate, n, i);
    const row = rows.find((r) => r.shard === i);
    if (!row) return { value: splitTotal(writer.capacity ?? writer.rate, n, i), ends: earliest, rate };
    // A sliding window row's previous window still slides out, giving back up to `prev`.
    // An exact window's row owing (its log holding more than a lowered rate) is not repaid at the
    // rate: its takes leave a period after they were taken, the most it can hold then is the new
    // rate, and G already counts a whole window from the start; so it holds at least nothing.
    const exact = config.kind === SW && config.exact !== false;
    // Carried over only when its terms changed (a change of shard count alone splits it as it is).
    const carried = row.terms !== shardParams({ ...config, shards: n }, phase, i).terms;
    const owed = carried ? owing(row, config, phase, rate, splitTotal(config.capacity ?? config.rate, n, i)) : undefined;
    if (owed) return { ...owed, rate };
    return { value: exact ? Math.max(0, row.value) : row.value + (row.prev ?? 0), ends: ends(row), rate };
  });
  return { fresh: false, sharded: n > 1, parts };
}

/**
 * An admission: `tokens` counted at `at` (ms): the instant the state it was decided on had been
 * evaluated to or, for work reserved for later, the instant the work runs (its debt repaid);
 * `made` is when it was decided.
 */
type Admission = { tokens: number; at: number; made: number };

/**
 * H + G(e, b): what the key held plus what the new config grants from each shard's promise end
 * (a fixed window starting exactly there opens), or, for a new key, its capacity plus what the
 * config grants after the first instant it was used (`first`).
 *
 * Work reserved whose debt is still being repaid at b (`reserved`, counted at the instant it runs:
 * any made before the change, and those made since by b; the first `before` are the former) is
 * added back on a sharded key: a sharded key repays a
 * debt shard by shard,
 * and its other shards serve meanwhile, so its sum can be below what it admits until the reserved
 * work runs. That is sharding, with or without a change, and is how test/properties.test.ts counts
 * reserved work too (intervals starting while reserved work waits are left out there).
 */
function boundAt(
  held: Held,
  config: RateLimitConfig,
  phase: number,
  first: number,
  reserved: readonly Admission[],
  before: number,
  b: number,
): number {
  if (held.fresh) return held.capacity + grant(config, phase, config.rate, first, b, false);
  // Reserved before the change: waiting while it hasn't run. Reserved since: once decided, by b.
  const waits = (a: Admission, i: number) => a.at > b && (i < before || a.made <= b);
  const waiting = held.sharded ? reserved.reduce((sum, a, i) => sum + (waits(a, i) ? a.tokens : 0), 0) : 0;
  return held.parts.reduce((sum, part) => sum + part.value + grant(config, phase, part.rate, part.ends, b, true), waiting);
}

/** Tally over every run, so the properties are seen not to be vacuous. */
const tally = {
  intervals: 0,
  /** Intervals after a change in which the admissions came within one token of the bound. */
  tight: 0,
  retriedKept: 0,
  retriedRolledBack: 0,
  agreed: 0,
};
recordTally("config change", tally);

/** One interval between changes: the config in force from its start, and what it admitted. */
type Interval = {
  config: RateLimitConfig;
  held: Held;
  /** Work reserved so far, live (see {@link boundAt}); the first `reservedBefore` before the interval. */
  reserved: Admission[];
  reservedBefore: number;
  /** The earliest instant a request ran at in the interval. */
  first: number;
  admitted: Admission[];
  label: string;
};

/**
 * Checks the bound over one interval between changes: for every b, the tokens admitted at
 * instants up to b are at most H + G(e, b) (see {@link boundAt}), up to float slack. Between two
 * admissions' instants the admitted sum is constant and the bound doesn't decrease, so checking
 * at each admission's instant checks every b.
 */
function checkInterval(interval: Interval, phase: number): void {
  const { held, config, first, reserved, admitted, label } = interval;
  if (admitted.length === 0) return;
  tally.intervals += 1;
  const sorted = [...admitted].sort((a, b) => a.at - b.at);
  let sum = 0;
  let closest = -Infinity;
  for (let i = 0; i < sorted.length; i++) {
    sum += sorted[i]!.tokens;
    if (i + 1 < sorted.length && sorted[i + 1]!.at === sorted[i]!.at) continue;
    const b = sorted[i]!.at;
    const bound = boundAt(held, config, phase, first, reserved, interval.reservedBefore, b);
    closest = Math.max(closest, sum - bound);
    if (sum > bound + EPS * Math.max(1, Math.abs(bound))) {
      expect.fail(`${label}: ${sum} admitted up to ${b - T0} (ms after T0) exceeds H + G = ${bound} (${JSON.stringify(held)})`);
    }
  }
  if (!held.fresh && closest > -1) tally.tight += 1;
}

// ---------------------------------------------------------------------------------------------
// Running a history

/** What a call answered: its result, or, when it threw `RateLimited`, the wait it named. */
type Answer = { result: Pick<RateLimitResult, "ok" | "retryAfter"> } | { thrown: number };

/** Runs one request on the store (`check` when `write` is false), returning its answer. */
function answer(store: MemoryStore, args: RateLimitArgs, now: number, draws: () => number, write: boolean): Answer {
  try {
    const { ok, retryAfter } = write ? store.limit(args, now, draws) : store.check(args, now, draws);
    return { result: retryAfter === undefined ? { ok } : { ok, retryAfter } };
  } catch (error) {
    if (error instanceof ConvexError) {
      const data: unknown = error.data;
      if (typeof data === "object" && data !== null && "kind" in data && data.kind === "RateLimited") {
        if ("retryAfter" in data && typeof data.retryAfter === "number") return { thrown: data.retryAfter };
      }
    }
    throw error;
  }
}



/**
 * Runs a history and checks, at each step and after each change, the three properties (see the
 * top of the file).
 */
function run(h: History): void {
  const store = new MemoryStore();
  const at = { name: NAME, ...(h.key === undefined ? {} : { key: h.key }) };
  let config = h.initial;
  let writer = config;
  let now = T0;
  /** Work reserved so far, counted at the instant it runs. */
  const reserved: Admission[] = [];
  const open = (next: RateLimitConfig, label: string): Interval => {
    // Compact rows carry only the fingerprint of the terms they were written under: the writer's.
    const rows = store.read(at).rows.map((r) => expandRow(r, writer, resolvePhase(writer, at.name, at.key)));
    return {
      config: next,
      held: heldAt(rows, next, writer, resolvePhase(next, at.name, at.key)),
      // Live: reservations made during the interval count too (see boundAt).
      reserved,
      reservedBefore: reserved.length,
      first: Infinity,
      admitted: [],
      label,
    };
  };
  let interval = open(config, "initial config");

  h.steps.forEach((step, i) => {
    now += msOf(step.delay, config);
    if (step.type === "change") {
      checkInterval(interval, resolvePhase(config, NAME, h.key));
      const next = changed(config, step.change);
      interval = open(next, `step ${i}: ${JSON.stringify(config)} → ${JSON.stringify(next)} at ${now - T0}`);
      config = next;
      return;
    }
    // A sliding window refuses `reserve` (validation.test.ts checks that).
    const reserve = step.reserve && step.count !== "zero" && config.kind !== SW;
    const count = countOf(step.count, config, reserve);
    if (count === undefined) return;
    const args: RateLimitArgs = { ...at, config, count, reserve };
    // Every call of this step, and its retries, see the same draws: they read the same shards.
    const draws = () => seededRandom(streamSeed(h.seed, `step ${i}`));
    const before = store.read(at).rows;
    interval.first = Math.min(interval.first, now);

    // Every read agrees: a check at the same instant with the same draws answers as the call does.
    const check = answer(store, args, now, draws(), false);
    if (!("result" in check)) throw new Error("a check never throws RateLimited");
    const call = step.call === "check" ? check : answer(store, { ...args, throws: step.call === "throw" }, now, draws(), true);
    if ("result" in call) expect(call.result, `step ${i}: check and ${step.call} disagree`).toEqual(check.result);
    else expect(call.thrown, `step ${i}: check and throwing limit disagree`).toBe(check.result.retryAfter);
    tally.agreed += 1;
    if (JSON.stringify(store.read(at).rows) !== JSON.stringify(before)) writer = config;

    const { ok, retryAfter } = check.result;
    if (ok && count > 0 && "result" in call && step.call !== "check") {
      // Counted at the instant the state was evaluated to: the reader's clock, or a row's later
      // `ts` when the clock went back. Work reserved for later counts when it runs.
      const evaluated = Math.max(now, ...before.map((r) => r.ts));
      const admission = { tokens: count, at: retryAfter === undefined ? evaluated : Math.max(evaluated, now + retryAfter), made: evaluated };
      interval.admitted.push(admission);
      if (retryAfter !== undefined) reserved.push(admission);
    }
    const kept = step.call === "limit";
    if (!ok && count > 0) {
      // The same request retried at exactly now + retryAfter, with no other traffic in between and
      // the same draws, succeeds; a millisecond earlier it doesn't. On a sharded limit the wait is
      // promised for the shards read (`planTwo`: when the same pair could serve it); the same draws
      // read the same pair. Retries are checks, which answer as a limit at that instant would
      // (every read agrees, checked at each step). After a `limit` the refusal's writes (a
      // carry-over) are kept; after a throw or a check nothing was written.
      const r = retryAfter!;
      const retry = answer(store, args, now + r, draws(), false);
      const how = kept ? "its writes kept" : "nothing written";
      expect("result" in retry && retry.result.ok, `step ${i}: refused (${how}) with retryAfter ${r}, refused again at the retry`).toBe(true);
      if (r > 1) {
        const early = answer(store, args, now + r - 1, draws(), false);
        expect("result" in early && early.result.ok, `step ${i}: refused (${how}) with retryAfter ${r}, admitted 1 ms before`).toBe(false);
      }
      if (kept) tally.retriedKept += 1;
      else tally.retriedRolledBack += 1;
    }
  });
  checkInterval(interval, resolvePhase(config, NAME, h.key));
}

describe("the rule for config changes, over random histories with random changes", () => {
  test.prop([historyArb], runs(300, 30_000))(
    "admitted ≤ H + G(e, b) after every change; every refusal's retryAfter holds; every read agrees",
    (h) => run(h),
    TIMEOUT,
  );

  test("and the histories above reach the bound, retry refusals both ways and compare reads (not vacuous)", () => {
    // Over 24 runs of the suite (npm run test:tallies), mean ± sd: 642 ± 17 intervals, 91 ± 10 of
    // them within a token of the bound after a change, 1560 ± 90 refusals retried each way, 7430 ±
    // 240 calls compared with their check. Each threshold is at least 5 sd below its mean.
    expect(tally.intervals).toBeGreaterThan(300 * RUN_SHARE);
    expect(tally.tight).toBeGreaterThan(40 * RUN_SHARE);
    expect(tally.retriedKept).toBeGreaterThan(500 * RUN_SHARE);
    expect(tally.retriedRolledBack).toBeGreaterThan(500 * RUN_SHARE);
    expect(tally.agreed).toBeGreaterThan(4000 * RUN_SHARE);
  });
});

// ---------------------------------------------------------------------------------------------
// Counterexamples the property found, shrunk, so they replay without a seed. The first six failed
// while `relayout` took the old rows' total at the reader's `now` (fixed: it now takes it at the
// latest instant a row was written at, so a carry-over is a function of the stored rows alone).

describe("counterexamples the property found, replayed", () => {
  // Found by DEEP=1 while relayout counted a fixed window's carried-over rows at their states'
  // window starts (after a change of phase, the start of the window a promise ends in, later than
  // the row's own stamp): evaluated there, the other shard opened that window for a reader at 3 ms.
  test("2 shards of 2.5 ms windows, a change of phase: nothing opens before its window", () => {
    run({
      initial: { kind: "fixed window", rate: 4.5, period: 2.5, capacity: 2, maxReserved: 0, shards: 2 },
      key: undefined,
      seed: 0,
      steps: [
        { type: "call", delay: { type: "periods", x: 0 }, call: "limit", count: "most", reserve: false },
        { type: "call", delay: { type: "ms", n: 3 }, call: "limit", count: "one", reserve: false },
        { type: "change", delay: { type: "zero" }, change: { tweaks: [{ field: "start", value: -73 }] } },
        { type: "call", delay: { type: "zero" }, call: "limit", count: "one", reserve: false },
      ],
    } as History);
  });
});

describe("counterexamples (fixed rows and instants)", () => {
  const MINUTE = 60_000;
  const HOUR = 60 * MINUTE;
  const T = Date.UTC(2025, 0, 1, 12, 0, 0, 0);
  const at = { name: NAME, key: "k" };

  test("shards 2 → 1: a check's retryAfter holds at the retry though nothing wrote the carry-over", () => {
    const store = new MemoryStore();
    const two: RateLimitConfig = { kind: TB, rate: 10, period: MINUTE, shards: 2 };
    const one: RateLimitConfig = { kind: TB, rate: 10, period: MINUTE };
    // Draws of 0.75 pick shard 1 first: it gives its 5; shard 0 stays full (5).
    expect(store.limit({ ...at, config: two, count: 5 }, T, () => 0.75)).toEqual({ ok: true });
    // Under one shard the key holds 5 and gains 10 a minute: 8 in 18 s.
    const request = { ...at, config: one, count: 8 };
    expect(store.check(request, T, () => 0)).toEqual({ ok: false, retryAfter: 18_000 });
    // (Read at 12:00:18 instead, the old shard 0 had been full all along and wasted its refill: 6.5.)
    expect(store.check(request, T + 18_000 - 1, () => 0).ok).toBe(false);
    expect(store.check(request, T + 18_000, () => 0)).toEqual({ ok: true });
  });

  test("a fixed window whose capacity changed opens the window starting where its promise ends, whenever it is read", () => {
    const store = new MemoryStore();
    const before: RateLimitConfig = { kind: FW, rate: 10, period: HOUR, start: 0 };
    const after: RateLimitConfig = { ...before, capacity: 20 };
    expect(store.limit({ ...at, config: before, count: 10 }, T + 10 * MINUTE, () => 0)).toEqual({ ok: true });
    // The old window's promise ends at 13:00, where a new window starts: it opens for a reader at
    // 13:00 and for one at 13:30 (which used to count only windows after 13:00).
    expect(store.check({ ...at, config: after }, T + HOUR - 1, () => 0).ok).toBe(false);
    expect(store.check({ ...at, config: after, count: 10 }, T + HOUR, () => 0)).toEqual({ ok: true });
    expect(store.check({ ...at, config: after, count: 10 }, T + 90 * MINUTE, () => 0)).toEqual({ ok: true });
  });

  test("the same: a check at 12:30 asking for two windows is told 14:00, and admitted then", () => {
    const store = new MemoryStore();
    const before: RateLimitConfig = { kind: FW, rate: 10, period: HOUR, start: 0 };
    const after: RateLimitConfig = { ...before, capacity: 20 };
    store.limit({ ...at, config: before, count: 10 }, T + 10 * MINUTE, () => 0);
    const request = { ...at, config: after, count: 20 };
    expect(store.check(request, T + 30 * MINUTE, () => 0)).toEqual({ ok: false, retryAfter: 90 * MINUTE });
    expect(store.check(request, T + 2 * HOUR, () => 0)).toEqual({ ok: true });
  });

  test("token bucket → fixed window of 2.5 ms: a window starting before the promise ends doesn't open", () => {
    const store = new MemoryStore();
    const bucket: RateLimitConfig = { kind: TB, rate: 1, period: 2.5 };
    // Windows of 2.5 ms from T (a multiple of 2.5): …, T + 2.5, T + 5, …
    const window: RateLimitConfig = { kind: FW, rate: 1, period: 2.5, start: 0 };
    expect(store.limit({ ...at, config: bucket }, T + 3, () => 0)).toEqual({ ok: true });
    // The bucket's promise ends at its last update, T + 3: the window of T + 2.5 began before it,
    // so the first the new config grants is the window of T + 5. (It used to be granted at T + 3:
    // the new rows were stamped at the window containing T + 2, so T + 2.5 counted as crossed.)
    expect(store.check({ ...at, config: window }, T + 3, () => 0)).toEqual({ ok: false, retryAfter: 2 });
  });

  test("two shards whose promises end an hour apart, read at the later end: that window opens once", () => {
    const store = new MemoryStore();
    const hourly: RateLimitConfig = { kind: FW, rate: 2, period: HOUR, start: 0, shards: 2 };
    // Windows of 40 minutes starting at 13:00 (…, 11:40, 12:20, 13:00, 13:40, …), capacity 20.
    const windows: RateLimitConfig = { kind: FW, rate: 2, period: 40 * MINUTE, start: T + HOUR, capacity: 20 };
    // 11:10: both shards emptied (windows of 11:00). 12:10: shard 0 refilled and emptied again.
    expect(store.limit({ ...at, config: hourly, count: 2 }, T - 50 * MINUTE, () => 0)).toEqual({ ok: true });
    expect(store.limit({ ...at, config: hourly, count: 1 }, T + 10 * MINUTE, () => 0)).toEqual({ ok: true });
    // Shard 1's promise ends at 12:00, then its half of the new rate may refill it at 12:20 and
    // 13:00; shard 0's ends at 13:00, where a window starts: at 13:00 the key holds at most 3.
    // (It held 4: shard 1 was refilled through 13:00, and the new rows, stamped at 12:20, again at
    // 13:00. It now holds 2: the new rows have one stamp, so shard 1 gains nothing before 13:00.)
    expect(store.check({ ...at, config: windows, count: 4 }, T + HOUR, () => 0).ok).toBe(false);
    expect(store.check({ ...at, config: windows, count: 2 }, T + HOUR, () => 0)).toEqual({ ok: true });
  });

  test("fixed window → token bucket of a third of a token a ms: the retry isn't lost to float rounding", () => {
    const store = new MemoryStore();
    const window: RateLimitConfig = { kind: FW, rate: 10 / 3, period: 10, start: 0 };
    const bucket: RateLimitConfig = { kind: TB, rate: 10 / 3, period: 10 };
    // A row as reservations leave it (`minus` snaps to 12 digits): 9.666666666667 owed, window of T.
    const fields = { value: -9.666666666667, ts: T, shards: 1, kind: FW, rate: 10 / 3, period: 10, capacity: 10 / 3 };
    store.plant(at, [{ shard: 0, ...fields }]);
    // Refilled from T + 10 (the window's end): a token at T + 42, give or take the float hair the
    // snapped debt is off by a third.
    const request = { ...at, config: bucket };
    const refused = store.check(request, T + 18, () => 0);
    expect(refused.ok).toBe(false);
    const r = refused.retryAfter!;
    expect(r === 24 || r === 25).toBe(true);
    // (It was 24, and at T + 42 refused again: taken from the row at T + 42, the refill from T + 10
    // fell a hair short of the one from T + 18, as each reader re-based the carry-over at its own
    // instant.)
    expect(store.check(request, T + 18 + r - 1, () => 0).ok).toBe(false);
    expect(store.check(request, T + 18 + r, () => 0)).toEqual({ ok: true });
  });

  // Rows recorded only their own shard's terms, so a request reading only unchanged shards used
  // them as they were while one reading a changed shard carried the key over. Rows now record the
  // whole limit's terms (`terms`), so the first row read shows the change.
  test("a change that leaves one shard's own terms as they were: the same request agrees with itself later", () => {
    const store = new MemoryStore();
    const three: RateLimitConfig = { kind: TB, rate: 3, period: MINUTE, maxReserved: 6, shards: 2 };
    // Rate 4 over 2 shards is 2 + 2: shard 0's share (2 a minute, capacity 2) is what it was.
    const four: RateLimitConfig = { ...three, rate: 4 };
    // Rows as `limit` writes them: shard 0 holds 0.5 of its 2, shard 1 owes 3 (reserved).
    const row = (shard: number, value: number, share: number) => ({
      shard,
      ...{ value, ts: T, shards: 2, kind: TB, rate: share, period: MINUTE, capacity: share, terms: shardParams(three, 0, shard).terms! },
    });
    store.plant(at, [row(0, 0.5, 2), row(1, -3, 1)]);
    // Draws of 0 read shard 0 first, then shard 1, which carries the key over. Shard 1's debt of 3
    // is work its own 1 a minute repays in 3 minutes; its new share, 2 a minute, repays it then
    // too: a debt of 6. So the key holds 0.5 - 6 = -5.5, and gains 4 a minute: a pair of shards
    // can serve 1 in 97.5 s (the old rule, repaying the debt of 3 at the new share, said 52.5 s,
    // bringing the reserved work's tokens back before it ran).
    const request = { ...at, config: four };
    expect(store.check(request, T, () => 0)).toEqual({ ok: false, retryAfter: 97_500 });
    // At 45 s shard 0 alone (read as it is: its terms didn't change) has 2 and serves the request
    // without reading shard 1.
    expect(store.check(request, T + 45_000, () => 0).ok).toBe(false);
  });
});
