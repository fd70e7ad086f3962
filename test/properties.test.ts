// Property tests (fast-check) of the whole request flow: random configs (every kind, sharded or
// not, applied transactionally or asynchronously) and random sequences of limit, check, reset,
// shard-count changes and applier runs, with seeded draws, run through `requestFlow` over the
// in-memory store of tools/memory-store.ts (its lookups, writes, pending takes and layout
// migrations, as the component runs them); each shard's state is observed through `getValue`.
// DEEP=1 runs many more (npm run test:deep); replay with FC_SEED (and FC_PATH) as printed on failure.
import { fc, test } from "@fast-check/vitest";
import { ConvexError } from "convex/values";
import { describe, expect } from "vitest";
import { DAY, HOUR, MINUTE, SECOND, evaluate, phaseOf, stateOf, windowIndex, windowStart, type State } from "../src/shared/kinds/algebra.js";
import { requestFlow, type KeyRead, type RequestOutcome, type RowQuery } from "../src/shared/flow/flow.js";
import { configTerms, resolvePhase, shardParams, termsHash } from "../src/shared/shards/layout.js";
import type { Plan } from "../src/shared/shards/plan.js";
import { READ_ON_SHARDS } from "../src/shared/shards/overload.js";
import { answerRead, runPlan, type KeyInMemory } from "../src/shared/shapes/rows.js";
import { smallestPair, splitTotal } from "../src/shared/core/split.js";
import { validateConfig, validateCount } from "../src/shared/validation/validate.js";
import type { RateLimitArgs, RateLimitConfig } from "../src/shared/shapes/validators.js";
import { MemoryStore } from "../tools/memory-store.js";
import { seededRandom } from "../tools/random.js";
import { runs, TIMEOUT } from "../tools/fast-check.js";

const TB = "token bucket" as const;
const FW = "fixed window" as const;
const SW = "sliding window" as const;
/** Today's clock, and one near 0, where window starts of a period like 1000/3 ms fall between floats. */
const CLOCKS = [1_700_000_000_000, 2 * SECOND] as const;
const T0 = CLOCKS[0];
const NAME = "limit";
/** Float slack for sums of fractional tokens. */
const EPS = 1e-9;

/**
 * A known bug the scenarios step around, a `test.fails` in test/whole-flow.test.ts; run with
 * KNOWN_BUGS=1 to watch the properties find it (within a few thousand runs): a debt carried over
 * to another shard count is split in proportion to the shards' rates, past the share of
 * maxReserved some shards may owe, so reservations can then take the whole limit past
 * maxReserved. Stepped around by not checking the whole limit's debt until a debt carried over is
 * repaid.
 *
 * Two more were found here and are fixed: asynchronous mode recorded a take at the request's own
 * clock when it was behind the row's (the fold then refilled in between), and folded a take with
 * plain `-` where the decision used `minus` (a retryAfter then missed by float noise).
 */
const STEP_AROUND_KNOWN_BUGS = (process.env.KNOWN_BUGS ?? "") === "";

// ---------------------------------------------------------------------------------------------
// Arbitraries

const configArb: fc.Arbitrary<RateLimitConfig> = fc
  .record({
    kind: fc.constantFrom(TB, FW, SW),
    shards: fc.constantFrom(1, 1, 2, 3, 10),
    rate: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.constantFrom(0.7, 1 / 3, 10 / 3, 2.5, 12.25)),
    period: fc.constantFrom(SECOND, MINUTE, HOUR, 7, 2.5, SECOND / 3),
    capacity: fc.oneof(
      fc.constant(undefined),
      fc.constant(0),
      fc.integer({ min: 1, max: 80 }),
      fc.constantFrom(7.5, 1 / 3),
    ),
    maxReserved: fc.oneof(fc.constant(undefined), fc.constant(0), fc.integer({ min: 1, max: 30 }), fc.constant(2.5)),
    start: fc.option(fc.integer({ min: -DAY, max: DAY }), { nil: undefined }),
    async: fc.boolean(),
  })
  .map(({ kind, shards, rate, period, capacity, maxReserved, start, async }): RateLimitConfig => {
    // Validation wants a whole token of rate (and of a non-zero capacity) per shard.
    const r = Math.floor(rate) < shards ? rate + shards : rate;
    const c = capacity !== undefined && capacity > 0 && Math.floor(capacity) < shards ? capacity + shards : capacity;
    const common = {
      rate: r,
      period,
      ...(c === undefined ? {} : { capacity: c }),
      ...(maxReserved === undefined ? {} : { maxReserved }),
      ...(shards === 1 ? {} : { shards }),
      ...(async ? { applyUpdates: "asynchronously" as const } : {}),
    };
    if (kind === SW) {
      // A sliding window has no reservations, and its capacity is its rate. With a start it is the
      // approximate one (an exact one has no windows to align); without, exact or not by the
      // rate's parity, so both are drawn.
      const { capacity: _c, maxReserved: _m, ...rest } = common;
      if (start !== undefined) return { kind: SW, exact: false, ...rest, start };
      return Math.floor(r) % 2 === 0 ? { kind: SW, exact: false, ...rest } : { kind: SW, ...rest };
    }
    return kind === TB
      ? { kind: TB, ...common }
      : { kind: FW, ...common, ...(start === undefined ? {} : { start }) };
  });

