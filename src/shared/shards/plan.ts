// Deciding one request against a limit's shard rows with the power of two choices. Pure: the
// caller supplies the rows it read and the random draws; the planner says which shard to read
// next and, at the end, which tokens to take from which shard.
import { decideRow, delayUntil, evaluate, leastDelay, valueAt, withValue, type Params, type State } from "../kinds/algebra.js";
import type { Plan, ShardRead, ShardWrite } from "./shard.js";
import { holds, nearEmptyRule, planNearEmpty, readOn } from "./overload.js";
import { landed, minus, pairAccepts } from "../core/split.js";
import { math } from "../core/math.js";

/**
 * COMFORT_FRACTION says, per kind, when a shard is "comfortable": when, after serving the request,
 * it still holds at least this fraction of its capacity. Only then does a request read a single
 * shard; otherwise it reads a second and takes from the fuller (or both). Lower means fewer reads
 * (less contention) but shards drift further apart. A token bucket shard that sits full wastes
 * the refill it can't hold, so token buckets keep their shards closer (½); a fixed window refills
 * all at once at its boundary, so drawing a shard low mid-window wastes nothing (¼), and a
 * sliding window (exact or not), whose shards hold at most their window's share, wastes no more
 * than it (¼). `npm run
 * bench` measures the trade-off; see docs/hot-limits.md, "Sharding".
 */
export const COMFORT_FRACTION: Readonly<Record<Params["kind"], number>> = {
  "token bucket": 0.5,
  "fixed window": 0.25,
  "sliding window": 0.25,
  "exact sliding window": 0.25,
};

export type { Plan, ShardRead, ShardWrite } from "./shard.js";

/** Picks two distinct shards from two uniform draws in [0, 1). */
export function pickTwo(n: number, r1: number, r2: number): [number, number] {
  const a = math.min(n - 1, math.floor(r1 * n));
  if (n === 1) return [a, a];
  const b = (a + 1 + math.min(n - 2, math.floor(r2 * (n - 1)))) % n;
  return [a, b];
}

/**
 * The decision flow of one request, as a generator so one flow serves both the component (which
 * reads rows from the database, asynchronously) and in-memory models (tests, the benchmark): it
 * yields the number of each shard it needs and is sent back that shard's `ShardRead`. A shard may
 * be asked for again; answer with its current state (the component's view may have switched to a
 * migrated layout).
 *
 * It reads one shard, and a second only when the first can't serve comfortably (power of two
 * choices): then it takes from the fuller, or from both together, or refuses. On shards that hold
 * several requests' worth, near empty it is stricter, so that under overload the excess is
 * refused rather than raced for (see `nearEmptyRule` in overload.ts): it combines no partial
 * tokens, and on bigger shards still reads a second shard only when the first can't serve, and
 * takes from it only what it can spare. A peek (`count` 0) reads every shard instead (see
 * {@link planPeek}). Otherwise it reads a third only on quiet shards, which refill a request too
 * slowly to be raced for (see `readOn` in overload.ts): then a refused pair reads up to two more,
 * and the request takes from the first that serves it alone ({@link planReadOn}). On shards
 * written faster, reading on when the pair refuses serves a tight limit slightly better one
 * request at a time, but under overload it sends every request after the last tokens, where they
 * conflict and fail instead of being refused (`npm run simulate`; see docs/hot-limits.md). A reservation
 * whose pair holds fractions that fall short together reads on too (see {@link planReserved}). `comfort`
 * overrides {@link COMFORT_FRACTION} (the benchmark sweeps it). `nearEmpty` false keeps the pair
 * near empty whatever the shards' size: an asynchronous limit decides first on a stale snapshot,
 * whose reads race for nothing, and a second shard read there keeps more decisions standing on it.
 * `notBefore` (ms) is passed to `decideRow`: an exact sliding window's reservation is logged no
 * earlier (waiting until allowed, behind work queued before).
 */
