// Giving tokens back to a key: never above a shard's capacity.
import { entriesOf, evaluate, roomFor, valueAt, withValue, type Params, type State } from "../kinds/algebra.js";
import { encodeLog, withWithdrawn } from "../kinds/window-log.js";
import type { Plan, ShardRead, ShardWrite } from "../shards/plan.js";
import type { KeyFlow, RowOp } from "../shapes/rows.js";
import { isShardOf } from "../shards/layout.js";
import { minus } from "../core/split.js";
import { inForce, type InForce } from "../overrides/overrides.js";
import type { Override } from "../shapes/override-validators.js";
import { invalid, validateNameAndKey, validateTier } from "../validation/validate.js";
import { checkConfig } from "../validation/validate-config.js";
import type { CreditArgs } from "../shapes/validators.js";
import { newView, shardOf } from "./view.js";
import { opsOf } from "./writes.js";
import { math } from "../core/math.js";

/**
 * creditFlow gives `count` tokens back to a key at `now` and says exactly how to write it. The
 * rule: a credit never lifts a shard above its capacity, and so never makes a key hold more than
 * it could hold; it can't know how many tokens the caller took, so crediting only what was taken
 * is the caller's part, and then no token is created (the key ends where it would be had the
 * request never taken them, or lower where a full shard can't take them back). On a sharded limit
 * `shards` (the `details.shards` of the `limit` result the tokens came from) is required, and the
 * credit goes to those shards, emptiest first: a credit to another shard could outlast the take
 * once the shard it came from refills. An asynchronous limit records the credit as a negative take
 * for the applier. Returns the tokens actually credited.
 *
 * `cancel` gives back the tokens of a cancelled run (see {@link CancelledRun}).
 */
export function* creditFlow<Id>(
  args: CreditArgs,
  now: number,
  cancel?: CancelledRun,
): KeyFlow<Id, { credited: number; ops: RowOp<Id>[] }> {
  validateNameAndKey(args.name, args.key);
  checkConfig(args.config);
  if (args.tier !== undefined) validateTier(args.tier);
  if (!(Number.isFinite(args.count) && args.count > 0)) throw invalid("count", args.count, "must be a finite number > 0");
  // A credit draws nothing at random; its tokens go back under what is in force for the key.
  return yield* inForce(args, now, () => 0, (resolved, own) => creditUnder<Id>(args, resolved, own, now, cancel));
}

/** Gives tokens back under what is in force for the key (see {@link creditFlow}). */
function* creditUnder<Id>(args: CreditArgs, resolved: InForce, own: Override | undefined, now: number, cancel?: CancelledRun): KeyFlow<Id, { credited: number; ops: RowOp<Id>[] }> {
  const view = newView<Id>({ name: args.name, key: args.key, config: resolved.config }, now, own, resolved.by !== "config");
  for (const shard of args.shards ?? []) {
    if (!isShardOf(shard, view.n)) throw invalid("shards", shard, `must be a shard of the limit's ${view.n}`);
  }
  // Without knowing which shards the tokens came from, a credit to another shard could outlast
  // the take once the shard it came from refills: on a sharded limit, say which.
  if (view.n > 1 && !(args.shards && args.shards.length > 0)) {
    throw invalid("shards", "(none)", "a credit to a sharded limit needs the shards the tokens came from: pass the limit result's details.shards");
  }
  const targets = args.shards && args.shards.length > 0 ? [...new Set(args.shards)] : [0];
  const reads: ShardRead[] = [];
  for (const shard of targets) reads.push((yield* shardOf(view, shard)).read);
  // Re-asked: a later read may have switched the view to a migrated layout.
  for (let i = 0; i < reads.length; i++) reads[i] = (yield* shardOf(view, targets[i]!)).read;
  const room = reads
    .map((read) => ({ read, cur: evaluate(read.state, read.p, now) }))
    .sort((a, b) => a.cur.value / math.max(a.read.p.capacity, 1e-300) - b.cur.value / math.max(b.read.p.capacity, 1e-300));
  let left = args.count;
  const writes: ShardWrite[] = [];
  for (const { read, cur } of room) {
    if (!(left > 0)) break;
    let gave = math.min(left, math.max(0, minus(read.p.capacity, cur.value)));
    if (cancel) gave = math.min(gave, cancelRoom(read, cur, now, cancel, view.n));
    if (gave > 0) {
      const state = cancel === undefined ? withValue(cur, read.p, cur.value + gave) : withdrawn(cur, read.p, cancel.runAt, gave);
      writes.push({ shard: read.shard, state });
      left = minus(left, gave);
    }
  }
  const credited = minus(args.count, math.max(0, left));
  const plan: Plan = { ok: true, writes, shards: writes.map((w) => w.shard) };
  // An asynchronous limit records the credit as negative takes (see takesOf).
  return { credited, ops: opsOf(view, plan, 1) };
}