type Step =
  | { type: "zero" }
  | { type: "ms"; n: number }
  | { type: "tokens"; x: number } // x token-intervals (period / rate)
  | { type: "periods"; x: number }
  | { type: "back"; x: number } // x periods backwards, at least 1 ms
  | { type: "retry"; off: 0 | -1 }; // exactly the last retryAfter (or 1 ms before it)

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ type: "zero" }),
  fc.integer({ min: 1, max: 20 }).map((n): Step => ({ type: "ms", n })),
  fc.double({ min: 0, max: 3, noNaN: true }).map((x): Step => ({ type: "tokens", x })),
  fc.double({ min: 0, max: 3, noNaN: true }).map((x): Step => ({ type: "periods", x })),
  fc.double({ min: 0, max: 1, noNaN: true }).map((x): Step => ({ type: "back", x })),
  fc.constantFrom<0 | -1>(0, -1).map((off): Step => ({ type: "retry", off })),
);

type CountShape =
  | { type: "zero" }
  | { type: "one" }
  | { type: "small"; n: number }
  | { type: "frac"; u: number }
  | { type: "max" }
  | { type: "over" };

const countArb: fc.Arbitrary<CountShape> = fc.oneof(
  { arbitrary: fc.constant<CountShape>({ type: "zero" }), weight: 1 },
  { arbitrary: fc.constant<CountShape>({ type: "one" }), weight: 4 },
  { arbitrary: fc.integer({ min: 1, max: 5 }).map((n): CountShape => ({ type: "small", n })), weight: 2 },
  { arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((u): CountShape => ({ type: "frac", u })), weight: 2 },
  { arbitrary: fc.constant<CountShape>({ type: "max" }), weight: 1 },
  { arbitrary: fc.constant<CountShape>({ type: "over" }), weight: 1 },
);

/**
 * One step: `limit` decides and writes; `check` decides without writing; `reset` deletes the key;
 * `reshard` changes the shard count to `shards` (or the largest valid count below it), which
 * the next read carries over (layout migration); `apply` runs the applier (asynchronous mode).
 */
type Op = {
  action: "limit" | "check" | "reset" | "reshard" | "apply";
  step: Step;
  count: CountShape;
  reserve: boolean;
  shards: number;
};

const opArb: fc.Arbitrary<Op> = fc.record({
  action: fc.oneof(
    { arbitrary: fc.constant("limit" as const), weight: 8 },
    { arbitrary: fc.constant("check" as const), weight: 2 },
    { arbitrary: fc.constant("reset" as const), weight: 1 },
    { arbitrary: fc.constant("reshard" as const), weight: 1 },
    { arbitrary: fc.constant("apply" as const), weight: 1 },
  ),
  step: stepArb,
  count: countArb,
  reserve: fc.boolean(),
  shards: fc.constantFrom(1, 2, 3, 10),
});

type Scenario = {
  config: RateLimitConfig;
  key: string | undefined;
  /** Whether requests may reserve (each op then chooses). */
  reserve: boolean;
  /** Whether the clock may jump backwards. */
  backwards: boolean;
  seed: number;
  /** The clock's first reading (ms). */
  t0: number;
  ops: Op[];
};

function scenarioArb(opts: { backwards: boolean | "any"; reserve: boolean | "any" }): fc.Arbitrary<Scenario> {
  return fc.record({
    config: configArb,
    key: fc.option(fc.constantFrom("a", "user:42", ""), { nil: undefined }),
    reserve: opts.reserve === "any" ? fc.boolean() : fc.constant(opts.reserve),
    backwards: opts.backwards === "any" ? fc.boolean() : fc.constant(opts.backwards),
    seed: fc.integer(),
    t0: fc.constantFrom(...CLOCKS),
    ops: fc.array(opArb, { minLength: 1, maxLength: 40 }),
  });
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** The largest count validation should accept, computed by brute force over every shard pair. */
function maxCount(config: RateLimitConfig, reserve: boolean): number {
  const n = config.shards ?? 1;
  const cap = config.capacity ?? config.rate;
  if (!reserve) return smallestPair(cap, n);
  const mr = config.maxReserved ?? Infinity;
  if (n === 1) return cap + mr;
  let least = Infinity;
  const part = (i: number) => splitTotal(cap, n, i) + splitTotal(mr, n, i);
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) least = Math.min(least, part(i) + part(j));
  return least;
}

