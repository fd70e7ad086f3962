// Waiting until allowed as a fast-check property, through the published register() helper on
// convex-test with the scheduler run timer by timer under fake timers: random histories of
// runWhenAllowed, waitUntilAllowed (its timer one of the fake clock's) and cancelRun over two keys,
// on a token bucket, a fixed window or an exact sliding window, with config changes (raised and
// lowered while work is queued), key overrides and blocks. For each key, the runs start in the
// order they were accepted and never before their runAt (each job's timer fires exactly at it, and
// each waiter wakes exactly at it); kind by kind, the runAt instants respect the limit: each run of
// an exact window sees no more than the rate in force at its decision in the window ending at its
// runAt (counting the runs accepted before it); a token bucket's or fixed window's runs decided
// under one config in force, replayed as plain admissions from a full key, are all admitted; and
// over every span, no more runs than the most generous config in force for the key allows, across
// changes too (work queued before a change keeps its runAt; what comes after waits for the old
// schedule's end). No run is scheduled inside a block in force when it was accepted; a cancelled
// run never runs, credits at most its tokens, once. The counterexamples the property found are
// replayed as plain cases below it. DEEP=1 runs many more histories; replay with FC_SEED (and FC_PATH).
import { fc, test } from "@fast-check/vitest";
import { componentsGeneric } from "convex/server";
import { afterEach, beforeEach, describe, expect, vi } from "vitest";
import { RateLimiter, type RateLimitConfig } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
import { decideRow, paramsOf, phaseOf, type State } from "../src/shared/kinds/algebra.js";
import { runs, TIMEOUT } from "../tools/fast-check.js";
import { schema, sendRef } from "./app/waiting.js";
import { makeTest } from "./setup.js";

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };
const T0 = Date.UTC(2031, 0, 1);
const KEYS = ["a", "b"] as const;
type Key = (typeof KEYS)[number];

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

type Kind = "token bucket" | "fixed window" | "sliding window";
type Op =
  | { op: "queue"; key: Key; count: number; dt: number; maxWait: number | undefined }
  | { op: "wait"; key: Key; count: number; dt: number; maxWait: number | undefined }
  | { op: "cancel"; pick: number; dt: number }
  | { op: "change"; rate: number; dt: number }
  | { op: "override"; key: Key; rate: number; dt: number }
  | { op: "block"; key: Key; ms: number; dt: number };

const kindArb = fc.constantFrom<Kind>("token bucket", "fixed window", "sliding window");
/** Mostly no time between calls (bursts queue work ahead), sometimes up to 3 s (runs fall due). */
const dtArb = fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3000 }) });
const historyArb = fc.record({
  kind: kindArb,
  // At least 2, so every count drawn (1 or 2) is one a full limit holds, whatever is in force; the
  // same range as a change's, so changes raise and lower it alike.
  rate: fc.integer({ min: 2, max: 4 }),
  extra: fc.integer({ min: 0, max: 1 }),
  period: fc.constantFrom(1000, 5000),
  ops: fc.array(
    fc.oneof(
      { weight: 6, arbitrary: fc.record({ op: fc.constant("queue" as const), key: fc.constantFrom(...KEYS), count: fc.integer({ min: 1, max: 2 }), dt: dtArb, maxWait: fc.option(fc.integer({ min: 0, max: 8000 }), { nil: undefined }) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant("wait" as const), key: fc.constantFrom(...KEYS), count: fc.integer({ min: 1, max: 2 }), dt: dtArb, maxWait: fc.option(fc.integer({ min: 0, max: 8000 }), { nil: undefined }) }) },
      { weight: 4, arbitrary: fc.record({ op: fc.constant("cancel" as const), pick: fc.nat(), dt: dtArb }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant("change" as const), rate: fc.integer({ min: 2, max: 4 }), dt: dtArb }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant("override" as const), key: fc.constantFrom(...KEYS), rate: fc.integer({ min: 2, max: 4 }), dt: dtArb }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant("block" as const), key: fc.constantFrom(...KEYS), ms: fc.integer({ min: 1, max: 3000 }), dt: dtArb }) },
    ),
    // At least 4 ops, so most histories queue work ahead before a change.
    { minLength: 4, maxLength: 14 },
  ),
});

