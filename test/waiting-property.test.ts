// Waiting until allowed as a fast-check property, through the published register() helper on
// convex-test with the scheduler run timer by timer under fake timers: random histories of
// runWhenAllowed, waitUntilAllowed (its timer one of the fake clock's) and cancelRun over two keys, on a token bucket, a fixed window or an exact sliding
// window, with config changes, key overrides and blocks. For each key, the runs start in the order
// they were accepted and never before their runAt (each job's timer fires exactly at it, and each
// waiter wakes exactly at it); kind by
// kind, the runAt instants respect the limit: an exact window never holds more than its rate in
// any window of its period (under the most generous config used); under one config throughout, the
// instants replayed as plain admissions are all admitted; across config changes (runs queued
// before one keep their instants) the most generous config's bound holds over every span; no run is
// scheduled inside a block in force when it was accepted; a cancelled run never runs, credits at
// most its tokens, once. DEEP=1 runs many more histories; replay with FC_SEED (and FC_PATH).
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
  // At least 2, so every count drawn (1 or 2) is one a full limit holds, whatever is in force.
  rate: fc.integer({ min: 2, max: 3 }),
  extra: fc.integer({ min: 0, max: 1 }),
  period: fc.constantFrom(1000, 5000),
  ops: fc.array(
    fc.oneof(
      { weight: 6, arbitrary: fc.record({ op: fc.constant("queue" as const), key: fc.constantFrom(...KEYS), count: fc.integer({ min: 1, max: 2 }), dt: dtArb, maxWait: fc.option(fc.integer({ min: 0, max: 8000 }), { nil: undefined }) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant("wait" as const), key: fc.constantFrom(...KEYS), count: fc.integer({ min: 1, max: 2 }), dt: dtArb, maxWait: fc.option(fc.integer({ min: 0, max: 8000 }), { nil: undefined }) }) },
      { weight: 4, arbitrary: fc.record({ op: fc.constant("cancel" as const), pick: fc.nat(), dt: dtArb }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant("change" as const), rate: fc.integer({ min: 2, max: 4 }), dt: dtArb }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant("override" as const), key: fc.constantFrom(...KEYS), rate: fc.integer({ min: 2, max: 4 }), dt: dtArb }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant("block" as const), key: fc.constantFrom(...KEYS), ms: fc.integer({ min: 1, max: 3000 }), dt: dtArb }) },
    ),
    { minLength: 1, maxLength: 14 },
  ),
});

/** A config of `kind` at `rate` tokens per `period` (a token bucket's and a fixed window's capacity `rate + extra`). */
function configOf(kind: Kind, rate: number, extra: number, period: number): RateLimitConfig {
  if (kind === "sliding window") return { kind, rate, period };
  if (kind === "fixed window") return { kind, rate, period, capacity: rate + extra, start: 0 };
  return { kind, rate, period, capacity: rate + extra };
}

/** What the histories exercised, so the properties aren't vacuous (checked by the last test). */
const seen = { delayed: 0, waited: 0, cancelled: 0, refused: 0, blocked: 0, started: 0, changed: 0, histories: 0 };

/** Work accepted: a run (`id`), or an action waiting its turn (`waiter`, with the instant it woke once it has). */
type Accepted = { key: Key; to: string; count: number; runAt: number; id: string; order: number; cancelled: boolean; waiter?: { from?: number; wokeAt?: number; waited?: number } };
/** Whether the work has a timer: every job does; a waiter only when its turn is still ahead. */
const timed = (r: Accepted) => r.waiter === undefined || r.runAt > r.waiter.from!;