function countOf(shape: CountShape, config: RateLimitConfig, reserve: boolean): number {
  const max = maxCount(config, reserve);
  const cap = config.capacity ?? config.rate;
  const finiteMax = Number.isFinite(max) ? max : cap + 3 * config.rate;
  switch (shape.type) {
    case "zero":
      return 0;
    case "one":
      return 1;
    case "small":
      return shape.n;
    case "frac":
      return shape.u * finiteMax;
    case "max":
      return finiteMax;
    case "over":
      return Number.isFinite(max) ? max + 1 : cap + 20 * config.rate;
    default: {
      const never: never = shape;
      throw new Error(`unknown count ${JSON.stringify(never)}`);
    }
  }
}

function stepOf(step: Step, config: RateLimitConfig, lastRetry: number | undefined): number {
  switch (step.type) {
    case "zero":
      return 0;
    case "ms":
      return step.n;
    case "tokens":
      return Math.round((step.x * config.period) / config.rate);
    case "periods":
      return Math.round(step.x * config.period);
    case "back":
      return -1 - Math.round(step.x * config.period);
    case "retry":
      return lastRetry === undefined ? 0 : lastRetry + step.off;
    default: {
      const never: never = step;
      throw new Error(`unknown step ${JSON.stringify(never)}`);
    }
  }
}

/** A random source that replays fixed draws (the same draws for `check` and `limit`). */
function replay(draws: number[]): () => number {
  let i = 0;
  return () => {
    const r = draws[i++];
    if (r === undefined) throw new Error(`the planner drew more than ${draws.length} random numbers`);
    return r;
  };
}

function isInvalidCount(e: unknown): boolean {
  if (!(e instanceof ConvexError)) return false;
  const data: unknown = e.data;
  return typeof data === "object" && data !== null && "kind" in data && "field" in data &&
    data.kind === "InvalidRateLimit" && data.field === "count";
}

/**
 * Whether validation accepts `count`, checking that it agrees with the brute-force maximum up to
 * float rounding (validation decides with the planner's own float test on full shards, so right
 * at the maximum either answer may be the exact one).
 */
function validates(count: number, config: RateLimitConfig, reserve: boolean): boolean {
  let ok = true;
  try {
    validateCount(count, config, reserve);
  } catch (e) {
    expect(isInvalidCount(e)).toBe(true);
    ok = false;
  }
  const max = maxCount(config, reserve);
  const tolerance = 1e-9 * Math.max(1, Number.isFinite(max) ? max : 1);
  if (ok) expect(count).toBeLessThanOrEqual(max + tolerance);
  else expect(count).toBeGreaterThanOrEqual(max - tolerance);
  return ok;
}

/** A request as the scenario makes it: the component's `RateLimitArgs` without `throws`. */
type Request = Pick<RateLimitArgs, "name" | "key" | "config" | "count" | "reserve">;

/** The request's arguments with `key` left out when absent, as the client sends them. */
function argsOf(req: Request): RateLimitArgs {
  const { key, ...rest } = req;
  return key === undefined ? rest : { ...rest, key };
}

/** Answers a flow's reads from one key in memory, as the store does (see `answerRead`). */
function answerFrom(read: KeyInMemory<number>): (q: RowQuery) => KeyRead<number> {
  return (q) => answerRead(read, q);
}

/** The whole outcome of a request over the store (`requestFlow` run on its rows), written nowhere. */
function decide(store: MemoryStore, req: Request, now: number, random: () => number): RequestOutcome<number> {
  const args = argsOf(req);
  return runPlan(requestFlow<number>(args, now, random), answerFrom(store.read(args)));
}

/** A deep copy of what the store holds for a key, for comparing before and after. */
function stored(store: MemoryStore, req: Request): KeyRead<number> {
  return structuredClone(store.read(argsOf(req)));
}

/**
 * Every shard's state at `now` as `getValue` reports it, sampling one shard at a time: what the
 * next request would see (pending takes folded in, rows of another layout carried over).
 */
function shardStates(store: MemoryStore, req: Request, now: number): State[] {
  const n = req.config.shards ?? 1;
  return Array.from({ length: n }, (_, i) => {
    const args = { name: req.name, ...(req.key === undefined ? {} : { key: req.key }), config: req.config, sampleShards: 1 };
    const v = store.getValue(args, now, replay([(i + 0.5) / n]));
    expect(v.shard).toBe(i);
    return stateOf(v);
  });
}

