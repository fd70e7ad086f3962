// Asynchronous mode: what a request records instead of writing rows, a take per shard its plan
// writes, stamped so that the applier folds a key's takes in the order they were decided.
import { evaluate } from "../kinds/algebra.js";
import type { Plan } from "../shards/plan.js";
import type { RowOp } from "../shapes/rows.js";
import type { Take } from "../shapes/stored.js";
import { math } from "../core/math.js";
import { takeCount } from "../core/split.js";
import { readOf, type View } from "./view.js";

/**
 * Asynchronous mode: the takes to record for `plan`, one per shard it writes, each the tokens
 * the shard held at `now` less what it holds after the plan (negative when a balanced take over
 * two shards gave one of them tokens). Rows are written only by the applier. A shard the plan
 * writes gets a take even when its value is unchanged (a count too small to change it, a balance
 * that left it as it was): a transactional write would have stamped its row at this instant, and
 * a later read must evaluate it from there, as it would the row, to the same float.
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
  return plan.writes.map((w) => {
    const read = readOf(view, w.shard);
    const count = takeCount(evaluate(read.state, read.p, view.now).value, w.state.value);
    const taken = view.migration ? view.migration.taken[w.shard]! : view.rows.get(w.shard)!.taken;
    const ts = math.max(view.now, taken, read.state?.ts ?? -Infinity);
    // A take under an override's config names it; one under the named config is stored with the request's.
    const take: Take = view.overridden ? { shard: w.shard, count, ts, config: view.config } : { shard: w.shard, count, ts };
    return { op: "record" as const, take };
  });
}