export function* planRequest(
  n: number,
  now: number,
  count: number,
  reserve: boolean,
  random: () => number,
  comfort?: number,
  nearEmpty = true,
  notBefore?: number,
): Generator<number, Plan, ShardRead> {
  const [first, second] = pickTwo(n, random(), random());
  if (count === 0 && n > 1) {
    // A peek answers for the whole limit: no shard may be in debt. It writes nothing, but in a
    // mutation every shard it reads joins the read set: peeks are for occasional checks.
    const all: ShardRead[] = [];
    for (let shard = 0; shard < n; shard++) all.push(yield shard);
    return planPeek(all, now);
  }
  const a = yield first;
  if (n === 1 || isComfortable(a, now, count, comfort)) return planOne(yield first, now, count, reserve, notBefore);
  // Near empty, on shards big enough, read no second shard when the first can serve, and never
  // combine two shards' partial tokens: see nearEmptyRule.
  if (nearEmpty && nearEmptyRule(a, count, reserve) === "alone" && holds(a, now, count)) return planOne(yield first, now, count, reserve, notBefore);
  const b = yield second;
  const again = yield first;
  if (reserve) return yield* planReserved(n, again, b, now, count);
  const rule = nearEmpty ? nearEmptyRule(a, count, reserve, b) : "pair";
  const plan = rule === "pair" ? planTwo(again, b, now, count, reserve) : planNearEmpty(rule, again, b, now, count);
  // On quiet shards a refused pair reads on: see readOn.
  const more = plan.ok ? 0 : readOn(a, count, reserve, n);
  if (plan.ok || more === 0) return plan;
  return yield* planReadOn(plan, pickOthers(n, first, second, more, random), now, count, notBefore);
}

/**
 * pickOthers picks `k` distinct shards out of `n`, other than `first` and `second`, uniformly,
 * from `k` draws in [0, 1) (a partial Fisher-Yates shuffle of the others).
 */
export function pickOthers(n: number, first: number, second: number, k: number, random: () => number): number[] {
  return shuffledPrefix(Array.from({ length: n }, (_, i) => i).filter((i) => i !== first && i !== second), k, random);
}

/**
 * planReadOn goes on from a pair's refusal `refused`: it reads `shards` one at a time and decides
 * the request on the first that can serve it alone (as {@link planOne}); when none can, it is
 * refused until the pair or one of the shards read could serve it (one alone, if its capacity
 * holds the request), with no other traffic, and the refusal lists every shard read.
 */
export function* planReadOn(
  refused: Plan & { ok: false },
  shards: readonly number[],
  now: number,
  count: number,
  notBefore?: number,
): Generator<number, Plan, ShardRead> {
  let retryAfter = refused.retryAfter;
  const read = [...refused.shards];
  for (const shard of shards) {
    const r = yield shard;
    read.push(shard);
    // A shard smaller than the request never serves it alone (a pair may, together).
    if (!(r.p.capacity >= count)) continue;
    const plan = planOne(r, now, count, false, notBefore);
    if (plan.ok) return plan;
    retryAfter = math.min(retryAfter, plan.retryAfter);
  }
  return { ok: false, retryAfter, writes: [], shards: read };
}

/**
 * planPeek decides a peek (`count` 0) on a sharded limit from every shard: ok when none is in
 * debt; otherwise refused until the last debt is repaid (`retryAfter`, least whole ms), listing
 * the shards in debt.
 */
export function planPeek(all: readonly ShardRead[], now: number): Plan {
  // `!(>= 0)`: a corrupt (NaN) value counts as owing, never as ok.
  const owing = all.filter((r) => !(evaluate(r.state, r.p, now).value >= 0));
  if (owing.length === 0) return { ok: true, writes: [], shards: all.map((r) => r.shard) };
  const retryAfter = math.max(...owing.map((r) => delayUntil(r.state, r.p, now, 0)));
  return { ok: false, retryAfter, writes: [], shards: owing.map((r) => r.shard) };
}

/** Decides against one row: the whole unsharded limit, or a sharded one's comfortable first pick. */
export function planOne(read: ShardRead, now: number, count: number, reserve: boolean, notBefore?: number): Plan {
  const d = decideRow(read.state, read.p, now, count, reserve, notBefore);
  const shards = [read.shard];
  if (!d.ok) return { ok: false, retryAfter: d.retryAfter, writes: [], shards };
  const writes = d.next ? [{ shard: read.shard, state: d.next }] : [];
  return d.retryAfter === undefined
    ? { ok: true, writes, shards }
    : { ok: true, retryAfter: d.retryAfter, writes, shards };
}