/** The valid config with `want` shards, or the most below it that validation accepts (1 always is). */
function reshard(config: RateLimitConfig, want: number): RateLimitConfig {
  for (let shards = want; shards > 1; shards--) {
    const next = { ...config, shards };
    try {
      validateConfig(next);
      return next;
    } catch {
      // Too many shards for the rate or capacity: try fewer.
    }
  }
  const { shards: _shards, ...one } = config;
  return one;
}

/**
 * Tokens admitted by one decision. `at` is when they count: the decision's effective instant for
 * work that runs now, or the instant the reserved work runs. `from` is the decision's effective
 * instant: an interval starting in (from, at] begins while that work waits on tokens already
 * promised to it.
 */
type Admission = { tokens: number; at: number; from: number };

/**
 * Checks the bound for the whole limit over every interval [t1, t2] between admissions: token
 * bucket: capacity + rate × (t2 - t1) / period; fixed window: capacity + rate × (window
 * boundaries in (t1, t2]). Reserved work counts at the instant it runs. Intervals that start while
 * reserved work waits are left out: that work was paid with tokens earned before t1, so counting
 * it at its run time can exceed the bound of a later-starting interval whatever the limiter does
 * (capacity 0, reserve 1 at 10/min: the work runs at +6 s, and [6 s, 6 s] holds 1 > 0; a fixed
 * window of 10 with 5 left, reserving 10, runs 10 + the next window's 5 in one window). Every
 * interval that starts when no reserved work waits is bounded exactly (no slack but float EPS).
 */
function checkBound(config: RateLimitConfig, phase: number, admitted: Admission[], label: string): void {
  if (admitted.length === 0) return;
  const cap = config.capacity ?? config.rate;
  const p = { phase, period: config.period };
  const starts = [...new Set(admitted.flatMap((a) => [a.at, a.from]))].filter(
    (t1) => !admitted.some((a) => a.from < t1 && t1 <= a.at),
  );
  const ends = [...new Set(admitted.map((a) => a.at))];
  for (const t1 of starts) {
    for (const t2 of ends) {
      if (t2 < t1) continue;
      const inside = admitted.filter((a) => a.at >= t1 && a.at <= t2).reduce((s, a) => s + a.tokens, 0);
      const bound =
        config.kind === TB
          ? cap + (config.rate * (t2 - t1)) / config.period
          : cap + config.rate * (windowIndex(t2, p) - windowIndex(t1, p));
      if (inside > bound + EPS * Math.max(1, bound)) {
        expect.fail(`${label}: ${inside} admitted in [${t1}, ${t2}] (ms) exceeds the bound ${bound}`);
      }
    }
  }
}

/** Whether two configs are the same, whatever order their fields were written in. */
function sameConfig(a: RateLimitConfig, b: RateLimitConfig): boolean {
  const sorted = (c: RateLimitConfig) => JSON.stringify(Object.entries(c).sort(([x], [y]) => (x < y ? -1 : 1)));
  return sorted(a) === sorted(b);
}

/**
 * Runs a scenario through the whole flow over the in-memory store and asserts the per-step
 * invariants (2), (3), (4), (6); returns the admissions for the bound (1): for the whole limit per
 * segment between resets (a reset refills everything at once, by design; a change of shard count
 * gains nothing, so the whole limit's bound spans it), and per shard per segment between resets and
 * changes of shard count (which renumber the shards); and whether a reservation was ever split over
 * two shards (then a shard's tokens aren't its own, see the per-shard property).
 */
