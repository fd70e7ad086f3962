// Asynchronous mode: what a request records instead of writing rows, a take per shard its plan
// writes, stamped so that the applier folds a key's takes in the order they were decided, and
// after a change of terms the markers that let readers of one shard see them.
import { evaluate } from "../kinds/algebra.js";
import type { Plan } from "../shards/plan.js";
import type { RowOp } from "../shapes/rows.js";
import type { Take } from "../shapes/stored.js";
import { math } from "../core/math.js";
import { takeCount } from "../core/split.js";
import { readOf, type View } from "./view.js";
import { markerOn } from "./settle.js";

/**
 * Asynchronous mode: the takes to record for `plan`, one per shard it writes, each the tokens
 * the shard held at `now` less what it holds after the plan (negative when a balanced take over
 * two shards gave one of them tokens), then the markers they need (`markersOf`). Rows are
 * written only by the applier. A shard the plan writes gets a take even when its value is
 * unchanged (a count too small to change it, a balance that left it as it was): a transactional
 * write would have stamped its row at this instant, and a later read must evaluate it from there,
 * as it would the row, to the same float.
 *
 * A take is recorded at `now`, or at a later instant the request saw when `now` is behind it
 * (another server's clock, or a promise stamped ahead): the shard's own clock, where a
 * transactional write would have stamped the row, or the latest take it was decided after
 * (`taken`: on its shard, and after a change of terms any under the other terms). So a shard's
 * takes in order of time are in the order they were decided, which is the order the fold applies
 * them in, and so are a key's across a change of terms. Recorded at `now`, the fold would apply a
 * take before the takes it was decided after, refill in between (a fixed window: a whole window),
 * and, across a change of terms, split it over the wrong layout.
 */
export function takesOf<Id>(view: View<Id>, plan: Plan): RowOp<Id>[] {
  const takes = plan.writes.map((w) => {
    const read = readOf(view, w.shard);
    const count = takeCount(evaluate(read.state, read.p, view.now).value, w.state.value);
    const taken = view.migration ? view.migration.taken[w.shard]! : view.rows.get(w.shard)!.taken;
    const ts = math.max(view.now, taken, read.state?.ts ?? -Infinity);
    // A take under an override's config names it; one under the named config is stored with the request's.
    const take: Take = view.overridden ? { shard: w.shard, count, ts, config: view.config } : { shard: w.shard, count, ts };
    return { op: "record" as const, take };
  });
  return takes.length === 0 ? takes : [...takes, ...markersOf(view, plan)];
}

/**
 * The markers a request's takes need (asynchronous mode): a take of nothing (`isMarker`) on each
 * shard of the key's rows that isn't under the current terms and has no take pending under them
 * (`unmarked`), unless the plan takes from it. A reader under a row's own terms reads only its
 * shard's takes, and its row is current to it, so it settles the key only when it meets a take
 * under other terms there; a take of this request on another shard, which moved the whole key's
 * tokens (`settle`), would otherwise go unseen (a 1-shard take of everything, then 3 shards:
 * shards 1 and 2 still served from their rows). A marker counts nothing: `fold` and `settle` skip it.
 */
function markersOf<Id>(view: View<Id>, plan: Plan): RowOp<Id>[] {
  const taken = new Set(plan.writes.map((w) => w.shard));
  return (view.migration?.unmarked ?? [])
    .filter((shard) => !taken.has(shard))
    .map((shard) => {
      const take: Take = view.overridden ? { ...markerOn(shard), config: view.config } : markerOn(shard);
      return { op: "record" as const, take };
    });
}