/**
 * Whether the first shard read can serve the request and keep `comfort` (default
 * {@link COMFORT_FRACTION} of its kind) of its capacity: then read no more.
 */
export function isComfortable(read: ShardRead, now: number, count: number, comfort?: number): boolean {
  const cur = evaluate(read.state, read.p, now);
  return minus(cur.value, count) >= (comfort ?? COMFORT_FRACTION[read.p.kind]) * read.p.capacity;
}

/**
 * Splits `total` tokens between two shards so they end balanced: in proportion to their rates
 * (so debts are repaid at the same moment), clamped to each shard's bounds; in whole tokens when
 * the total is whole (so fixed windows never strand fractions); and for a reservation (`gather`),
 * `a`'s in whole tokens, so a fraction of the total stays on one shard. Split over both, a
 * reservation's fractions spread over every shard of the limit, and with each shard a fraction
 * short of its `maxReserved` no pair can reserve one more token, though the limit may owe it;
 * kept on one, a pair of shards that both hold fractions leaves one of them whole.
 */
function balance(total: number, a: Params, b: Params, gather: boolean): [number, number] {
  let va = (total * a.rate) / (a.rate + b.rate);
  if (gather || Number.isInteger(total)) va = math.round(va);
  va = math.min(a.capacity, math.max(0 - a.maxReserved, va));
  let vb = total - va;
  if (vb > b.capacity) {
    vb = b.capacity;
    va = total - vb;
  } else if (vb < -b.maxReserved) {
    vb = 0 - b.maxReserved; // not -0 when nothing may be reserved
    va = total - vb;
  }
  return [va, vb];
}

/**
 * Decides against two shards (power of two choices). Takes from the fuller one when it can serve
 * the request alone; otherwise from both together, leaving them balanced (also into reserved debt,
 * with `reserve`). Refused when the pair together can't: `retryAfter` is then when the same
 * pair, with no other traffic, could serve it; a retry may land on other shards, which can only
 * be fuller than refused ones in expectation, not for certain.
 */
export function planTwo(a: ShardRead, b: ShardRead, now: number, count: number, reserve: boolean): Plan {
  const ca = evaluate(a.state, a.p, now);
  const cb = evaluate(b.state, b.p, now);
  const floor = reserve && count > 0 ? -(a.p.maxReserved + b.p.maxReserved) : 0;
  const shards = [a.shard, b.shard];
  if (!pairAccepts(ca.value, cb.value, count, floor)) {
    const rate = (a.p.rate + b.p.rate) / a.p.period;
    const guess = math.max(ca.ts, cb.ts, now) - now + (count + floor - ca.value - cb.value) / rate;
    const accepts = (t: number) =>
      pairAccepts(valueAt(a.state, a.p, t), valueAt(b.state, b.p, t), count, floor);
    return { ok: false, retryAfter: leastDelay(accepts, now, guess, count), writes: [], shards };
  }
  const [fuller, fullerCur] = cb.value > ca.value ? [b, cb] : [a, ca];
  if (minus(fullerCur.value, count) >= 0) {
    if (count === 0) return { ok: true, writes: [], shards: [fuller.shard] };
    return {
      ok: true,
      writes: [{ shard: fuller.shard, state: withValue(fullerCur, fuller.p, minus(fullerCur.value, count)) }],
      shards: [fuller.shard],
    };
  }
  if (count === 0) return { ok: true, writes: [], shards };
  // Each as the applier's fold lands on it (`landed`): an asynchronous limit records the takes, and
  // a `retryAfter` computed from a value the fold can't reproduce would be off (by ms, at rates of
  // a few tokens in 1e15 ms).
  const [ba, bb] = balance(minus(ca.value + cb.value, count), a.p, b.p, reserve);
  const va = math.min(a.p.capacity, landed(ca.value, ba));
  const vb = math.min(b.p.capacity, landed(cb.value, bb));
  const next: [State, State] = [
    withValue(ca, a.p, va),
    withValue(cb, b.p, vb),
  ];
  const writes = [
    { shard: a.shard, state: next[0] },
    { shard: b.shard, state: next[1] },
  ];
  if (va >= 0 && vb >= 0) return { ok: true, writes, shards };
  const repaid = math.max(
    va < 0 ? delayUntil(next[0], a.p, now, 0, undefined, count) : 0,
    vb < 0 ? delayUntil(next[1], b.p, now, 0, undefined, count) : 0,
  );
  return { ok: true, retryAfter: repaid, writes, shards };
}