function runScenario(s: Scenario) {
  validateConfig(s.config); // the arbitrary only makes valid configs
  let config = s.config;
  // The phase depends on the name, key, kind, period and start, never on the shard count.
  const phase = resolvePhase(config, NAME, s.key);
  const maxReserved = config.maxReserved ?? Infinity;
  const async = config.applyUpdates === "asynchronously";
  let store = new MemoryStore();
  const random = seededRandom(s.seed);
  let now = s.t0;
  let lastRetry: number | undefined;
  // Whether every stored row was written under the current layout (transactional mode, the key
  // written since the last change of shard count), so a row's stored state is the state read.
  let settled = true;
  // The config the latest pending take was recorded under: the applier runs under it.
  let takenUnder: RateLimitConfig | undefined;
  let sharedReserve = false;
  // Whether a debt was carried over to another shard count and isn't repaid yet (see the known bugs).
  let debtCarried = false;
  let whole: Admission[] = [];
  let perShard: Admission[] = [];
  const wholes = [whole];
  const perShards = [perShard];

  for (const op of s.ops) {
    const dt = stepOf(op.step, config, lastRetry);
    now += s.backwards ? dt : Math.max(0, dt);
    const n = config.shards ?? 1;
    const params = Array.from({ length: n }, (_, i) => shardParams(config, phase, i));
    const base: Request = { name: NAME, key: s.key, config };

    if (op.action === "reset") {
      // The component's reset deletes the key's rows and pending takes: a key never written.
      store = new MemoryStore();
      takenUnder = undefined;
      debtCarried = false;
      settled = true;
      whole = [];
      wholes.push(whole);
      perShard = [];
      perShards.push(perShard);
      // (4) A reset restores full capacity: every shard is full, and the largest plain count
      // validation accepts is served at once.
      shardStates(store, base, now).forEach((st, i) => expect(st.value).toBe(params[i]!.capacity));
      const max = maxCount(config, false);
      if (max > 0) expect(store.check(argsOf({ ...base, count: max }), now, seededRandom(s.seed + 1))).toEqual({ ok: true });
      continue;
    }
    if (op.action === "reshard") {
      const next = reshard(config, op.shards);
      if ((next.shards ?? 1) !== n) {
        if (shardStates(store, base, now).some((st) => st.value < 0)) debtCarried = true;
        settled = false;
        perShard = [];
        perShards.push(perShard);
      }
      config = next;
      continue;
    }
    if (op.action === "apply") {
      // The applier folds the takes into the rows exactly as every read already counts them: run
      // under the config the reads use, it changes nothing any shard reports.
      const invisible = takenUnder !== undefined && sameConfig(takenUnder, config);
      const before = invisible ? shardStates(store, base, now) : [];
      store.apply(now);
      takenUnder = undefined;
      if (invisible) expect(shardStates(store, base, now)).toEqual(before);
      continue;
    }

    const reserve = s.reserve && op.reserve && config.kind !== SW;
    const count = countOf(op.count, config, reserve);
    const req: Request = { ...base, count, reserve };
    // Two draws pick the pair; on quiet shards a refused pair draws up to READ_ON_SHARDS more.
    const draws = [random(), random(), ...Array.from({ length: READ_ON_SHARDS }, () => random())];
    const before = stored(store, req);

    // (7, validation side) a count is refused by validation exactly when it can never succeed,
    // and the request flow refuses it the same way, reading at most the key's first row (which
    // would carry the key's own override, under which it might succeed; here there is none).
    if (!validates(count, config, reserve)) {
      const asked: RowQuery[] = [];
      let thrown: unknown;
      try {
        runPlan(requestFlow<number>(argsOf(req), now, replay(draws)), (q) => {
          asked.push(q);
          return answerFrom(store.read(argsOf(req)))(q);
        });
      } catch (e) {
        thrown = e;
      }
      expect(isInvalidCount(thrown)).toBe(true);
      expect(asked.length <= 1 && asked.every((q) => q.read === "any"), JSON.stringify(asked)).toBe(true);
      continue;
    }
    // Every shard as this request sees it, evaluated at `now`.
    const states = shardStates(store, req, now);
    const out = decide(store, req, now, replay(draws));
    // (3) Deciding never changes state, and the same instant and draws give the same outcome:
    // `check` is `limit` without the writes.
    expect(stored(store, req)).toEqual(before);
    expect(decide(store, req, now, replay(draws))).toEqual(out);
    expect(store.check(argsOf(req), now, replay(draws))).toEqual(out.result);
    expect(stored(store, req)).toEqual(before);
    if (op.action === "check") continue;

    const { plan } = out;
    checkPlanShape(plan, count, reserve);
    expect(out.result).toEqual(plan.retryAfter === undefined ? { ok: plan.ok } : { ok: plan.ok, retryAfter: plan.retryAfter });
    // The writes: asynchronous mode records takes and writes no row; otherwise rows of the
    // current layout (every shard, once a layout changed), and deletes only rows it dropped.
    for (const w of out.ops) {
      if (async) {
        expect(w.op).toBe("record");
      } else if (w.op === "insert" || w.op === "patch") {
        expect(w.shard >= 0 && w.shard < n && w.fields.h === termsHash(configTerms(config))).toBe(true);
      } else if (w.op === "terms") {
        expect(w.terms).toBe(configTerms(config));
      } else {
        expect(w.op === "delete" && !(w.shard < n)).toBe(true);
      }
    }

    // (6) A clock that went backwards: a row read at an instant before its ts evaluates to what
    // it holds (clamped to capacity), with no refill and nothing lost.
    if (settled && !async) {
      for (const row of before.rows) {
        if (!(now < row.ts)) continue;
        const p = params[row.shard]!;
        // An approximate sliding window keeps its `prev`. An exact one reads as at its own ts: its
        // log (a row written without one, by a change of shard count, reads as its tokens used
        // taken at its ts, and the state carries that log).
        if (p.kind === "exact sliding window") {
          expect(states[row.shard]).toStrictEqual(evaluate(stateOf(row), p, row.ts));
          expect(states[row.shard]!.value).toBeCloseTo(Math.min(row.value, p.capacity), 9);
          expect(states[row.shard]!.ts).toBe(row.ts);
        } else {
          const prev = p.kind === SW ? { prev: row.prev ?? 0 } : {};
          expect(states[row.shard]).toStrictEqual({ value: Math.min(row.value, p.capacity), ts: row.ts, ...prev });
        }
        if (n === 1) {
          // The decision equals the one at the row's own ts, with the same absolute retry instant.
          const at = decide(store, req, row.ts, replay(draws));
          expect(out.plan.ok).toBe(at.plan.ok);
          expect(out.plan.writes).toEqual(at.plan.writes);
          // (Compared only for a whole-ms ts: from a fractional window start the least whole
          // delay lands on a different instant.)
          if (Number.isInteger(row.ts) && (out.plan.retryAfter !== undefined || at.plan.retryAfter !== undefined)) {
            expect(now + (out.plan.retryAfter ?? NaN)).toBe(row.ts + (at.plan.retryAfter ?? NaN));
          }
        }
      }
    }

    // (2) retryAfter is exact for an unsharded limit.
    const exactRetry = n === 1;
    if (exactRetry && !plan.ok) {
      const r = plan.retryAfter;
      expect(store.check(argsOf(req), now + r, replay(draws)).ok).toBe(true);
      expect(store.check(argsOf(req), now + r - 1, replay(draws)).ok).toBe(false);
    }

    // The store's own write path decides the same, and writes it.
    expect(store.limit(argsOf(req), now, replay(draws))).toEqual(out.result);
    lastRetry = plan.retryAfter;
    if (out.ops.some((w) => w.op === "record")) takenUnder = config;
    if (!async && count > 0) settled = true;
    const after = shardStates(store, req, now);

    const written = new Map(plan.writes.map((w) => [w.shard, w.state]));
    if (plan.ok) {
      // Conservation: the written shards lose exactly `count` between them.
      const lost = plan.writes.reduce((sum, w) => sum + states[w.shard]!.value - w.state.value, 0);
      if (plan.writes.length > 0) expect(lost).toBeCloseTo(count, 9);
      else expect(count).toBe(0);
    }
    for (const [shard, state] of written) {
      const p = params[shard]!;
      // (4) never above capacity; (1) never deeper than the shard's share of maxReserved.
      expect(state.value).toBeLessThanOrEqual(p.capacity + EPS);
      expect(state.value).toBeGreaterThanOrEqual(-p.maxReserved - EPS * Math.max(1, p.maxReserved));
      // A write keeps the row's time: evaluated ts (monotone per shard).
      expect(state.ts).toBe(states[shard]!.ts);
      // What the next read sees is what was decided: the row written (read back clamped to the
      // capacity, which a decimal snap of a fractional share may pass by float noise), or the
      // take recorded, folded into it (which rounds the value as a subtraction does).
      if (async) {
        expect(after[shard]!.ts).toBe(state.ts);
        expect(after[shard]!.value).toBeCloseTo(state.value, 9);
      } else {
        expect(after[shard]).toEqual({ ...state, value: Math.min(state.value, p.capacity) });
      }
    }
    // Nothing else changes: a shard not written (a refusal writes only a migration, which
    // carries every shard over as it already reads) is seen as before.
    states.forEach((state, shard) => {
      if (!written.has(shard)) expect(after[shard]).toEqual(state);
    });

    if (exactRetry && plan.ok && plan.retryAfter !== undefined) {
      // (2) for a reservation: the debt is repaid at exactly now + retryAfter.
      const peek = argsOf({ ...req, count: 0, reserve: false });
      expect(store.check(peek, now + plan.retryAfter, replay(draws)).ok).toBe(true);
      expect(store.check(peek, now + plan.retryAfter - 1, replay(draws)).ok).toBe(false);
    }

    // (1) never more than maxReserved in debt, across the whole limit; (4) no shard above capacity.
    const debt = after.reduce((sum, st) => sum + Math.min(0, st.value), 0);
    if (debt === 0) debtCarried = false;
    if (!(debtCarried && STEP_AROUND_KNOWN_BUGS)) expect(debt).toBeGreaterThanOrEqual(-maxReserved - EPS * Math.max(1, Number.isFinite(maxReserved) ? maxReserved : 1));
    after.forEach((st, i) => expect(st.value).toBeLessThanOrEqual(params[i]!.capacity + EPS));

    if (plan.ok && count > 0) {
      if (reserve && n > 1) sharedReserve = true;
      const from = Math.max(now, ...plan.shards.map((i) => states[i]!.ts));
      whole.push({ tokens: count, at: plan.retryAfter === undefined ? from : now + plan.retryAfter, from });
      for (const w of plan.writes) {
        const tokens = states[w.shard]!.value - w.state.value;
        const own = Math.max(now, states[w.shard]!.ts);
        // A shard left in debt runs its work when the debt is repaid: for an unsharded limit,
        // exactly `retryAfter` (checked above); a sharded one's per-shard count isn't judged.
        const repaid = w.state.value < 0 ? now + (plan.retryAfter ?? NaN) : own;
        perShard.push({ tokens, at: repaid, from: own });
      }
    }
  }
  return { phase, wholes, perShards, sharedReserve };
}

