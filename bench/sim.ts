// Pure simulations for the benchmark: arrival streams and the shard-choice policies compared (ours
// with a comfort threshold as a parameter, and the baselines). Built on the component's own
// planner (src/shared/shards/plan.ts), so "ours" here decides exactly as lib.rateLimit does. The bounds
// an admission history is checked against are in tools/bounds.ts.
import { evaluate, paramsOf, type Params, type State } from "../src/shared/kinds/algebra.js";
import { resolvePhase, shardParams } from "../src/shared/shards/layout.js";
import { pickTwo, planOne, planTwo, planRequest, type Plan, type ShardRead } from "../src/shared/shards/plan.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

/** How a request picks the shard rows it reads and takes from. */
export type Policy =
  /** The whole limit in one row: the reference sharding is measured against. */
  | { kind: "unsharded" }
  /** Read one random shard; refuse when it can't serve the request. */
  | { kind: "one random shard" }
  /** Always read two random shards; take from the fuller; refuse when neither alone can serve. */
  | { kind: "two choices, no combining" }
  /**
   * Two choices with a comfort threshold, and nothing more (the component before it read the
   * other shards on a refusal): read a random shard; read a second only when the first would hold
   * less than `fraction × capacity` after serving; then take from the fuller, or from both
   * combined. `fraction` 1 never stops at one read: always two choices with combining
   * (upstream's policy).
   */
  | { kind: "comfort"; fraction: number }
  /**
   * A what-if, not what the component does: two choices with comfort `fraction`, and when the
   * pair refuses, up to `probes` more random shards, taken from alone if one can serve.
   */
  | { kind: "read on"; fraction: number; probes: number }
  /**
   * The component's own flow (`planRequest`, as a transactional limit runs it): comfort, then a
   * pair, under the near-empty rules of shards of several requests' worth (`nearEmptyRule`).
   * `fraction` overrides COMFORT_FRACTION.
   */
  | { kind: "component"; fraction?: number };

/** What a simulated run produced. `admitted` holds the instants (ms) of the requests let through. */
export type SimResult = { calls: number; refused: number; reads: number; admitted: number[] };

/**
 * Poisson arrivals: instants (whole ms, non-decreasing) from `start` for `duration` ms at
 * `perMs` requests per ms on average.
 */
export function poissonArrivals(
  start: number,
  duration: number,
  perMs: number,
  random: () => number,
): number[] {
  const out: number[] = [];
  let t = start;
  for (;;) {
    t += -Math.log(1 - random()) / perMs;
    if (t >= start + duration) return out;
    out.push(Math.floor(t));
  }
}

/** The rows of a limit as the simulation holds them, with their params. */
type Rows = { states: (State | null)[]; params: Params[] };

function freshRows(config: RateLimitConfig, policy: Policy, name: string): Rows {
  const phase = resolvePhase(config, name, undefined);
  if (policy.kind === "unsharded") return { states: [null], params: [paramsOf(config, phase)] };
  const n = config.shards ?? 1;
  return {
    states: Array.from({ length: n }, () => null),
    params: Array.from({ length: n }, (_, i) => shardParams(config, phase, i)),
  };
}

function read(rows: Rows, shard: number): ShardRead {
  return { shard, state: rows.states[shard] ?? null, p: rows.params[shard]! };
}

/** Decides one request under `policy`; returns the plan and how many shard rows it read. */
function decide(
  rows: Rows,
  policy: Policy,
  now: number,
  count: number,
  random: () => number,
): { plan: Plan; reads: number } {
  const n = rows.states.length;
  // Two draws per request whatever the policy, as the component does, so that policies fed the
  // same seed see the same picks (common random numbers: their differences are less noisy).
  const draws = [random(), random()];
  const [first, second] = pickTwo(n, draws[0]!, draws[1]!);
  const a = read(rows, first);
  switch (policy.kind) {
    case "unsharded":
    case "one random shard":
      return { plan: planOne(a, now, count, false), reads: 1 };
    case "two choices, no combining": {
      const b = read(rows, second);
      const ca = evaluate(a.state, a.p, now);
      const cb = evaluate(b.state, b.p, now);
      const [fuller, cur] = cb.value > ca.value ? [b, cb] : [a, ca];
      if (cur.value - count >= 0) {
        return {
          plan: {
            ok: true,
            writes: [{ shard: fuller.shard, state: { value: cur.value - count, ts: cur.ts } }],
            shards: [fuller.shard],
          },
          reads: 2,
        };
      }
      // The retry time doesn't matter here; only the refusal is counted.
      return { plan: { ok: false, retryAfter: 1, writes: [], shards: [a.shard, b.shard] }, reads: 2 };
    }
    case "comfort": {
      // The component's isComfortable, with the threshold as a parameter.
      const comfortable = evaluate(a.state, a.p, now).value - count >= policy.fraction * a.p.capacity;
      if (n === 1 || comfortable) return { plan: planOne(a, now, count, false), reads: 1 };
      return { plan: planTwo(a, read(rows, second), now, count, false), reads: 2 };
    }
    case "read on": {
      const comfortable = evaluate(a.state, a.p, now).value - count >= policy.fraction * a.p.capacity;
      if (n === 1 || comfortable) return { plan: planOne(a, now, count, false), reads: 1 };
      const plan = planTwo(a, read(rows, second), now, count, false);
      if (plan.ok) return { plan, reads: 2 };
      const rest = Array.from({ length: n }, (_, i) => i).filter((i) => i !== first && i !== second);
      let reads = 2;
      for (let k = 0; k < Math.min(policy.probes, rest.length); k++) {
        const j = k + Math.min(rest.length - k - 1, Math.floor(random() * (rest.length - k)));
        [rest[k], rest[j]] = [rest[j]!, rest[k]!];
        const r = read(rows, rest[k]!);
        reads += 1;
        if (evaluate(r.state, r.p, now).value - count >= 0) return { plan: planOne(r, now, count, false), reads };
      }
      return { plan, reads };
    }
    case "component": {
      // The component's own flow, fed the same two draws, then the stream for any further reads.
      const seen = new Set<number>();
      const flow = planRequest(n, now, count, false, () => draws.shift() ?? random(), policy.fraction);
      const plan = runPlan(flow, (shard) => (seen.add(shard), read(rows, shard)));
      return { plan, reads: seen.size };
    }
    default: {
      const never: never = policy;
      throw new Error(`unknown policy ${JSON.stringify(never)}`);
    }
  }
}

/**
 * Runs a fresh limit (every row full) through `arrivals`, each a request of `count` tokens,
 * deciding with `policy` and drawing shards from `random`.
 */
export function simulate(
  config: RateLimitConfig,
  policy: Policy,
  arrivals: readonly number[],
  count: number,
  random: () => number,
): SimResult {
  const rows = freshRows(config, policy, "bench");
  const result: SimResult = { calls: 0, refused: 0, reads: 0, admitted: [] };
  for (const now of arrivals) {
    const { plan, reads } = decide(rows, policy, now, count, random);
    result.calls += 1;
    result.reads += reads;
    if (!plan.ok) {
      result.refused += 1;
      continue;
    }
    result.admitted.push(now);
    for (const w of plan.writes) rows.states[w.shard] = w.state;
  }
  return result;
}