/**
 * GATHER_SHARDS: the most shards a reservation stranded on fractions reads, its pair included
 * (see {@link planReserved}). Every shard read joins the mutation's read set, so on a limit of
 * many shards a refused reservation doesn't read them all: fractions spread over more shards
 * than this can leave less than a token unreserved, as a pair alone would.
 */
export const GATHER_SHARDS = 10;

/**
 * planReserved decides a reservation of `count` > 0 tokens on the pair `a` (drawn first) and `b`
 * as {@link planTwo} does, and when the pair refuses although the requests before left both
 * holding tokens above their floors (`-maxReserved`), together at least their share of the request
 * (2/`k` of `count`, `k` the limit's shards, at most {@link GATHER_SHARDS}), reads the limit's
 * other shards one at a time (from `b` on, in shard order), at most `k` in all, until those read
 * hold it: then it takes from them (see {@link planGathered}). Fractions left by
 * separate requests can spread over more shards than a pair: three shards a little under half a
 * token above their floors hold a token no pair can reserve, and one reservation at a time would
 * stop a token short of what the limit holds. When the shards' rows hold `count` above their
 * floors across `k` shards, the two fullest hold at least 2/`k` of it, so a caller that tries
 * every pair finds one that reads on. Otherwise a pair reads nothing more:
 * - whole tokens never strand (a shard above its floor holds a whole token and serves with any
 *   partner);
 * - the tests look at the rows as the requests left them, refill aside: a token bucket refills
 *   every shard all the time, so at the floor every pair holds fractions, and reading on for
 *   them would read most shards on half the calls, to admit a token a pair's refill admits soon
 *   anyway (reservations at twice the rate over 10 shards read 5.1 rows a call, not 1.9: see
 *   test/stranded-reservations.test.ts, "what reading on costs").
 * Still refused after `k` shards, it refuses as the pair does: `retryAfter` is when the pair alone
 * serves it, and `shards` lists every shard read.
 */
export function* planReserved(n: number, a: ShardRead, b: ShardRead, now: number, count: number): Generator<number, Plan, ShardRead> {
  const pair = planTwo(a, b, now, count, true);
  if (pair.ok) return pair;
  // The gate looks at the rows at the instant the pair alone serves: the same instant for a retry
  // with no traffic in between, so the retry reads on as this request did (see fullBy).
  const serves = now + pair.retryAfter;
  const fa = fullBy(a, serves);
  const fb = fullBy(b, serves);
  // Both full by then: they strand no fraction (a fixed window's shards at their floor all fill at
  // the next window's start, where the pair serves), and reading on would read every shard for a
  // wait the pair already gives.
  if (fa && fb) return pair;
  const sa = spare(a, fa ? serves : a.state!.ts);
  const sb = spare(b, fb ? serves : b.state!.ts);
  // It gathers from at most GATHER_SHARDS shards, so the pair's share is of that many. The share
  // test allows a ppb of float noise: it only decides whether to read on.
  const most = math.min(n, GATHER_SHARDS);
  if (!(sa > 0 && sb > 0) || !((sa + sb) * most >= 2 * count * (1 - 1e-9))) return pair;
  const order = [a.shard, b.shard];
  let group: ShardRead[] = [a, b];
  // Ends by i = n - 1: of b.shard + 1 .. b.shard + n - 1 (mod n) only one is a.shard, and most ≤ n.
  for (let i = 1; order.length < most; i++) {
    const shard = (b.shard + i) % n;
    if (shard === a.shard) continue;
    order.push(shard);
    // Every shard asked for again: a read may have switched the view to a migrated layout.
    group = [];
    for (const s of order) group.push(yield s);
    const plan = planGathered(group, now, count);
    if (plan) return plan;
  }
  // A retry reads on as this request did (the gate looks at the rows at the same instant), and
  // stops at the first shards read that hold the request together: it is served when the pair
  // alone serves or, sooner, when one of those groups does. Not only when all of them do: a shard
  // owing more than its own share of maxReserved (a debt a relayout spread) lowers what a group
  // holds, so the group without it may serve first. The pair's retryAfter is when the pair
  // serves, so the search only looks below it.
  // (On two shards, the whole limit, the pair is the group: the search over it stands, as in
  // planTwo's tolerance band a refill of the pair serves first.)
  const groups = group.length > 2 ? group.slice(2).map((_, i) => group.slice(0, i + 3)) : [group];
  const retryAfter = leastDelay((t) => groups.some((g) => planGathered(g, t, count) !== undefined), now, pair.retryAfter, count);
  return { ...pair, retryAfter: math.min(pair.retryAfter, retryAfter), shards: order };
}