/** The shape every plan must have, whatever the state. */
function checkPlanShape(plan: Plan, count: number, reserve: boolean): void {
  if (plan.retryAfter !== undefined) {
    expect(Number.isInteger(plan.retryAfter) && plan.retryAfter >= 1).toBe(true);
  }
  if (!plan.ok) {
    expect(plan.writes).toEqual([]);
    return;
  }
  if (count === 0) expect(plan.writes).toEqual([]);
  // Work that may run now leaves no shard in debt; work that must wait was reserved.
  if (plan.retryAfter === undefined) {
    for (const w of plan.writes) expect(w.state.value).toBeGreaterThanOrEqual(0);
  } else {
    expect(reserve).toBe(true);
    expect(plan.writes.some((w) => w.state.value < 0)).toBe(true);
  }
}

// ---------------------------------------------------------------------------------------------
// Properties

describe("invariants over random sequences of limit/check/reset/reshard/apply", () => {
  test.prop([scenarioArb({ backwards: false, reserve: "any" })], runs(150, 20_000))(
    "(1) admitted tokens never exceed the bound for the whole limit (monotone clock), and (2)(3)(4)",
    (s) => {
      const { phase, wholes } = runScenario(s);
      for (const admitted of wholes) checkBound(s.config, phase, admitted, "whole limit");
    },
    TIMEOUT,
  );

  test.prop([scenarioArb({ backwards: true, reserve: "any" })], runs(150, 20_000))(
    "(1) with a clock that jumps backwards, counted per shard at each shard's own time; (2)(3)(4)(6)",
    (s) => {
      const { phase, perShards, sharedReserve } = runScenario(s);
      // Per-shard counting needs each shard's tokens to be its own: with reservations across a
      // pair, combining may move debt from one shard to the other (the pair's total is still
      // conserved, which runScenario checks), so only runs that never reserved on a sharded
      // layout are counted here.
      if (sharedReserve) return;
      for (const admitted of perShards) checkBound(s.config, phase, admitted, "per shard");
    },
    TIMEOUT,
  );
});

