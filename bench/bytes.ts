// Bytes per steady call (npm run bench -- --only bytes): the documents' bytes a `rateLimit` call
// reads and writes, ours beside @convex-dev/rate-limiter's, measured with convex-test's
// ctx.meta.getTransactionMetrics() around the call, after a warm-up that creates the rows.
import type { Clock } from "@sinonjs/fake-timers";
import batchWorker from "@convex-dev/batch-worker/test";
import { preload } from "../tools/clock.js";
import { MINUTE } from "../src/shared/kinds/algebra.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { components, freshApp } from "./app.js";

/** One contender: how its call is made, and the config it runs. */
type Case = {
  label: string;
  impl: "ours" | "upstream";
  config: RateLimitConfig;
  details?: boolean;
  override?: "key" | "tier";
  /**
   * A limit with `networks: true`, each call from {@link ADDRESS}: with no entries, or with
   * {@link NETWORK_ENTRIES} blocked networks elsewhere and the address's /24 under a config
   * doubling the rate (so the call still takes tokens, decided by the network's entry).
   */
  networks?: "none" | "entries";
};

/** The address the network cases' calls come from. */
const ADDRESS = "203.0.113.7";
/** How many network entries the "entries" case holds besides the address's own. */
const NETWORK_ENTRIES = 100;

/**
 * Mean bytes read and written per call over `calls` calls at `load` times the limit's rate
 * (default half), after `warmup` calls of `warmCount` tokens each (default 1), spaced to keep the
 * same load: a high rate's window fills in fewer calls.
 */
async function bytesPerCall(clock: Clock, t0: number, c: Case, calls: number, warmup: number, load = 0.5, warmCount = 1) {
  const t = freshApp();
  let now = t0;
  clock.setSystemTime(now);
  // An override doubling the rate: the limit's own (keyless) key's, or the tier "pro"'s, which the calls name.
  if (c.override) {
    const target: { key?: string } | { tier: string } = c.override === "key" ? {} : { tier: "pro" };
    const doubled = { config: { ...c.config, rate: 2 * c.config.rate } };
    await t.run((ctx) => ctx.runMutation(components.rateLimiter.overrides.set, { name: "bytes", target, override: doubled, config: c.config }));
  }
  if (c.networks === "entries") {
    const set = (target: { network: string }, override: object) =>
      t.run((ctx) => ctx.runMutation(components.rateLimiter.overrides.set, { name: "bytes", target, override: override as never, config: c.config }));
    for (let i = 0; i < NETWORK_ENTRIES; i++) await set({ network: `10.${i}.0.0/16` }, { blockedUntil: t0 + 1e12 });
    const { networks: _own, ...terms } = c.config;
    await set({ network: "203.0.113.0/24" }, { config: { ...terms, rate: 2 * c.config.rate } });
  }
  const total = { read: 0, written: 0 };
  const async = c.config.applyUpdates === "asynchronously";
  for (let i = 0; i < warmup + calls; i++) {
    const count = i < warmup ? warmCount : 1;
    const step = (count * c.config.period) / c.config.rate / load;
    // Asynchronous mode: the clock runs the timers due meanwhile, so the applier folds the recorded
    // takes into the row as it would in a deployment, and a call reads the takes not yet folded.
    // (With the clock only set, no applier ran and each call read every take since the first.)
    if (async) {
      await clock.tickAsync(step);
      await t.finishInProgressScheduledFunctions();
    } else clock.setSystemTime(Math.floor((now += step)));
    const m = await t.run(async (ctx) => {
      const before = await ctx.meta.getTransactionMetrics();
      if (c.impl === "ours") {
        await ctx.runMutation(components.rateLimiter.lib.rateLimit, {
          name: "bytes",
          config: c.config,
          ...(count === 1 ? {} : { count }),
          ...(c.details ? { details: true } : {}),
          ...(c.override === "tier" ? { tier: "pro" } : {}),
          ...(c.networks ? { ip: ADDRESS } : {}),
        });
      } else {
        await ctx.runMutation(components.upstream.lib.rateLimit, { name: "bytes", config: c.config as never });
      }
      const after = await ctx.meta.getTransactionMetrics();
      return { read: after.bytesRead.used - before.bytesRead.used, written: after.bytesWritten.used - before.bytesWritten.used };
    });
    if (i < warmup) continue;
    total.read += m.read;
    total.written += m.written;
  }
  return { read: total.read / calls, written: total.written / calls };
}