/** What `read` holds above its floor (`-maxReserved`) at `at`: what a reservation may take from it. */
function spare(read: ShardRead, at: number): number {
  return minus(evaluate(read.state, read.p, at).value, 0 - read.p.maxReserved);
}

/**
 * Whether `read` is full by `by`: a missing row is (a full shard), a row is once its value reaches
 * its capacity. {@link planReserved}'s gate takes a shard's spare as the requests before left it,
 * at its row's own `ts`, refill aside, unless it is full by the instant the pair alone serves: then
 * it holds its capacity, as a missing row does. The clean-up deletes a key whose rows are all full
 * (admin/idle.ts), and the next request finds it new: a full row read at its stamp would gate
 * differently from the missing one, and the clean-up would change a decision. `by` is that
 * instant, not the reader's clock: a row filling in between would open the gate to a retry that
 * this request's `retryAfter` (the pair's) did not promise.
 */
function fullBy(read: ShardRead, by: number): boolean {
  return read.state === null || evaluate(read.state, read.p, by).value >= read.p.capacity;
}

/**
 * planGathered reserves `count` tokens from several shards when together they hold them above
 * their floors (the pair test, {@link pairAccepts}, over the group), else undefined. It takes from
 * the fullest first, each down to its floor, and the last only what is still needed: what is left
 * above the floors stays on one shard, so fractions gather instead of spreading. `retryAfter` is
 * when the last debt is repaid, as {@link planTwo} says it.
 */
export function planGathered(group: readonly ShardRead[], now: number, count: number): Plan | undefined {
  const cur = group.map((r) => evaluate(r.state, r.p, now));
  const total = cur.reduce((sum, c) => sum + c.value, 0);
  const floor = 0 - group.reduce((sum, r) => sum + r.p.maxReserved, 0);
  if (!(minus(total, count) >= floor)) return undefined;
  const spares = group.map((r, i) => ({ r, cur: cur[i]!, spare: minus(cur[i]!.value, 0 - r.p.maxReserved) }));
  spares.sort((x, y) => y.spare - x.spare);
  let need = count;
  const writes: ShardWrite[] = [];
  let repaid = 0;
  for (const { r, cur: c, spare: s } of spares) {
    if (!(need > 0 && s > 0)) break;
    const all = minus(s, need) <= 0;
    const value = landed(c.value, all ? 0 - r.p.maxReserved : minus(c.value, need));
    need = all ? minus(need, s) : 0;
    const state = withValue(c, r.p, value);
    writes.push({ shard: r.shard, state });
    if (value < 0) repaid = math.max(repaid, delayUntil(state, r.p, now, 0, undefined, count));
  }
  const shards = writes.map((w) => w.shard);
  return repaid > 0 ? { ok: true, retryAfter: repaid, writes, shards } : { ok: true, writes, shards };
}

/**
 * sampleDistinct picks `k` distinct shards out of `n` uniformly, with a partial Fisher-Yates
 * shuffle driven by `random` (k draws in [0, 1)). `k` above `n` picks every shard.
 */
export function sampleDistinct(n: number, k: number, random: () => number): number[] {
  return shuffledPrefix(Array.from({ length: n }, (_, i) => i), k, random);
}

/**
 * The first `k` of `items` (all of them when fewer) after a partial Fisher-Yates shuffle driven
 * by `random`, one draw in [0, 1) each: a uniform sample without repeats. Shuffles `items` in place.
 */
function shuffledPrefix(items: number[], k: number, random: () => number): number[] {
  const picks = math.min(items.length, k);
  for (let i = 0; i < picks; i++) {
    const j = i + math.min(items.length - i - 1, math.floor(random() * (items.length - i)));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items.slice(0, picks);
}
