// Section 3 of `npm run bench` (`--only reads`): shard rows read and written per call at 50 % load,
// ours beside @convex-dev/rate-limiter 0.4.0 registered in the same convex-test app, each call in
// its own transaction with ctx.meta.getTransactionMetrics() read around it (app.ts's costOf).
import type { Clock } from "@sinonjs/fake-timers";
import { MINUTE } from "../src/shared/kinds/algebra.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { seededRandom, seedMathRandom, streamSeed } from "../tools/random.js";
import { components, costOf, freshApp, type RateLimitCall } from "./app.js";
import { rowCounter } from "./cleanup.js";
import { KINDS, progress, secondsSince, type Kind } from "./section.js";
import { num, pct, table } from "./table.js";

/** Section 3's options: the seed, and the calls per limit: unmeasured warm-up (creates the shard rows), then measured. */
export type ReadsOptions = { seed: number; warmup: number; measured: number };

/** Runs section 3 from `t0` on `clock` and prints its tables. */
export async function readsSection(opts: ReadsOptions, clock: Clock, t0: number): Promise<void> {
  console.log(`\n3. SHARD ROWS READ AND WRITTEN per call at 50% load (convex-test metrics)`);
  console.log(`   Poisson arrivals of count 1 at half the rate; ${opts.warmup} calls to warm up (rows get`);
  console.log(`   created), then ${opts.measured} measured, each in its own transaction with`);
  console.log(`   ctx.meta.getTransactionMetrics() read before and after the rateLimit call.`);
  const limits = [
    { label: "ours, unsharded", impl: "ours", rate: 60, shards: 1 },
    { label: "ours, 10 shards", impl: "ours", rate: 60, shards: 10 },
    { label: "upstream, 10 shards", impl: "upstream", rate: 60, shards: 10 },
    { label: "ours, 10 shards", impl: "ours", rate: 1000, shards: 10 },
    { label: "upstream, 10 shards", impl: "upstream", rate: 1000, shards: 10 },
  ] as const;
  for (const kind of KINDS) {
    const started = performance.now();
    const rows: string[][] = [];
    for (const limit of limits) {
      const config: RateLimitConfig & { kind: Kind } = {
        kind,
        rate: limit.rate,
        period: MINUTE,
        capacity: limit.rate,
        shards: limit.shards,
      };
      const label = `${limit.rate}/min ${limit.label}`;
      seedMathRandom(opts.seed, `reads/${kind}/${label}`);
      clock.setSystemTime(t0);
      const t = freshApp();
      const countRows = () =>
        rowCounter(t)(
          limit.impl === "ours" ? "rateLimiter" : "upstream",
          async (ctx) => (await ctx.db.query("rateLimits").collect()).length,
        );
      const call: RateLimitCall =
        limit.impl === "ours"
          ? (ctx) => ctx.runMutation(components.rateLimiter.lib.rateLimit, { name: "reads", config })
          : (ctx) => ctx.runMutation(components.upstream.lib.rateLimit, { name: "reads", config });
      const random = seededRandom(streamSeed(opts.seed, `reads/arrivals/${kind}/${label}`));
      const perMs = (0.5 * limit.rate) / MINUTE;
      let now = t0;
      const totals = { ok: 0, read: 0, written: 0, queries: 0 };
      let rowsBefore = 0;
      for (let i = 0; i < opts.warmup + opts.measured; i++) {
        if (i === opts.warmup) rowsBefore = await countRows();
        now += -Math.log(1 - random()) / perMs;
        clock.setSystemTime(Math.floor(now));
        const m = await t.run(async (ctx) => {
          const { result, ...cost } = await costOf(ctx, () => call(ctx));
          return { ok: result.ok, ...cost };
        });
        if (i < opts.warmup) continue;
        totals.ok += m.ok ? 1 : 0;
        totals.read += m.read;
        totals.written += m.written;
        totals.queries += m.queries;
      }
      const inserts = (await countRows()) - rowsBefore;
      const patches = totals.written - inserts;
      const n = opts.measured;
      rows.push([
        label,
        pct(totals.ok / n, 0),
        (totals.read / n).toFixed(2),
        (totals.written / n).toFixed(2),
        num(inserts),
        ((totals.read - patches) / n).toFixed(2),
        (totals.queries / n).toFixed(2),
      ]);
    }
    progress(
      `${kind}: ${num(limits.length * (opts.warmup + opts.measured))} calls in ${secondsSince(started)}`,
    );
    console.log(`\n   ${kind}`);
    console.log(
      table(
        [
          { title: "limit" },
          { title: "ok", right: true },
          { title: "read", right: true },
          { title: "written", right: true },
          { title: "ins.", right: true },
          { title: "shard rd", right: true },
          { title: "queries", right: true },
        ],
        rows,
      ),
    );
  }
  console.log(`   Per measured call: read/written = documents, raw (convex-test counts one`);
  console.log(`   extra read per patch); ins. = rows inserted while measuring (writes that are`);
  console.log(`   not patches); shard rd = read - patches: shard rows actually read (target:`);
  console.log(`   well below 2 for ours); queries = index ranges read.`);
  console.log(`   upstream = @convex-dev/rate-limiter 0.4.0, in the same convex-test app.`);
}