/** A config of `kind` at `rate` tokens per `period` (a token bucket's and a fixed window's capacity `rate + extra`). */
function configOf(kind: Kind, rate: number, extra: number, period: number): RateLimitConfig {
  if (kind === "sliding window") return { kind, rate, period };
  if (kind === "fixed window") return { kind, rate, period, capacity: rate + extra, start: 0 };
  return { kind, rate, period, capacity: rate + extra };
}

/** What the histories exercised, so the properties aren't vacuous (checked by the last test). */
const seen = { delayed: 0, waited: 0, cancelled: 0, refused: 0, blocked: 0, started: 0, changed: 0, raisedQueued: 0, loweredQueued: 0, histories: 0 };

/** Work accepted: a run (`id`), or an action waiting its turn (`waiter`, with the instant it woke once it has). */
type Accepted = {
  key: Key;
  to: string;
  count: number;
  runAt: number;
  id: string;
  order: number;
  cancelled: boolean;
  /** The config in force for the key when it was decided, and the how-manieth config in force for the key that is. */
  config: RateLimitConfig;
  segment: number;
  waiter?: { from?: number; wokeAt?: number; waited?: number };
};
type History = { kind: Kind; rate: number; extra: number; period: number; ops: Op[] };
/** Whether the work has a timer: every job does; a waiter only when its turn is still ahead. */
const timed = (r: Accepted) => r.waiter === undefined || r.runAt > r.waiter.from!;

/**
 * Runs one history and checks it (see the top of the file). The config in force for each key is
 * tracked: the named one, or the key's override (a block replaces it).
 */
