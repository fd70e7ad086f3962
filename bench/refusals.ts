// Section 2 of `npm run bench` (`--only refusals`): refusals of a tight sharded limit against
// unsharded and simpler shard policies, and the comfort threshold's trade-off between refusals and
// reads. A pure planner simulation (sim.ts): every strategy sees the same arrivals and picks.
import { MINUTE } from "../src/shared/kinds/algebra.js";
import { COMFORT_FRACTION } from "../src/shared/shards/plan.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { seededRandom, streamSeed } from "../tools/random.js";
import { KINDS, progress, secondsSince } from "./section.js";
import { poissonArrivals, simulate, type Policy, type SimResult } from "./sim.js";
import { num, pct, table } from "./table.js";

type Strategy = { label: string; policy: Policy };
const STRATEGIES: Strategy[] = [
  { label: "unsharded (one row)", policy: { kind: "unsharded" } },
  { label: "one random shard", policy: { kind: "one random shard" } },
  { label: "2 choices, no combining", policy: { kind: "two choices, no combining" } },
  { label: "2 choices + combining (upstream)", policy: { kind: "comfort", fraction: 1 } },
  { label: "ours, c=0", policy: { kind: "component", fraction: 0 } },
  { label: "ours, c=0.25", policy: { kind: "component", fraction: 0.25 } },
  { label: "ours, c=0.5", policy: { kind: "component", fraction: 0.5 } },
  { label: "ours, c=1", policy: { kind: "component", fraction: 1 } },
  { label: "ours (component) *", policy: { kind: "component" } },
  { label: "what-if: c=0.5, read 2 more", policy: { kind: "read on", fraction: 0.5, probes: 2 } },
  { label: "what-if: c=0.25, read 2 more", policy: { kind: "read on", fraction: 0.25, probes: 2 } },
];
const LOADS = [0.5, 0.9, 1] as const;

/** Section 2's options: the seed, and the simulated minutes of arrivals per scenario. */
export type RefusalsOptions = { seed: number; simMinutes: number };

/** Runs section 2, arrivals from `t0`, and prints its tables. */
export function refusalsSection(opts: RefusalsOptions, t0: number): void {
  const rate = 60;
  const shards = 10;
  console.log(`\n2. REFUSALS and the COMFORT THRESHOLD c (pure planner, src/shared/shards/plan.ts)`);
  console.log(
    `   rate ${rate}/min, capacity ${rate}, ${shards} shards (${rate / shards} tokens per shard); Poisson arrivals of`,
  );
  console.log(
    `   count 1 at 50/90/100% of the rate, ${num(opts.simMinutes)} simulated min per scenario; every`,
  );
  console.log(`   strategy sees the same arrivals and the same random shard picks.`);
  for (const kind of KINDS) {
    const started = performance.now();
    const config: RateLimitConfig = { kind, rate, period: MINUTE, capacity: rate, shards };
    const results = new Map<string, Map<number, SimResult>>();
    for (const load of LOADS) {
      const arrivals = poissonArrivals(
        t0,
        opts.simMinutes * MINUTE,
        (load * rate) / MINUTE,
        seededRandom(streamSeed(opts.seed, `arrivals/${kind}/${load}`)),
      );
      const run = (policy: Policy) =>
        simulate(config, policy, arrivals, 1, seededRandom(streamSeed(opts.seed, `picks/${kind}/${load}`)));
      for (const s of STRATEGIES) {
        const byLoad = results.get(s.label) ?? new Map<number, SimResult>();
        byLoad.set(load, run(s.policy));
        results.set(s.label, byLoad);
      }
    }
    progress(`${kind}: simulated in ${secondsSince(started)}`);
    const calls = (label: string, load: number) => results.get(label)?.get(load);
    const rows = STRATEGIES.map((s) => [
      s.label,
      ...LOADS.flatMap((load) => {
        const r = calls(s.label, load);
        return r === undefined ? ["", ""] : [pct(r.refused / r.calls, 2), (r.reads / r.calls).toFixed(2)];
      }),
    ]);
    console.log(`\n   ${kind}`);
    console.log(
      table(
        [
          { title: "strategy" },
          ...LOADS.flatMap((load) => [
            { title: `ref${(load * 100).toFixed(0)}%`, right: true },
            { title: "reads", right: true },
          ]),
        ],
        rows,
      ),
    );
  }
  console.log(`   refNN%: share refused at NN% load; reads: shard rows read per call.`);
  console.log(`   c: a second shard is read only when the first would hold < c x its capacity`);
  console.log(`   after serving; then take from the fuller or both (ours: not both on shards of 4 requests'`);
  console.log(`   worth or more, see nearEmptyRule), or refuse. "ours" rows run the`);
  console.log(`   component's own flow with c overridden; * = COMFORT_FRACTION in src/shared/shards/plan.ts:`);
  console.log(`   token bucket ${COMFORT_FRACTION["token bucket"]}, fixed window ${COMFORT_FRACTION["fixed window"]}. On quiet shards (a request's`);
  console.log(`   worth refilled no faster than once every 2 s, as here) ours reads up to 2 more when the pair`);
  console.log(`   refuses; on shards written faster, reading on fails more requests under overload in`);
  console.log(`   npm run simulate, so the component doesn't there.`);
  console.log(`   what-if rows read up to 2 more shards when the pair refuses: they match or beat`);
  console.log(`   upstream's refusals at 100% load, with reads at 50% load still near 1 (the frontier),`);
  console.log(`   but cost more failed requests under overload in npm run simulate.`);
}