describe("(7) a fresh limit accepts every request that validation accepts", () => {
  const requestArb = fc.record({
    config: configArb,
    reserve: fc.boolean(),
    count: countArb,
    seed: fc.integer(),
    at: fc.integer({ min: -DAY, max: DAY }),
  });

  test.prop([requestArb], runs(300, 50_000))("at once, on a fresh limit", ({ config, reserve: wantReserve, count: shape, seed, at }) => {
    // A sliding window refuses `reserve` (validation.test.ts checks that error).
    const reserve = wantReserve && config.kind !== SW;
    const count = countOf(shape, config, reserve);
    fc.pre(validates(count, config, reserve));
    const result = new MemoryStore().limit(argsOf({ name: NAME, config, count, reserve }), T0 + at, seededRandom(seed));
    expect(result.ok).toBe(true);
  }, TIMEOUT);

  test.prop([scenarioArb({ backwards: true, reserve: "any" }), requestArb], runs(100, 10_000))(
    "eventually, after any traffic, retrying at retryAfter with no other traffic",
    (s, { reserve: wantReserve, count: shape, seed }) => {
      let config = s.config;
      let store = new MemoryStore();
      const random = seededRandom(s.seed);
      let now = s.t0;
      for (const op of s.ops) {
        now += stepOf(op.step, config, undefined);
        if (op.action === "reset") store = new MemoryStore();
        if (op.action === "reshard") config = reshard(config, op.shards);
        if (op.action === "apply") store.apply(now);
        if (op.action !== "limit") continue;
        const reserve = s.reserve && op.reserve && config.kind !== SW;
        const count = countOf(op.count, config, reserve);
        if (!validates(count, config, reserve)) continue;
        store.limit(argsOf({ name: NAME, key: s.key, config, count, reserve }), now, random);
      }
      const reserve = wantReserve && config.kind !== SW;
      const count = countOf(shape, config, reserve);
      fc.pre(validates(count, config, reserve));
      // By the time every shard is full (a peek's details say when, with no other traffic), any
      // pair can serve what validation accepts.
      const n = config.shards ?? 1;
      const base = argsOf({ name: NAME, key: s.key, config });
      const { details } = store.check({ ...base, count: 0, details: true }, now, replay([0, 0]));
      expect(details?.exact).toBe(true);
      const full = now + (details?.resetAfter ?? NaN);
      const pick = seededRandom(seed);
      const req = argsOf({ name: NAME, key: s.key, config, count, reserve });
      for (let tries = 0; ; tries++) {
        const result = store.check(req, now, pick);
        if (result.ok) break;
        expect(now, `still refused after ${tries} retries`).toBeLessThanOrEqual(full);
        expect(tries).toBeLessThan(100_000);
        if (n === 1) expect(tries, "an unsharded retry at retryAfter succeeds").toBe(0);
        now += result.retryAfter;
      }
    },
    TIMEOUT,
  );
});

