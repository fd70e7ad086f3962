// Section 1 of `npm run bench` (`--only util`): utilization under saturating demand, through the
// real component on convex-test: a request every 10 ms for some simulated minutes against a
// sharded limit, what it admitted against the ideal, and the worst overshoot of any window.
import type { Clock } from "@sinonjs/fake-timers";
import { MINUTE, SECOND } from "../src/shared/kinds/algebra.js";
import { resolvePhase } from "../src/shared/shards/layout.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { limitOf, maxInWindow, worstExcess } from "../tools/bounds.js";
import { seedMathRandom } from "../tools/random.js";
import { components, freshApp } from "./app.js";
import { KINDS, progress, secondsSince } from "./section.js";
import { num, table } from "./table.js";

/** Section 1's options: the seed, and the simulated minutes of saturating demand. */
export type UtilizationOptions = { seed: number; minutes: number };

/** Runs section 1 from `t0` on `clock` and prints its table. */
export async function utilizationSection(opts: UtilizationOptions, clock: Clock, t0: number): Promise<void> {
  const rate = 1000;
  const capacity = 1000;
  const shards = 10;
  const every = 10;
  const calls = (opts.minutes * MINUTE) / every;
  console.log(`\n1. UTILIZATION under saturating demand (convex-test, lib.rateLimit)`);
  console.log(`   rate ${rate}/min, capacity ${capacity}, ${shards} shards; a request of count 1 every`);
  console.log(
    `   ${every} ms for ${opts.minutes} simulated min (${num(calls)} calls per kind, 6x the rate).`,
  );
  console.log(`   Fixed window: start = t0 + 30 s, so ${opts.minutes} refills fall inside the run.`);
  const rows: string[][] = [];
  for (const kind of KINDS) {
    const started = performance.now();
    seedMathRandom(opts.seed, `util/${kind}`);
    clock.setSystemTime(t0);
    const t = freshApp();
    const config: RateLimitConfig =
      kind === "token bucket"
        ? { kind, rate, period: MINUTE, capacity, shards }
        : { kind, rate, period: MINUTE, capacity, shards, start: t0 + 30 * SECOND };
    const admitted: number[] = [];
    for (let i = 0; i < calls; i++) {
      const now = t0 + i * every;
      clock.setSystemTime(now);
      const r = await t.mutation(components.rateLimiter.lib.rateLimit, { name: "util", config });
      if (r.ok) admitted.push(now);
      if ((i + 1) % 10_000 === 0 && i + 1 < calls) progress(`${kind}: ${num(i + 1)} of ${num(calls)} calls, ${secondsSince(started)}`);
    }
    progress(`${kind}: ${num(calls)} calls in ${secondsSince(started)}`);
    const ideal = capacity + rate * opts.minutes;
    const bound = capacity + rate; // any window of one period
    const most = maxInWindow(admitted, MINUTE);
    const limit = limitOf(config, resolvePhase(config, "util", undefined));
    const excess = worstExcess(admitted.map((at) => ({ at, count: 1 })), limit);
    rows.push([
      kind,
      num(admitted.length),
      num(ideal),
      (admitted.length / ideal).toFixed(4),
      num(most),
      num(bound),
      num(Math.max(0, most - bound)),
      excess.toFixed(2),
    ]);
  }
  console.log();
  console.log(
    table(
      [
        { title: "kind" },
        { title: "admitted", right: true },
        { title: "ideal", right: true },
        { title: "util", right: true },
        { title: "max/1min", right: true },
        { title: "bound", right: true },
        { title: "over", right: true },
        { title: "worst int.", right: true },
      ],
      rows,
    ),
  );
  console.log(`   ideal = capacity + rate x minutes; util = admitted / ideal (target >= 0.99).`);
  console.log(`   max/1min: most admitted in any window [t, t+1 min); bound = capacity + rate;`);
  console.log(`   over = max/1min - bound, if positive (target 0). worst int.: the largest`);
  console.log(`   (admitted - allowed) over all intervals between two admissions, any length;`);
  console.log(`   allowed = capacity + rate x periods elapsed (token bucket) or x refills`);
  console.log(`   (fixed window). <= 0: no interval of any length overshoots.`);
}
