// Takes recorded but not yet applied (asynchronous mode), counted under the terms they were taken
// under. A take records its config; when the config changes while takes are pending, each take is
// folded in under its own terms and the result carried over to the next terms as rows are
// (`relayout`), exactly as if the applier had applied every take the moment it was taken. So a
// change never grants what the old terms had already given out (capacity raised 5 → 20 with 5
// pending: nothing more passes, as transactionally), and a take on a shard the new layout drops
// still counts. Pure: no clock, no randomness.
import { evaluate, stateOf, withValue, type Params, type State } from "../kinds/algebra.js";
import { isShardOf, relayout, sameCalendar, sameClock, shardParams } from "../shards/layout.js";
import { kindOf, type RateLimitConfig } from "../shapes/validators.js";
import type { StoredRow, Take } from "../shapes/stored.js";
import { math } from "../core/math.js";
import { minus } from "../core/split.js";

/** The phase (ms) of a config's windows for the key being settled (see `resolvePhase`). */
export type PhaseOf = (config: RateLimitConfig) => number;

/**
 * fold applies takes recorded but not yet applied to a row's state, in order of time, as the
 * applier will: each at its own instant (no earlier than the row's `ts`), never above capacity,
 * subtracted as the decision subtracted it (`minus`, so the state read back is the one decided,
 * not one off by float noise). Applying a take later than it happened can only leave fewer tokens,
 * never more. Every take is taken to be under the terms of `p` (see {@link settle} for takes
 * under other terms).
 */
export function fold(state: State | null, takes: readonly Take[], p: Params): State | null {
  let out = state;
  for (const take of takes.filter((t) => !isMarker(t)).sort((a, b) => a.ts - b.ts)) {
    const cur = evaluate(out, p, take.ts);
    out = withValue(cur, p, math.min(minus(cur.value, take.count), p.capacity));
  }
  return out;
}

/**
 * isMarker reports whether a take is a marker: a take of nothing at no instant (`ts` -Infinity),
 * recorded beside a take under terms other than the key's rows', on a shard of theirs, so that a
 * reader under the rows' terms reading that shard alone meets a take under other terms and
 * settles the key (see `markersOf`). It counts nothing: `fold` and `settle` skip it.
 */
export function isMarker(take: Take): boolean {
  return take.ts === -Infinity;
}

/** The marker (see {@link isMarker}) on shard `shard`. */
export function markerOn(shard: number): Take {
  return { shard, count: 0, ts: -Infinity };
}

/** The whole limit's terms under `config` (see `shardParams`): two configs that decide alike have equal terms. */
function termsOf(config: RateLimitConfig, phaseOf: PhaseOf): string | undefined {
  return shardParams(config, phaseOf(config), 0).terms;
}

/** Whether two configs have the same terms field by field (the common case, checked without building them). */
function sameFields(a: RateLimitConfig, b: RateLimitConfig): boolean {
  return (
    kindOf(a) === kindOf(b) &&
    a.rate === b.rate &&
    a.period === b.period &&
    (a.capacity ?? a.rate) === (b.capacity ?? b.rate) &&
    (a.shards ?? 1) === (b.shards ?? 1) &&
    (a.kind === "token bucket" || a.start === b.start) &&
    sameCalendar(a.kind === "fixed window" ? a.calendar : undefined, b.kind === "fixed window" ? b.calendar : undefined)
  );
}

/** Whether `take` was taken under the terms of `config` (a take that records no config is). */
export function takenUnder(take: Take, config: RateLimitConfig, phaseOf: PhaseOf): boolean {
  if (take.config === undefined || take.config === config || sameFields(take.config, config)) return true;
  return termsOf(take.config, phaseOf) === termsOf(config, phaseOf);
}

/** A layout: a config's shards, their params, and what each holds (null: never used, full). */
type Layout = { config: RateLimitConfig; phase: number; params: Params[]; states: (State | null)[] };

/**
 * storedRowOf returns the row a shard's state would be stored as under `p`, one of `shards`: the
 * next run of takes reads it as a stored row. Never written (its absent fields are `undefined`
 * here, which only the readers of this fold see, by value).
 */
function storedRowOf(shard: number, state: State, p: Params, shards: number): StoredRow {
  return {
    shard,
    value: state.value,
    ts: state.ts,
    prev: state.prev,
    log: state.log,
    shards,
    kind: p.kind,
    rate: p.rate,
    period: p.period,
    capacity: p.capacity,
    terms: p.terms,
  };
}

/**
 * `rows` as a layout of `config`: as they are when every row was written under it, else carried
 * over (`relayout`, stamped by the rows themselves; `now` only stamps a key with no row).
 */
function layoutOf(rows: readonly StoredRow[], config: RateLimitConfig, phaseOf: PhaseOf, now: number): Layout {
  const phase = phaseOf(config);
  const n = config.shards ?? 1;
  const params = Array.from({ length: n }, (_, i) => shardParams(config, phase, i));
  const as = rows.every((r) => r.shards === n && isShardOf(r.shard, n) && sameClock(r, params[r.shard]!));
  const states = as
    ? params.map((_, i) => {
        const row = rows.find((r) => r.shard === i);
        return row ? stateOf(row) : null;
      })
    : relayout([...rows], config, phase, now);
  return { config, phase, params, states };
}

/**
 * settle returns every shard's state under `config` from a key's stored `rows` (of any layout)
 * and its takes not yet applied (under any config), at `now` (ms): the takes in order of time,
 * each folded in under the config it records (a take that records none is under `config`), the
 * rows carried over to a take's terms before it when they differ, and to `config`'s at the end.
 * A never-used shard is full. A take whose shard its own layout doesn't have (none we write) counts
 * against shard 0.
 */
export function settle(
  rows: readonly StoredRow[],
  takes: readonly Take[],
  config: RateLimitConfig,
  phaseOf: PhaseOf,
  now: number,
): State[] {
  let current: readonly StoredRow[] = rows;
  // A take that records no config is under `config` (not under the take before it).
  const sorted = takes
    .filter((t) => !isMarker(t))
    .map((t) => ({ ...t, config: t.config ?? config }))
    .sort((a, b) => a.ts - b.ts);
  for (let i = 0; i < sorted.length; ) {
    // A run of takes under one config's terms, folded in together.
    const under = sorted[i]!.config;
    let j = i + 1;
    while (j < sorted.length && takenUnder(sorted[j]!, under, phaseOf)) j++;
    const run = sorted.slice(i, j);
    const layout = layoutOf(current, under, phaseOf, run[0]!.ts);
    const n = layout.params.length;
    const on = (t: Take) => (isShardOf(t.shard, n) ? t.shard : 0);
    current = layout.states.flatMap((state, k) => {
      const after = fold(state, run.filter((t) => on(t) === k), layout.params[k]!);
      return after ? [storedRowOf(k, after, layout.params[k]!, n)] : [];
    });
    i = j;
  }
  const final = layoutOf(current, config, phaseOf, now);
  return final.states.map((state, k) => state ?? evaluate(null, final.params[k]!, now));
}