async function check({ kind, rate, extra, period, ops }: History): Promise<void> {
      vi.setSystemTime(T0);
      seen.histories++;
      const t = makeTest(schema);
      // Sends are recorded by the app's `send`; each carries a unique `to`.
      let named = configOf(kind, rate, extra, period);
      let limiter = new RateLimiter(components.rateLimiter, { p: named });
      const own: Record<Key, RateLimitConfig | undefined> = { a: undefined, b: undefined };
      const inForce = (key: Key) => own[key] ?? named;
      /** Every config in force for each key at some instant, and how many times that changed. */
      const configs: Record<Key, RateLimitConfig[]> = { a: [named], b: [named] };
      const segment: Record<Key, number> = { a: 0, b: 0 };
      /** Moves the keys to what is in force now, counting a change of rate with work still queued. */
      const settle = (before: Record<Key, RateLimitConfig>) => {
        for (const key of KEYS) {
          const [was, is] = [before[key], inForce(key)];
          if (JSON.stringify(was) === JSON.stringify(is)) continue;
          segment[key]++;
          configs[key].push(is);
          if (accepted.some((r) => r.key === key && !r.cancelled && r.runAt > Date.now())) {
            if (is.rate > was.rate) seen.raisedQueued++;
            if (is.rate < was.rate) seen.loweredQueued++;
          }
        }
      };
      const snapshot = (): Record<Key, RateLimitConfig> => ({ a: inForce("a"), b: inForce("b") });
      const accepted: Accepted[] = [];
      const blocks: { key: Key; from: number; until: number }[] = [];
      const fired: number[] = [];
      const waiters: Promise<unknown>[] = [];
      let now = T0;
      let n = 0;
      let firedCount = 0;
      /**
       * Moves the clock to `to`, running each job due by then at its own instant: one timer per
       * accepted run (a cancelled run's fires too, and finds its job cancelled), in runAt order.
       */
      const advance = async (to: number) => {
        const dueCount = accepted.filter((r) => timed(r) && r.runAt <= to).length;
        while (firedCount < dueCount) {
          const before = vi.getTimerCount();
          // Fires every timer due at the next instant that has one (vitest ticks 0 after it).
          vi.advanceTimersToNextTimer();
          for (let i = vi.getTimerCount(); i < before; i++, firedCount++) fired.push(Date.now());
          await t.finishInProgressScheduledFunctions();
        }
        expect(firedCount).toBe(dueCount);
        // Every timer due by `to` has fired: moving the fake clock fires none. (setSystemTime would
        // shift the pending timers' due instants along with it.)
        if (to > Date.now()) vi.advanceTimersByTime(to - Date.now());
        now = Math.max(now, to, Date.now());
      };
      for (const op of ops) {
        await advance(now + op.dt);
        switch (op.op) {
          case "queue": {
            const to = `r${n++}`;
            const result = await t.run(async (ctx) => {
              const decidedAt = Date.now();
              const r = await limiter.runWhenAllowed(ctx, "p", { key: op.key, count: op.count, ...(op.maxWait === undefined ? {} : { maxWait: op.maxWait }) }, sendRef, { to });
              return { r, decidedAt };
            });
            const { r, decidedAt } = result;
            if (r.ok) {
              expect(r.runAt).toBeGreaterThanOrEqual(decidedAt);
              expect(Number.isInteger(r.runAt)).toBe(true);
              if (op.maxWait !== undefined) expect(r.runAt - decidedAt).toBeLessThanOrEqual(op.maxWait);
              // No run is scheduled inside a block in force when it was accepted.
              for (const b of blocks) if (b.key === op.key && decidedAt < b.until) expect(r.runAt).toBeGreaterThanOrEqual(b.until);
              accepted.push({ key: op.key, to, count: op.count, runAt: r.runAt, id: r.id, order: accepted.length, cancelled: false, config: inForce(op.key), segment: segment[op.key] });
              if (r.runAt > decidedAt) seen.delayed++;
            } else {
              seen.refused++;
              if (blocks.some((b) => b.key === op.key && decidedAt < b.until)) seen.blocked++;
              expect(r.retryAfter).toBeGreaterThanOrEqual(1);
            }
            break;
          }
          case "wait": {
            // waitUntilAllowed as an action calls it; its one mutation runs here, and its timer
            // is one of the fake clock's.
            let decided!: (r: { ok: boolean; runAt?: number; retryAfter?: number }) => void;
            const reservation = new Promise<{ ok: boolean; runAt?: number; retryAfter?: number }>((resolve) => (decided = resolve));
            const ctx = {
              runQuery: (() => Promise.reject(new Error("no query"))) as never,
              runMutation: (async (ref: never, args: never) => {
                const r = await t.run((c) => c.runMutation(ref, args));
                decided(r as never);
                return r;
              }) as never,
              runAction: (() => Promise.reject(new Error("no action"))) as never,
            };
            const to = `w${n++}`;
            const timers = vi.getTimerCount();
            const entry: Accepted = { key: op.key, to, count: op.count, runAt: NaN, id: "", order: accepted.length, cancelled: true, config: inForce(op.key), segment: segment[op.key], waiter: {} };
            const woke = limiter.waitUntilAllowed(ctx, "p", { key: op.key, count: op.count, ...(op.maxWait === undefined ? {} : { maxWait: op.maxWait }) }).then((r) => {
              if (r.ok) Object.assign(entry.waiter!, { wokeAt: Date.now(), waited: r.waited });
              return r;
            });
            waiters.push(woke);
            const r = await reservation;
            if (r.ok) {
              entry.runAt = r.runAt!;
              entry.waiter!.from = Date.now();
              entry.cancelled = false;
              // Let it go on to its timer (or, its turn come, to its end) before the clock moves.
              if (timed(entry)) {
                for (let i = 0; i < 1000 && vi.getTimerCount() === timers; i++) await Promise.resolve();
                expect(vi.getTimerCount()).toBe(timers + 1);
              } else {
                await woke;
              }
              accepted.push(entry);
              if (entry.runAt > now) seen.waited++;
            } else {
              seen.refused++;
            }
            break;
          }
          case "cancel": {
            const runs = accepted.filter((r) => r.waiter === undefined);
            if (runs.length === 0) break;
            const run = runs[op.pick % runs.length]!;
            const first = await t.run((ctx) => limiter.cancelRun(ctx, run.id));
            if (first.cancelled) {
              expect(run.cancelled).toBe(false);
              expect(first.credited).toBeGreaterThanOrEqual(0);
              expect(first.credited).toBeLessThanOrEqual(run.count);
              run.cancelled = true;
              seen.cancelled++;
              // Exactly once: a second call credits nothing.
              expect(await t.run((ctx) => limiter.cancelRun(ctx, run.id))).toEqual({ cancelled: false, state: "canceled" });
            } else if (run.cancelled) {
              expect(first.state).toBe("canceled");
            } else {
              // Not cancelled, so it could only be refused because it started.
              expect(["inProgress", "success", "failed"]).toContain(first.state);
              seen.started++;
              expect(run.runAt).toBeLessThanOrEqual(Date.now());
            }
            break;
          }
          case "change": {
            seen.changed++;
            const before = snapshot();
            named = configOf(kind, op.rate, extra, period);
            limiter = new RateLimiter(components.rateLimiter, { p: named });
            settle(before);
            break;
          }
          case "override": {
            const before = snapshot();
            // It replaces a block of the key.
            for (const b of blocks) if (b.key === op.key) b.until = Math.min(b.until, Date.now());
            own[op.key] = configOf(kind, op.rate, extra, period);
            await t.run((ctx) => limiter.setOverride(ctx, "p", { key: op.key }, { config: own[op.key]! }));
            settle(before);
            break;
          }
          case "block": {
            const before = snapshot();
            const until = Date.now() + op.ms;
            // It replaces the key's override, a block too.
            for (const b of blocks) if (b.key === op.key) b.until = Math.min(b.until, Date.now());
            blocks.push({ key: op.key, from: Date.now(), until });
            own[op.key] = undefined;
            await t.run((ctx) => limiter.setOverride(ctx, "p", { key: op.key }, { blockedUntil: until }));
            settle(before);
            break;
          }
        }
      }
      await advance(Math.max(now, ...accepted.map((r) => r.runAt)) + 1);
      await Promise.all(waiters);
      const sent = await t.run(async (ctx) => (await ctx.db.query("sent").collect()).map(({ to, at }) => ({ to: to as string, at: at as number })));
      const live = accepted.filter((r) => !r.cancelled);
      // A cancelled run never runs; every other one runs once; every waiter woke at its runAt.
      expect(sent.map((s) => s.to).sort()).toEqual(live.filter((r) => !r.waiter).map((r) => r.to).sort());
      for (const w of live.filter((r) => r.waiter)) {
        // It slept from its decision to its runAt, in one timer (which fired exactly then: `fired`
        // below), and went on no earlier.
        expect(w.waiter!.waited).toBe(Math.max(0, w.runAt - w.waiter!.from!));
        expect(w.waiter!.wokeAt).toBeGreaterThanOrEqual(w.runAt);
      }
      // Each job's timer fired at its runAt exactly.
      expect(fired).toEqual(accepted.filter(timed).map((r) => r.runAt).sort((a, b) => a - b));
      for (const key of KEYS) {
        const mine = live.filter((r) => r.key === key);
        // runAt never decreases in acceptance order, and the runs start in that order, never before
        // runAt. Jobs due at the same instant start in no set order (the scheduler's: seed
        // -1022736615 started three of one key's, all due at +2 ms, as 1st, 3rd, 2nd), so the
        // instants the runs were due at, in the order they started, are those in acceptance order.
        for (let i = 1; i < mine.length; i++) expect(mine[i]!.runAt).toBeGreaterThanOrEqual(mine[i - 1]!.runAt);
        const jobs = mine.filter((r) => !r.waiter);
        const started = jobs.map((r) => sent.find((s) => s.to === r.to)!);
        for (let i = 0; i < jobs.length; i++) expect(started[i]!.at).toBeGreaterThanOrEqual(jobs[i]!.runAt);
        const byStart = sent.flatMap((s) => jobs.filter((r) => r.to === s.to));
        expect(byStart.map((r) => r.runAt)).toEqual(jobs.map((r) => r.runAt));
        // The most generous config in force for the key at any instant (capacity is rate + extra).
        const most = configs[key].reduce((a, b) => (b.rate > a.rate ? b : a));
        const capacity = most.capacity ?? most.rate;
        const tokens = (from: number, to: number) => mine.filter((o) => o.runAt >= from && o.runAt <= to).reduce((s, o) => s + o.count, 0);
        if (kind === "sliding window") {
          // Each run finds, in the window ending at its runAt, no more than the rate in force when
          // it was decided, counting the runs accepted before it (those accepted after it at the
          // same instant are checked by their own rates). The latest accepted run of any window
          // ends it, so every window holds no more than the most generous rate.
          for (const r of mine) {
            const held = mine.filter((o) => o.order <= r.order && o.runAt > r.runAt - period && o.runAt <= r.runAt).reduce((s, o) => s + o.count, 0);
            expect(held, `${key} ${r.to} at +${r.runAt - T0}`).toBeLessThanOrEqual(r.config.rate);
          }
          for (const r of mine) expect(tokens(r.runAt - period + 1, r.runAt)).toBeLessThanOrEqual(most.rate);
          continue;
        }
        // The runs decided under one config in force, replayed as plain admissions from a full
        // key, are all admitted (a key under one config throughout is replayed whole: its first
        // runs do meet a full key). A change carries the key's state over, no fuller than full.
        for (let seg = 0; seg <= segment[key]; seg++) {
          const runsOf = mine.filter((r) => r.segment === seg);
          if (runsOf.length === 0) continue;
          const p = paramsOf(runsOf[0]!.config, phaseOf(0, period));
          let state: State | null = null;
          for (const r of runsOf) {
            const d = decideRow(state, p, r.runAt, r.count, false);
            expect(d.ok, `${key} ${r.to} at +${r.runAt - T0} (config ${seg})`).toBe(true);
            if (d.ok && d.next) state = d.next;
          }
        }
        // Across changes (runs queued before one keep their instants, and those after wait for the
        // old schedule's end), the most generous config's bound holds over every span: a raised
        // rate never brings queued work's tokens back sooner, a lowered one never lets new work
        // crowd the old.
        for (const a of mine) {
          for (const b of mine) {
            if (b.runAt < a.runAt) continue;
            const bound =
              kind === "token bucket"
                ? capacity + (most.rate * (b.runAt - a.runAt)) / period
                : capacity + most.rate * (Math.floor((b.runAt - T0) / period) - Math.floor((a.runAt - T0) / period));
            expect(tokens(a.runAt, b.runAt), `${key}: +${a.runAt - T0} to +${b.runAt - T0}`).toBeLessThanOrEqual(bound + 1e-9);
          }
        }
      }
}