describe("waiting until allowed, over random histories with the scheduler run", () => {
  test.prop([historyArb], runs(100, 1000))(
    "order, runAt, the limit kind by kind, blocks, cancellation",
    async ({ kind, rate, extra, period, ops }) => {
      vi.setSystemTime(T0);
      seen.histories++;
      const t = makeTest(schema);
      // Sends are recorded by the app's `send`; each carries a unique `to`.
      let limiter = new RateLimiter(components.rateLimiter, { p: configOf(kind, rate, extra, period) });
      const rates = [rate];
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
              accepted.push({ key: op.key, to, count: op.count, runAt: r.runAt, id: r.id, order: accepted.length, cancelled: false });
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
            const entry: Accepted = { key: op.key, to, count: op.count, runAt: NaN, id: "", order: accepted.length, cancelled: true, waiter: {} };
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
          case "change":
            seen.changed++;
            rates.push(op.rate);
            limiter = new RateLimiter(components.rateLimiter, { p: configOf(kind, op.rate, extra, period) });
            break;
          case "override": {
            rates.push(op.rate);
            // It replaces a block of the key.
            for (const b of blocks) if (b.key === op.key) b.until = Math.min(b.until, Date.now());
            await t.run((ctx) => limiter.setOverride(ctx, "p", { key: op.key }, { config: configOf(kind, op.rate, extra, period) }));
            break;
          }
          case "block": {
            const until = Date.now() + op.ms;
            // It replaces the key's override, a block too.
            for (const b of blocks) if (b.key === op.key) b.until = Math.min(b.until, Date.now());
            blocks.push({ key: op.key, from: Date.now(), until });
            await t.run((ctx) => limiter.setOverride(ctx, "p", { key: op.key }, { blockedUntil: until }));
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
        // runAt never decreases in acceptance order, and the runs start in that order, never before runAt.
        for (let i = 1; i < mine.length; i++) expect(mine[i]!.runAt).toBeGreaterThanOrEqual(mine[i - 1]!.runAt);
        const jobs = mine.filter((r) => !r.waiter);
        const started = jobs.map((r) => sent.find((s) => s.to === r.to)!);
        for (let i = 0; i < jobs.length; i++) expect(started[i]!.at).toBeGreaterThanOrEqual(jobs[i]!.runAt);
        expect(sent.filter((s) => jobs.some((r) => r.to === s.to)).map((s) => s.to)).toEqual(jobs.map((r) => r.to));
        const most = configOf(kind, Math.max(...rates), extra, period);
        const capacity = most.capacity ?? most.rate;
        const tokens = (from: number, to: number) => mine.filter((o) => o.runAt >= from && o.runAt <= to).reduce((s, o) => s + o.count, 0);
        if (kind === "sliding window") {
          // Never more than the rate in any window of the period, to the ms.
          for (const r of mine) expect(tokens(r.runAt - period + 1, r.runAt)).toBeLessThanOrEqual(most.rate);
        } else if (rates.length === 1) {
          // One config throughout: the runAt instants, replayed as plain admissions, are all admitted.
          const p = paramsOf(most, phaseOf(0, period));
          let state: State | null = null;
          for (const r of mine) {
            const d = decideRow(state, p, r.runAt, r.count, false);
            expect(d.ok, `${key} ${r.to} at +${r.runAt - T0}`).toBe(true);
            if (d.ok && d.next) state = d.next;
          }
        } else {
          // Runs queued before a config change keep their instants, so a replay under one config
          // can't be asked for; the bounds of the most generous config hold over every span.
          for (const a of mine) {
            for (const b of mine) {
              if (b.runAt < a.runAt) continue;
              const bound =
                kind === "token bucket"
                  ? capacity + (most.rate * (b.runAt - a.runAt)) / period
                  : capacity + most.rate * (Math.floor((b.runAt - T0) / period) - Math.floor((a.runAt - T0) / period));
              expect(tokens(a.runAt, b.runAt)).toBeLessThanOrEqual(bound + 1e-9);
            }
          }
        }
      }
    },
    TIMEOUT,
  );

  // Over 100 histories, in three runs of the suite, each count was 9 or more, the rarest (refusals
  // inside a block, cancellations) about 15 on average: a count of 0 by chance is below one in a
  // million (Poisson, mean 15). (Under FC_QUICK a fifth of the histories run.)
  test("the histories exercised every case: delays, waits, cancellations, refusals, blocks, started runs, config changes", () => {
    expect(seen.histories).toBeGreaterThan(0);
    for (const [what, n] of Object.entries(seen)) expect(n, what).toBeGreaterThan(0);
  });
});