/** The cases: each kind, unsharded and 10 shards, and ours with asynchronous mode, metrics and details. */
export function bytesCases(): Case[] {
  const tb: RateLimitConfig = { kind: "token bucket", rate: 600, period: MINUTE };
  const fw: RateLimitConfig = { kind: "fixed window", rate: 600, period: MINUTE };
  const sw: RateLimitConfig = { kind: "sliding window", exact: false, rate: 600, period: MINUTE };
  const exact: RateLimitConfig = { kind: "sliding window", rate: 600, period: MINUTE };
  const cases: Case[] = [];
  for (const [name, config] of [["token bucket", tb], ["fixed window", fw]] as const) {
    for (const shards of [1, 10]) {
      const c = { ...config, shards };
      cases.push({ label: `${name}, ${shards} shard${shards > 1 ? "s" : ""}`, impl: "upstream", config: c });
      cases.push({ label: `${name}, ${shards} shard${shards > 1 ? "s" : ""}`, impl: "ours", config: c });
    }
  }
  cases.push({ label: "sliding (approx.), 1 shard", impl: "ours", config: sw });
  cases.push({ label: "sliding (approx.), 10 shards", impl: "ours", config: { ...sw, shards: 10 } });
  cases.push({ label: "sliding (exact), 1 shard", impl: "ours", config: exact });
  cases.push({ label: "sliding (exact), 10 shards", impl: "ours", config: { ...exact, shards: 10 } });
  cases.push({ label: "token bucket, metrics", impl: "ours", config: { ...tb, metrics: true } });
  cases.push({ label: "token bucket, details", impl: "ours", config: tb, details: true });
  cases.push({ label: "token bucket, asynchronous", impl: "ours", config: { ...tb, applyUpdates: "asynchronously" } });
  cases.push({ label: "token bucket, key override", impl: "ours", config: tb, override: "key" });
  cases.push({ label: "token bucket, tier override", impl: "ours", config: tb, override: "tier" });
  cases.push({ label: "token bucket, networks: none", impl: "ours", config: { ...tb, networks: true }, networks: "none" });
  cases.push({ label: `token bucket, ${NETWORK_ENTRIES + 1} networks`, impl: "ours", config: { ...tb, networks: true }, networks: "entries" });
  return cases;
}

/** Prints the bytes table. */
export async function bytesSection(opts: { calls: number }, clock: Clock, t0: number): Promise<void> {
  console.log(`\nBYTES READ AND WRITTEN per steady call (convex-test's getTransactionMetrics)`);
  console.log(`   ${opts.calls} calls at half the rate after 20 to warm up, one key, through an app mutation.`);
  // Loaded before any call: a module first fetched inside a mutation would arm a timer there.
  await preload(batchWorker.modules);
  const rows: string[] = [];
  const up = new Map<string, { read: number; written: number }>();
  for (const c of bytesCases()) {
    const b = await bytesPerCall(clock, t0, c, opts.calls, 20);
    if (c.impl === "upstream") up.set(c.label, b);
    const base = c.impl === "ours" ? up.get(c.label) : undefined;
    const ratio = (x: number, y: number | undefined) => (y === undefined ? "" : ` (${(x / y).toFixed(2)}x)`);
    rows.push(
      `   ${c.label.padEnd(28)} ${c.impl.padEnd(9)} read ${b.read.toFixed(0).padStart(5)}${ratio(b.read, base?.read).padEnd(9)} written ${b.written.toFixed(0).padStart(5)}${ratio(b.written, base?.written)}`,
    );
  }
  console.log(rows.join("\n"));
  console.log(`   asynchronous: the call alone. The applier's batches, which fold the recorded takes into`);
  console.log(`   the row (reading the takes and the row, writing the row, deleting the takes), are not counted.`);
}

/** The rates per minute of the exact window's cost table, against a token bucket's bytes. */
export const EXACT_COST_RATES = [10, 100, 1000, 100_000] as const;

/**
 * Prints the exact sliding window's cost against its rate, beside a token bucket's: a row's log
 * holds what the row took in its last window, at most `MAX_LOG_ENTRIES` entries, so its bytes
 * stop growing with the rate. Above 1,000 per minute the warm-up calls take rate / 1,000 tokens
 * each (a window's worth in 1,000 calls, each as far apart as that many single calls): the log
 * they leave is merged to the same number of entries as single calls' would be.
 */
export async function exactCostSection(opts: { calls: number }, clock: Clock, t0: number): Promise<void> {
  console.log(`\nTHE EXACT SLIDING WINDOW'S COST against its rate (unsharded, one key, steady calls)`);
  console.log(`   After a window's worth of calls to fill the log, ${opts.calls} calls measured. The row is read`);
  console.log(`   and written whole on each call: bytes written per call is about the row's size.`);
  const rows: string[] = [];
  for (const rate of EXACT_COST_RATES) {
    const bucket: RateLimitConfig = { kind: "token bucket", rate, period: MINUTE };
    const tb = await bytesPerCall(clock, t0, { label: "", impl: "ours", config: bucket }, opts.calls, 20, 1);
    for (const load of [0.5, 1]) {
      const config: RateLimitConfig = { kind: "sliding window", rate, period: MINUTE };
      const warmCount = Math.max(1, Math.ceil(rate / 1000));
      const warmup = Math.ceil((rate * load) / warmCount) + 5;
      const b = await bytesPerCall(clock, t0, { label: "", impl: "ours", config }, opts.calls, warmup, load, warmCount);
      rows.push(
        `   rate ${rate.toLocaleString("en-US").padStart(7)} per min, load ${load.toFixed(1)}:   read ${b.read.toFixed(0).padStart(5)} (${(b.read / tb.read).toFixed(2)}x)   written ${b.written.toFixed(0).padStart(5)} (${(b.written / tb.written).toFixed(2)}x)`,
      );
    }
  }
  console.log(rows.join("\n"));
  console.log(`   (Nx): against a token bucket of the same rate at full load. The approximate window`);
  console.log(`   (exact: false) costs the same as a token bucket at every rate: see the bytes table.`);
}
