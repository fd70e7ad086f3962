// Section 4 of `npm run bench` (`--only speed`): the time per limit call, ours beside upstream's,
// unsharded, through an app mutation on convex-test.
import type { Clock } from "@sinonjs/fake-timers";
import { MINUTE, SECOND } from "../src/shared/kinds/algebra.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { components, timeRounds, type Round } from "./app.js";
import { median, medianInterval, quantile } from "./stats.js";
import { table } from "./table.js";

/** Section 4's options: `quick` times 5 rounds of 200 calls, else 60 of 300. */
export type SpeedOptions = { quick: boolean };

/**
 * Times `rateLimit` calls through an app mutation on convex-test, ours and upstream's alternately
 * in rounds (so both see the same machine load), unsharded, at half the rate (see timeRounds):
 * the median round's ms per call, by CPU time and wall clock, and the median of the rounds' ratios
 * with its 95 % confidence interval. Rounds vary by several percent (the collector, the machine),
 * so it takes 60 of them to tell a difference of a percent or two: with 15 rounds of 400 calls,
 * the median ratio of two copies of the same component ranged from 0.97 to 1.02 over five runs.
 */
export async function speedSection(opts: SpeedOptions, clock: Clock, t0: number): Promise<void> {
  const calls = opts.quick ? 1000 : 18_000;
  const rounds = opts.quick ? 5 : 60;
  console.log(`\n4. TIME PER limit CALL, unsharded, ours vs upstream (convex-test)`);
  console.log(`   ${rounds} rounds of ${calls / rounds} calls each, alternating; token bucket 60/min at half load.`);
  const config: RateLimitConfig = { kind: "token bucket", rate: 60, period: MINUTE };
  const [ours, theirs] = await timeRounds(
    clock,
    t0,
    [
      { label: "ours", call: (ctx) => ctx.runMutation(components.rateLimiter.lib.rateLimit, { name: "speed", key: "k", config }) },
      { label: "upstream", call: (ctx) => ctx.runMutation(components.upstream.lib.rateLimit, { name: "speed", key: "k", config }) },
    ],
    { calls, rounds, every: 2 * SECOND }, // half of 60/min
  );
  const of = (r: Round[], f: (x: Round) => number) => median(r.map(f)).toFixed(3);
  const ratios = (f: (x: Round) => number) => ours!.map((o, i) => f(o) / f(theirs![i]!));
  const ratio = (f: (x: Round) => number) => median(ratios(f)).toFixed(2);
  const quartiles = (f: (x: Round) => number) => `${quantile(ratios(f), 0.25).toFixed(2)}–${quantile(ratios(f), 0.75).toFixed(2)}`;
  const interval = (f: (x: Round) => number) => medianInterval(ratios(f)).map((x) => x.toFixed(3)).join("–");
  console.log(
    table(
      [{ title: "implementation" }, { title: "CPU ms per call", right: true }, { title: "wall ms per call", right: true }],
      [
        ["ours", of(ours!, (x) => x.cpu), of(ours!, (x) => x.wall)],
        ["upstream (@convex-dev/rate-limiter 0.4.0)", of(theirs!, (x) => x.cpu), of(theirs!, (x) => x.wall)],
        ["ratio ours / upstream (median of rounds)", ratio((x) => x.cpu), ratio((x) => x.wall)],
        [
          // Fewer than 6 rounds (--quick) can't reach 95 %: the interval is then their whole range.
          rounds >= 6 ? "  95 % confidence interval of that median" : "  range of the rounds' ratios (too few for 95 %)",
          interval((x) => x.cpu),
          interval((x) => x.wall),
        ],
        ["  middle half of the rounds' ratios", quartiles((x) => x.cpu), quartiles((x) => x.wall)],
      ],
    ),
  );
  console.log(`   target: ratio <= 1.00 (issue 22). CPU time is this process's, less disturbed by other`);
  console.log(`   work on the machine than the wall clock; each round runs both on fresh apps.`);
}
