// Section 5 of `npm run bench` (`--only cleanup`): the rows an app keeps over a simulated month
// with and without a daily clean-up of idle keys. Many users, each active a few times: the month
// runs on an in-memory store driven by the component's own flows and clean-up decision
// (tools/memory-store.ts), since convex-test's index reads scan the whole table; a smaller month
// then runs through the component itself on convex-test (`RateLimiter.cleanup`, its batches
// rescheduling themselves), and its row counts are compared with the model's. Time is
// simulated, randomness seeded.
import { convexTest } from "convex-test";
import type { GenericDatabaseReader, GenericDataModel } from "convex/server";
import { componentsGeneric, defineSchema } from "convex/server";
import type { Clock } from "@sinonjs/fake-timers";
import { DAY, HOUR, MINUTE, SECOND } from "../src/shared/kinds/algebra.js";
import { RateLimiter } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
import type { RateLimitConfig, RateLimitResult } from "../src/shared/shapes/validators.js";
import { register } from "../src/test.js";
import { MemoryStore } from "../tools/memory-store.js";
import { seededRandom, seedMathRandom, streamSeed } from "../tools/random.js";
import { progress, secondsSince } from "./section.js";
import { num, pct, table } from "./table.js";

/** The app's per-user limits: bursts of 3 messages (10 a minute), and 200 a day. */
const LIMITS = {
  sendMessage: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
  dailyMessages: { kind: "fixed window", rate: 200, period: DAY },
} satisfies Record<string, RateLimitConfig>;
const NAMED = Object.entries(LIMITS).map(([name, config]) => ({ name, config }));
/** The clean-up's batch: rows read per transaction (the component's default). */
const BATCH = 500;

const components = componentsGeneric() as unknown as { rateLimiter: ComponentApi };
/** convex-test finds an app's root by its `_generated` modules: one empty module stands in. */
const APP_MODULES = { "./_generated/none.ts": async () => ({}) };

export type CleanupOptions = {
  seed: number;
  /** Users of the month on the in-memory store. */
  users: number;
  /** Users of the month through the component on convex-test. */
  checkUsers: number;
  days: number;
};

/** One message a user sends at `at` (ms). */
type Message = { at: number; user: string };

/**
 * The month's messages: each user is active on 1 to 4 occasions (2.5 on average) at uniform
 * instants of the month, and sends 1 to 6 messages a second apart each time (a burst above 3
 * meets the limit).
 */