describe("(7) counterexamples fast-check found (fixed rows, so they replay without a seed)", () => {
  // "capacity + maxReserved vs count" computed in a different float order than the decision's
  // own test let a count at the maximum pass validation and then never succeed (the decision
  // threw instead). Validation must use the decision's test: at the float edge it either rejects
  // the count or a fresh limit admits it, on every pair.
  const edge = (x: number) => [x * (1 - 2 ** -52), x, x * (1 + 2 ** -52)];
  test.each([
    // [why, config, reserve, count near which to probe (null: the brute-force maximum)]
    ["unsharded: capacity 0.1 + maxReserved 0.2", { kind: TB, rate: 1, period: SECOND, capacity: 0.1, maxReserved: 0.2 }, true, 0.1 + 0.2],
    ["2 shards: capacity 7/3 (1 + 4/3), maxReserved 2.5 (1 + 1.5)", { kind: TB, rate: 3, period: SECOND, capacity: 7 / 3, maxReserved: 2.5, shards: 2 }, true, null],
    ["3 shards of 10/3 per s, maxReserved 22", { kind: TB, rate: 10 / 3, period: SECOND, maxReserved: 22, shards: 3 }, true, null],
    ["3 shards of capacity 10/3, no reserve", { kind: FW, rate: 10 / 3, period: SECOND, shards: 3 }, false, null],
    ["unsharded capacity 1/3 + maxReserved 2.5", { kind: FW, rate: 1, period: MINUTE, capacity: 1 / 3, maxReserved: 2.5 }, true, null],
  ] as [string, RateLimitConfig, boolean, number | null][])("validation and a fresh limit agree at the maximum: %s", (_why, config, reserve, near) => {
    for (const count of edge(near ?? maxCount(config, reserve))) {
      if (!validates(count, config, reserve)) continue;
      // The seeds cover every pair of up to 3 shards.
      for (let seed = 0; seed < 30; seed++) {
        const result = new MemoryStore().limit(argsOf({ name: NAME, config, count, reserve }), T0, seededRandom(seed));
        expect(result.ok, `count ${count}, seed ${seed}`).toBe(true);
      }
    }
  });
});

describe("pure helpers", () => {
  test.prop(
    [fc.double({ min: 0, max: 1e6, noNaN: true }), fc.integer({ min: 1, max: 1024 })],
    runs(500, 100_000),
  )("splitTotal's parts add up exactly to the total", (total, n) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += splitTotal(total, n, i);
    expect(sum).toBe(total);
  }, TIMEOUT);

  test.prop(
    [
      fc.integer({ min: -1e13, max: 1e13 }),
      fc.integer({ min: -1e13, max: 1e13 }),
      fc.constantFrom(1, 2.5, 7, SECOND, MINUTE, HOUR, DAY),
    ],
    runs(500, 100_000),
  )("windowStart(t) ≤ t < windowStart(t) + period, and a window start is in its own window", (t, start, period) => {
    // Instants are whole ms (Date.now()); the phase comes from a whole-ms start.
    const p = { phase: phaseOf(start, period), period };
    const s = windowStart(t, p);
    expect(s).toBeLessThanOrEqual(t);
    expect(t).toBeLessThan(s + period);
    expect(windowIndex(s, p)).toBe(windowIndex(t, p));
  }, TIMEOUT);

  test.prop(
    [
      configArb,
      fc.double({ min: -50, max: 50, noNaN: true }),
      fc.integer({ min: 0, max: DAY }),
      fc.integer({ min: 0, max: DAY }),
    ],
    runs(300, 50_000),
  )("evaluate never exceeds capacity and never loses tokens as time moves forward", (config, value, a, b) => {
    const p = shardParams(config, resolvePhase(config, NAME, undefined), 0);
    const state: State = { value, ts: T0 };
    const early = evaluate(state, p, T0 + Math.min(a, b));
    const late = evaluate(state, p, T0 + Math.max(a, b));
    expect(late.value).toBeLessThanOrEqual(p.capacity);
    expect(late.value).toBeGreaterThanOrEqual(Math.min(early.value, p.capacity));
    expect(late.ts).toBeGreaterThanOrEqual(early.ts);
  }, TIMEOUT);
});
