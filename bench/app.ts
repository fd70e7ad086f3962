// The convex-test app the benchmark's sections drive (our component as `rateLimiter`, upstream's
// as `upstream`), and its timing of `rateLimit` calls: time per call, several contenders measured
// alternately so they see the same machine load.
import upstream from "@convex-dev/rate-limiter/test";
import type { ComponentApi as UpstreamApi } from "@convex-dev/rate-limiter/_generated/component.js";
import type { Clock } from "@sinonjs/fake-timers";
import { convexTest } from "convex-test";
import type { GenericDataModel, GenericMutationCtx, TransactionMetrics } from "convex/server";
import { componentsGeneric, defineSchema } from "convex/server";
import type { ComponentApi } from "../src/component/_generated/component.js";
import { register } from "../src/test.js";

/** Both components, as an app's generated API would give them. */
export const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi; upstream: UpstreamApi };

/**
 * The app has no functions of its own, but convex-test finds an app's root folder by the path of
 * its `_generated` modules, so one empty module stands in for them.
 */
const APP_MODULES = { "./_generated/none.ts": async () => ({}) };

/** A fresh convex-test app with our component as `rateLimiter` and upstream's as `upstream`. */
export function freshApp() {
  const t = convexTest(defineSchema({}), APP_MODULES);
  register(t);
  upstream.register(t, "upstream");
  return t;
}

/** One `rateLimit` call, as an app's mutation makes it. */
export type RateLimitCall = (ctx: Pick<GenericMutationCtx<GenericDataModel>, "runMutation">) => Promise<{ ok: boolean }>;

/** A contender of {@link timePerCall}: a label and the call it times. */
export type Contender = { label: string; call: RateLimitCall };

/** One round of one contender in {@link timeRounds}: ms per call, wall clock and CPU (user + system). */
export type Round = { wall: number; cpu: number };

/**
 * timeRounds times each contender (in their order): `calls` calls each, `every` ms apart on the
 * simulated clock from `t0`, through an app mutation on convex-test, in `rounds` rounds, each on a
 * fresh app, the contenders' order rotating from round to round so that all see the same machine
 * load. Each first makes 50 unmeasured calls (module loading, the first rows). Returns each
 * contender's rounds, ms per call by wall clock and by this process's CPU time (less disturbed by
 * other work on the machine). convex-test's own overhead dominates, so ratios understate
 * differences in the decision itself.
 */
export async function timeRounds(
  clock: Clock,
  t0: number,
  contenders: readonly Contender[],
  { calls, rounds, every }: { calls: number; rounds: number; every: number },
): Promise<Round[][]> {
  for (const c of contenders) {
    const t = freshApp();
    clock.setSystemTime(t0);
    for (let i = 0; i < 50; i++) await t.run((ctx) => c.call(ctx));
  }
  const perRound = Math.max(1, Math.round(calls / rounds));
  const out: Round[][] = contenders.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const i = (k + round) % contenders.length;
      const t = freshApp();
      let now = t0;
      clock.setSystemTime(now);
      const started = performance.now();
      const cpu = process.cpuUsage();
      for (let j = 0; j < perRound; j++) {
        now += every;
        clock.setSystemTime(now);
        await t.run((ctx) => contenders[i]!.call(ctx));
      }
      const used = process.cpuUsage(cpu);
      out[i]!.push({ wall: (performance.now() - started) / perRound, cpu: (used.user + used.system) / 1000 / perRound });
    }
  }
  return out;
}

/** timePerCall returns each contender's mean wall-clock ms per call over {@link timeRounds}. */
export async function timePerCall(
  clock: Clock,
  t0: number,
  contenders: readonly Contender[],
  options: { calls: number; rounds: number; every: number },
): Promise<number[]> {
  const rounds = await timeRounds(clock, t0, contenders, options);
  return rounds.map((r) => r.reduce((sum, x) => sum + x.wall, 0) / r.length);
}

/** What calls cost within one transaction: documents read and written, and index ranges queried. */
export type Cost = { read: number; written: number; queries: number };

/**
 * costOf runs `f` in `ctx`'s transaction and returns its result with what it cost, from
 * convex-test's `ctx.meta.getTransactionMetrics()` read before and after.
 */
export async function costOf<T>(ctx: { meta: { getTransactionMetrics(): Promise<TransactionMetrics> } }, f: () => Promise<T>): Promise<Cost & { result: T }> {
  const before = await ctx.meta.getTransactionMetrics();
  const result = await f();
  const after = await ctx.meta.getTransactionMetrics();
  return {
    result,
    read: after.documentsRead.used - before.documentsRead.used,
    written: after.documentsWritten.used - before.documentsWritten.used,
    queries: after.databaseQueries.used - before.databaseQueries.used,
  };
}
