// Section 7 of `npm run bench` (`--only metrics`): what `metrics: true` costs. The same calls, at
// the same instants with the same random draws, run on two convex-test apps, one whose limits
// record metrics; each call's documents read and written come from ctx.meta.getTransactionMetrics().
// Then the fold: how many transactions, reads and writes it takes to sum a stretch of traffic, and
// how many summary rows remain. Whether metrics add conflicts is `npm run simulate`'s to show (its
// metrics table). It measures and prints; it asserts nothing. Time is simulated, randomness seeded.
import batchWorker from "@convex-dev/batch-worker/test";
import { convexTest } from "convex-test";
import type { GenericDatabaseReader, GenericDataModel } from "convex/server";
import { componentsGeneric, defineSchema } from "convex/server";
import type { Clock } from "@sinonjs/fake-timers";
import { MINUTE } from "../src/shared/kinds/algebra.js";
import { RateLimiter } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
import { FOLD_BATCH, FOLD_SETTLE_MS } from "../src/component/metrics.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { register } from "../src/test.js";
import { preload } from "../tools/clock.js";
import { seededRandom, seedMathRandom, streamSeed } from "../tools/random.js";
import { costOf, type Cost } from "./app.js";
import { num, table } from "./table.js";

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };
/** convex-test finds an app's root by its `_generated` modules: one empty module stands in. */
const APP_MODULES = { "./_generated/none.ts": async () => ({}) };

/** The limits measured, each with and without metrics. */
const LIMITS = {
  "unsharded": { kind: "token bucket", rate: 60, period: MINUTE },
  "10 shards": { kind: "token bucket", rate: 60, period: MINUTE, shards: 10 },
  "fixed window": { kind: "fixed window", rate: 60, period: MINUTE },
  "asynchronous": { kind: "token bucket", rate: 60, period: MINUTE, applyUpdates: "asynchronously" },
} satisfies Record<string, RateLimitConfig>;
type Name = keyof typeof LIMITS;
const NAMES = Object.keys(LIMITS) as Name[];

export type MetricsOptions = { seed: number; calls: number };

type Tally = { calls: number; off: Cost; on: Cost };

/** One convex-test app with the component, and a RateLimiter over `limits`. */
function app(limits: Record<Name, RateLimitConfig>) {
  const t = convexTest(defineSchema({}), APP_MODULES);
  register(t);
  return { t, rl: new RateLimiter(components.rateLimiter, limits) };
}

type RunInComponent = <T>(name: string, fn: (ctx: { db: GenericDatabaseReader<GenericDataModel> }) => Promise<T>) => Promise<T>;

/** Documents of `table` in the component. */
async function countDocs(t: object, tableName: string): Promise<number> {
  const run = (t as { runInComponent: RunInComponent }).runInComponent.bind(t);
  return run("rateLimiter", async (ctx) => (await ctx.db.query(tableName as never).collect()).length);
}

/**
 * metricsSection prints the documents read and written per `limit` call with and without metrics,
 * by outcome, over Poisson arrivals at 1.5 times each limit's rate (so some are refused), and what
 * the fold costs for them.
 */