describe("waiting until allowed, over random histories with the scheduler run", () => {
  test.prop([historyArb], runs(100, 1000))("order, runAt, the limit kind by kind, blocks, cancellation, config changes", (h) => check(h), TIMEOUT);

  // Over 100 histories, in eight runs of the suite, each count was 8 or more, the rarest
  // (cancellations, rates raised or lowered while the key had work queued, refusals inside a block)
  // about 17 on average: a count of 0 by chance is below one in a million (Poisson, mean 15).
  // (Under FC_QUICK a fifth of the histories run.)
  test("the histories exercised every case: delays, waits, cancellations, refusals, blocks, started runs, config changes raising and lowering the rate with work queued", () => {
    expect(seen.histories).toBeGreaterThan(0);
    for (const [what, n] of Object.entries(seen)) expect(n, what).toBeGreaterThan(0);
  });
});

// The property's counterexamples, and their mirror images, replayed without a seed.
describe("config changes while work is queued", () => {
  const q = (count: number, dt = 0): Op => ({ op: "queue", key: "a", count, dt, maxWait: undefined });
  test("seed 259468899: a token bucket of 2/s raised to 3/s; the run queued after comes after the old schedule's end", async () => {
    // It ran 4 tokens within 167 ms: the debt of the runs queued before was repaid at the new rate.
    await check({ kind: "token bucket", rate: 2, extra: 0, period: 1000, ops: [q(1, 1), q(1), q(1), q(2), { op: "change", rate: 3, dt: 0 }, q(2), { op: "cancel", pick: 0, dt: 1 }] });
  });
  test("a fixed window of 2 raised to 3 a window: the run queued after runs in no window the old schedule filled", async () => {
    // It ran 4 in one window of 3.
    await check({ kind: "fixed window", rate: 2, extra: 0, period: 1000, ops: [q(2), q(2), q(2), { op: "change", rate: 3, dt: 0 }, q(2)] });
  });
  test("seed -1356529738: a fixed window of 4 lowered to 2 a window, then a run queued for the next window cancelled: it gives back no token to this one", async () => {
    // It gave its 2 tokens back to the current window, where it had taken 1: key b ran 5 in it.
    const qk = (key: "a" | "b", count: number): Op => ({ op: "queue", key, count, dt: 0, maxWait: undefined });
    await check({
      kind: "fixed window",
      rate: 4,
      extra: 0,
      period: 1000,
      ops: [qk("a", 1), qk("b", 1), qk("b", 2), qk("a", 1), qk("b", 2), { op: "change", rate: 2, dt: 0 }, { op: "cancel", pick: 0, dt: 0 }, { op: "cancel", pick: 1581157009, dt: 0 }, qk("b", 2)],
    });
  });
  test("lowered while work is queued: a token bucket of 3/s to 2/s, a fixed window of 3 to 2 a window", async () => {
    await check({ kind: "token bucket", rate: 3, extra: 0, period: 1000, ops: [q(2), q(2), q(2), { op: "change", rate: 2, dt: 0 }, q(2), q(1, 400)] });
    await check({ kind: "fixed window", rate: 3, extra: 1, period: 1000, ops: [q(2), q(2), q(2), q(2), { op: "change", rate: 2, dt: 0 }, q(1), q(2)] });
  });
});