/**
 * A cancelled run whose tokens a credit gives back: its `runAt` (ms), the key's other runs still
 * queued (`runAt` after now, each with its tokens), which will take theirs at their `runAt`, and
 * `changed`: whether the limit's terms changed since the run was queued.
 */
export type CancelledRun = { runAt: number; pending: readonly { runAt: number; count: number }[]; changed?: boolean };

/**
 * The most tokens a cancelled run may give back to a shard at `now`, so that the key's other
 * queued runs stay within the limit at their own instants. A token bucket or a fixed window took
 * their tokens at once, but they run later; until then the tokens are the bucket's, and a bucket
 * can't hold more than its capacity. So the value plus the tokens still to run must stay within
 * the capacity up to each queued run: just before the run at `runAt_j`, the value evaluated then
 * plus the tokens of every run at or after it. A credit above that would let later work run in
 * the tokens the bucket could never have held. An exact sliding window withdraws the run's own
 * logged take, which is exact: no bound. A sharded limit can't tell which shards the queued runs
 * took from: while any is queued, it gives nothing back (the run is still cancelled).
 *
 * After a change of terms (`changed`), a token bucket's or a fixed window's debt was carried over
 * as a promise in the new terms' tokens (see `owedUntil` in shards/layout.ts): scaled, or, for a
 * window, what the windows before the one that repays it hold. The run's tokens can no longer be
 * told apart in that state, so the cancel gives back at most the debt (the value back to 0), never
 * tokens to spend now: giving the run's whole count back to the current window could hand it more
 * than the run took from it (a window of 4 lowered to 2 with a run of 2 queued for the next
 * window: 2 back in this one, where the run took 1).
 */
function cancelRoom(read: ShardRead, cur: State, now: number, cancel: CancelledRun, shards: number): number {
  if (read.p.kind === "exact sliding window") return Infinity;
  if (cancel.changed === true) return math.max(0, 0 - cur.value);
  const later = cancel.pending.filter((r) => r.runAt > now);
  if (later.length === 0) return Infinity;
  if (shards > 1) return 0;
  let room = Infinity;
  for (const run of later) {
    const still = later.filter((r) => r.runAt >= run.runAt).reduce((sum, r) => sum + r.count, 0);
    room = math.min(room, minus(minus(read.p.capacity, valueAt(cur, read.p, run.runAt)), still));
  }
  return math.max(0, room);
}

/**
 * withdrawn returns a state evaluated at its `ts` with `count` tokens given back that were taken
 * for work logged at `at` (ms) that will never run (a cancelled run): an exact sliding window
 * takes them off its entry at `at` (see `withWithdrawn`); the other kinds hold no instants, and
 * add them to the value as a credit does (`withValue`). The caller bounds `count` as a credit is
 * bounded (never above the capacity).
 */
function withdrawn(cur: State, p: Params, at: number, count: number): State {
  if (p.kind !== "exact sliding window") return withValue(cur, p, cur.value + count);
  const next = withWithdrawn(entriesOf(cur, p), at, count);
  const out: State = { value: roomFor(next, p), ts: cur.ts };
  if (next.length > 0) out.log = encodeLog(next);
  return out;
}