export async function metricsSection(opts: MetricsOptions, clock: Clock, start: number): Promise<void> {
  console.log(`\n7. METRICS: documents read and written per limit call, with and without metrics: true`);
  console.log(`   ${num(opts.calls)} calls per limit, Poisson arrivals at 1.5x the rate (60/min), key "k"; the same`);
  console.log(`   calls at the same instants with the same random draws on two convex-test apps,`);
  console.log(`   ctx.meta.getTransactionMetrics() around each call.`);
  // The asynchronous limit's applier runs on the batch worker: load its modules before any call.
  await preload(batchWorker.modules);
  const off = app(Object.fromEntries(NAMES.map((n) => [n, LIMITS[n]])) as Record<Name, RateLimitConfig>);
  const on = app(Object.fromEntries(NAMES.map((n) => [n, { ...LIMITS[n], metrics: true }])) as Record<Name, RateLimitConfig>);
  const tallies = new Map<string, Tally>();
  const zero = (): Cost => ({ read: 0, written: 0, queries: 0 });
  const measure = (which: typeof on, name: Name, seedLabel: string) =>
    which.t.run(async (ctx) => {
      seedMathRandom(opts.seed, seedLabel);
      const { result, ...cost } = await costOf(ctx, () => which.rl.limit(ctx, name, { key: "k" }));
      return { ok: result.ok, ...cost };
    });
  // One limit after another on the clock (convex-test's creation times never go backwards).
  let now = start;
  const mismatched: string[] = [];
  for (const name of NAMES) {
    const arrivals = seededRandom(streamSeed(opts.seed, `metrics/arrivals/${name}`));
    for (let i = 0; i < opts.calls; i++) {
      now += -Math.log(1 - arrivals()) / ((1.5 * 60) / MINUTE);
      clock.setSystemTime(Math.floor(now));
      const label = `metrics/${name}/${i}`;
      const a = await measure(off, name, label);
      const b = await measure(on, name, label);
      // The asynchronous limit's applier, in both apps, at this instant.
      for (const which of [off, on]) {
        await which.t.finishAllScheduledFunctions(() => clock.runAll());
        clock.setSystemTime(Math.floor(now));
      }
      if (a.ok !== b.ok) mismatched.push(`${name} #${i}`);
      const id = `${name}|${a.ok ? "admitted" : "refused"}`;
      const tally = tallies.get(id) ?? { calls: 0, off: zero(), on: zero() };
      tally.calls++;
      for (const [cost, m] of [[tally.off, a], [tally.on, b]] as const) {
        cost.read += m.read;
        cost.written += m.written;
        cost.queries += m.queries;
      }
      tallies.set(id, tally);
    }
  }
  const per = (x: number, n: number) => (x / n).toFixed(2);
  const rows = [...tallies.entries()].map(([id, t]) => {
    const [name, outcome] = id.split("|");
    return [
      name!,
      outcome!,
      num(t.calls),
      `${per(t.off.read, t.calls)} / ${per(t.on.read, t.calls)}`,
      `${per(t.off.written, t.calls)} / ${per(t.on.written, t.calls)}`,
      `${per(t.off.queries, t.calls)} / ${per(t.on.queries, t.calls)}`,
    ];
  });
  console.log();
  console.log(
    table(
      [
        { title: "limit" },
        { title: "outcome" },
        { title: "calls", right: true },
        { title: "read off / on", right: true },
        { title: "written off / on", right: true },
        { title: "queries off / on", right: true },
      ],
      rows,
    ),
  );
  console.log(`   Per call, without / with metrics. With metrics a call reads what it read without, and`);
  console.log(`   writes one document more: its event, an insert (a refusal's only write). Decisions`);
  console.log(`   differing between the two apps: ${mismatched.length === 0 ? "none" : mismatched.join(", ")}.`);

  // The fold, as a cron would run it once every event has settled.
  const events = await countDocs(on.t, "metricEvents");
  clock.setSystemTime(Math.floor(now) + FOLD_SETTLE_MS + 1);
  const fold = await on.t.run(async (ctx) => {
    const m0 = await ctx.meta.getTransactionMetrics();
    const first = await on.rl.foldMetrics(ctx);
    const m1 = await ctx.meta.getTransactionMetrics();
    return { first, read: m1.documentsRead.used - m0.documentsRead.used, written: m1.documentsWritten.used - m0.documentsWritten.used };
  });
  const at = Date.now();
  await on.t.finishAllScheduledFunctions(() => clock.runAll());
  clock.setSystemTime(at);
  const buckets = await countDocs(on.t, "metricBuckets");
  const keys = await countDocs(on.t, "metricKeys");
  const left = await countDocs(on.t, "metricEvents");
  const transactions = Math.ceil(events / FOLD_BATCH);
  console.log(
    `\n   The fold of ${num(events)} events (${NAMES.length} limits over ${num((Math.floor(now) - start) / MINUTE, 1)} simulated min): ${transactions} transaction(s) of up to ${FOLD_BATCH} events;`,
  );
  console.log(
    `   the first read ${num(fold.read)} and wrote ${num(fold.written)} documents for ${num(fold.first.folded)} events (${per(fold.read, fold.first.folded)} reads and ${per(fold.written, fold.first.folded)} writes per event;`,
  );
  console.log(`   convex-test counts one extra read per delete: each event is read once, deleted once, and each`);
  console.log(`   minute's summary and each refused key's row is looked up and written once per transaction).`);
  console.log(`   Left: ${num(buckets)} per-minute summaries and ${num(keys)} per-key refusal rows in place of ${num(events)} events (${num(left)} unfolded).`);
}