function messages(seed: number, users: number, days: number, start: number): Message[] {
  const random = seededRandom(streamSeed(seed, `cleanup/activity/${users}`));
  const out: Message[] = [];
  for (let u = 0; u < users; u++) {
    const user = `user${u}`;
    const sessions = 1 + Math.floor(random() * 4);
    for (let s = 0; s < sessions; s++) {
      const at = start + Math.floor(random() * days * DAY);
      const count = 1 + Math.floor(random() * 6);
      for (let m = 0; m < count; m++) out.push({ at: at + m * SECOND, user });
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

/** The instants of the daily clean-up: 04:00 UTC each day, as a cron would run it. */
function cleanupTimes(days: number, start: number): number[] {
  return Array.from({ length: days }, (_, d) => start + d * DAY + 4 * HOUR);
}

/** Rows after each daily run, rows at the end, and what the runs read and deleted. */
type Month = {
  messages: number;
  admitted: number;
  disagreements: number;
  after: number[];
  before: number[];
  end: { cleaned: number; kept: number };
  read: number[];
  deleted: number[];
  keysRead: number[];
};

/** A message's decision: the burst limit, then (if it admits) the daily one. */
function send(limit: (name: keyof typeof LIMITS) => RateLimitResult): RateLimitResult[] {
  const burst = limit("sendMessage");
  return burst.ok ? [burst, limit("dailyMessages")] : [burst];
}

/** The month on two in-memory stores, one cleaned up daily and one never. */
function modelMonth(seed: number, users: number, days: number, start: number): Month {
  const all = messages(seed, users, days, start);
  const times = cleanupTimes(days, start);
  const cleaned = new MemoryStore();
  const kept = new MemoryStore();
  const month: Month = {
    messages: all.length,
    admitted: 0,
    disagreements: 0,
    after: [],
    before: [],
    end: { cleaned: 0, kept: 0 },
    read: [],
    deleted: [],
    keysRead: [],
  };
  const noDraws = () => 0; // unsharded limits read their one row whatever the draw
  let next = 0;
  const cleanUp = (at: number) => {
    month.before.push(cleaned.rowCount());
    const tally = cleaned.cleanup(NAMED, at);
    month.read.push(tally.rowsRead);
    month.keysRead.push(tally.keysRead);
    month.deleted.push(tally.rowsDeleted);
    month.after.push(cleaned.rowCount());
  };
  for (const m of all) {
    while (next < times.length && times[next]! <= m.at) cleanUp(times[next++]!);
    const decide = (store: MemoryStore) =>
      send((name) => store.limit({ name, key: m.user, config: LIMITS[name] }, m.at, noDraws));
    const [a, b] = [decide(cleaned), decide(kept)];
    if (JSON.stringify(a) !== JSON.stringify(b)) month.disagreements += 1;
    if (a.every((r) => r.ok)) month.admitted += 1;
  }
  while (next < times.length) cleanUp(times[next++]!);
  month.end = { cleaned: cleaned.rowCount(), kept: kept.rowCount() };
  return month;
}

export type RowCounter = (
  component: string,
  handler: (ctx: { db: GenericDatabaseReader<GenericDataModel> }) => Promise<number>,
) => Promise<number>;

/** convex-test's `runInComponent` exists at runtime but isn't in its types; narrow to it. */
export function rowCounter(t: object): RowCounter {
  if (!("runInComponent" in t) || typeof t.runInComponent !== "function") {
    throw new Error("this convex-test has no runInComponent");
  }
  const run: unknown = t.runInComponent.bind(t);
  return run as RowCounter;
}

/** The month through the component on convex-test, cleaned up daily: rows after each run. */
async function componentMonth(
  seed: number,
  users: number,
  days: number,
  start: number,
  clock: Clock,
): Promise<{ after: number[]; admitted: number }> {
  seedMathRandom(seed, "cleanup/component");
  clock.setSystemTime(start);
  const t = convexTest(defineSchema({}), APP_MODULES);
  register(t);
  const rl = new RateLimiter(components.rateLimiter, LIMITS);
  const countRows = () => rowCounter(t)("rateLimiter", async (ctx) => (await ctx.db.query("rateLimits").collect()).length);
  const all = messages(seed, users, days, start);
  const times = cleanupTimes(days, start);
  const out = { after: [] as number[], admitted: 0 };
  let next = 0;
  const cleanUp = async (at: number) => {
    clock.setSystemTime(at);
    await t.run((ctx) => rl.cleanup(ctx));
    // The batches it scheduled, at this instant.
    await t.finishAllScheduledFunctions(() => clock.runAll());
    clock.setSystemTime(at);
    out.after.push(await countRows());
  };
  for (const m of all) {
    while (next < times.length && times[next]! <= m.at) await cleanUp(times[next++]!);
    clock.setSystemTime(m.at);
    const results = await t.run(async (ctx) => {
      const burst = await rl.limit(ctx, "sendMessage", { key: m.user });
      return burst.ok ? [burst, await rl.limit(ctx, "dailyMessages", { key: m.user })] : [burst];
    });
    if (results.every((r) => r.ok)) out.admitted += 1;
  }
  while (next < times.length) await cleanUp(times[next++]!);
  return out;
}

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);

/** Runs section 5 and prints its tables. */
export async function cleanupSection(opts: CleanupOptions, clock: Clock, start: number): Promise<void> {
  const started = performance.now();
  const month = modelMonth(opts.seed, opts.users, opts.days, start);
  console.log(`\n5. CLEAN-UP of idle keys over a simulated month (RateLimiter.cleanup, daily)`);
  console.log(`   ${num(opts.users)} users, each active 1-4 times in ${opts.days} days, sending 1-6 messages`);
  console.log(`   a second apart each time (${num(month.messages)} messages). Per user: sendMessage (token`);
  console.log(`   bucket, 10/min, bursts of 3) and dailyMessages (fixed window, 200/day). The same`);
  console.log(`   requests go to two stores: one cleaned up daily at 04:00 UTC (a cron), one never.`);
  console.log(`   In-memory store run by the component's flows and clean-up decision.`);
  console.log();
  console.log(
    table(
      [
        { title: "" },
        { title: "end of month", right: true },
        { title: "after a run", right: true },
        { title: "peak", right: true },
        { title: "end/user", right: true },
      ],
      [
        ["never cleaned up", num(month.end.kept), "", num(month.end.kept), (month.end.kept / opts.users).toFixed(2)],
        [
          "cleaned up daily",
          num(month.end.cleaned),
          `${num(mean(month.after))} (mean)`,
          num(Math.max(...month.before, month.end.cleaned)),
          (month.end.cleaned / opts.users).toFixed(3),
        ],
      ],
    ),
  );
  console.log(`   end of month: rows when the month ends (20 h after the last run); after`);
  console.log(`   a run: rows just after each daily run; peak: the most rows at any time.`);
  console.log(`   Rows kept at the end: ${pct(month.end.cleaned / month.end.kept)} of those without the clean-up.`);
  console.log(`   Cost of a daily run (mean): ${num(mean(month.read))} rows read (1 document each) and ${num(mean(month.keysRead))}`);
  console.log(`   index queries (1 per key, for takes waiting), ${num(mean(month.deleted))} rows deleted (1 write each),`);
  console.log(`   in ${num(Math.ceil(mean(month.read) / BATCH))} transaction(s) of at most ${BATCH} rows.`);
  console.log(`   Messages admitted: ${num(month.admitted)} of ${num(month.messages)}; decisions that differed`);
  console.log(`   between the two stores: ${num(month.disagreements)}.`);
  progress(`clean-up model: ${num(month.messages)} messages in ${secondsSince(started)}`);

  const checked = performance.now();
  const small = modelMonth(opts.seed, opts.checkUsers, opts.days, start);
  const real = await componentMonth(opts.seed, opts.checkUsers, opts.days, start, clock);
  const agree = JSON.stringify(real.after) === JSON.stringify(small.after) && real.admitted === small.admitted;
  progress(`clean-up check: ${num(small.messages)} messages in ${secondsSince(checked)}`);
  console.log(`   Check through the component on convex-test, ${num(opts.checkUsers)} users (${num(small.messages)} messages):`);
  console.log(`   rows after each daily run ${agree ? "equal" : "DIFFER from"} the model's (end: ${num(real.after.at(-1) ?? 0)}`);
  console.log(`   vs ${num(small.after.at(-1) ?? 0)}; mean ${num(mean(real.after))} vs ${num(mean(small.after))}); ${num(real.admitted)} vs ${num(small.admitted)} admitted.`);
}
