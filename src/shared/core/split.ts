// Splitting a limit's numbers over shards so that the parts add up exactly to the whole.
import { math } from "./math.js";

/**
 * splitTotal returns shard `i`'s part of `total` split over `parts` shards. The whole-number part
 * of `total` is split as evenly as whole numbers allow (shards 0..r-1 get one more), and any
 * fraction goes to the last shard, so the parts sum to `total` exactly and no shard is left holding
 * a fraction it can never spend (10 over 8 shards is 2,2,1,1,1,1,1,1, not 1.25 each). `Infinity`
 * stays `Infinity`.
 */
export function splitTotal(total: number, parts: number, i: number): number {
  if (parts === 1 || !Number.isFinite(total)) return total;
  const whole = math.floor(total);
  const base = math.floor(whole / parts);
  const extra = whole - base * parts;
  const part = base + (i < extra ? 1 : 0);
  return i === parts - 1 ? part + (total - whole) : part;
}

/**
 * smallestPair returns the smallest sum of two distinct shards' parts of `total` split over
 * `parts` shards: the most any pair of shards can be relied on to hold together. With one shard,
 * the whole.
 */
export function smallestPair(total: number, parts: number): number {
  if (parts === 1 || !Number.isFinite(total)) return total;
  // Parts are non-increasing in i except that the last shard carries the fraction, so the two
  // smallest are among the last three shards.
  const tail = [parts - 3, parts - 2, parts - 1]
    .filter((i) => i >= 0)
    .map((i) => splitTotal(total, parts, i))
    .sort((a, b) => a - b);
  return tail[0]! + tail[1]!;
}

/**
 * pairAccepts reports whether a pair holding `va` and `vb` tokens serves `count`: the fuller alone
 * without debt, or both together down to `floor` (minus their combined `maxReserved` when
 * reserving, else 0). The planner, its retry search and validation all use this one test, so they
 * can't disagree.
 */
export function pairAccepts(va: number, vb: number, count: number, floor: number): boolean {
  return minus(math.max(va, vb), count) >= 0 || minus(va + vb, count) >= floor;
}

/**
 * `x` rounded to the nearest whole number when it is within float rounding error of one
 * (relative 1e-12; an operation or two of float error is about 1e-16), else `x` unchanged.
 */
export function wholeIfClose(x: number): number {
  const whole = math.round(x);
  return math.abs(x - whole) <= 1e-12 * math.max(1, math.abs(x)) ? whole : x;
}

/**
 * minus returns `a - b`, snapped to 12 significant digits of the larger operand when it lies
 * within float noise of them, so decimal amounts add up exactly: thirty takes of 0.1 from 3 leave
 * 0, not 4.4e-16, and a refill of 0.7 makes 0.7, not 0.7000000000000002. A value that isn't a
 * 12-digit decimal (a third of a token) is left as computed. Every decision, validation and wait
 * subtracts with it, so they agree.
 */
export function minus(a: number, b: number): number {
  // Whole numbers subtract exactly (and snapping leaves them as they are): the common case, fast.
  if (Number.isSafeInteger(a) && Number.isSafeInteger(b)) return a - b;
  const d = a - b;
  const scale = math.max(math.abs(a), math.abs(b));
  if (!(scale > 0) || !Number.isFinite(d)) return d;
  const digits = 12 - math.floor(math.log10(scale));
  if (digits < 0 || digits > 300) return d;
  const m = 10 ** digits;
  const snapped = math.round(d * m) / m;
  return math.abs(snapped - d) <= scale * 1e-13 ? snapped : d;
}

/**
 * takeCount returns the count of a take from `from` tokens down to `to`, such that the fold, subtracting it back
 * with `minus`, lands on `to` itself, not an ulp off it (a `retryAfter` computed from `to` could
 * then be a ms late): the plain difference when that does (a count like 27.999999999999996 that
 * `minus` would snap to 28), else the difference `minus` takes when that does, else the plain
 * difference (off by float noise at most).
 */
export function takeCount(from: number, to: number): number {
  const plain = from - to;
  if (minus(from, plain) === to) return plain;
  const snapped = minus(from, to);
  return minus(from, snapped) === to ? snapped : plain;
}

/**
 * landed returns the value a shard holding `from` tokens is left with once the take from `from`
 * down to `to` (see {@link takeCount}) is subtracted back with `minus`, as the applier folds a
 * recorded take: `to` itself, except where `to` lies within `minus`'s snapping of a 12-digit
 * decimal that it is not (then that decimal, float noise away). A plan that writes `landed`
 * values stores, transactionally or through the applier, the same value, so a `retryAfter`
 * computed from it holds to the ms either way.
 */
export function landed(from: number, to: number): number {
  let value = to;
  // Once landed, a value lands on itself; the loop only guards a float corner where it wouldn't.
  for (let i = 0; i < 4; i++) {
    const next = minus(from, takeCount(from, value));
    if (next === value) return value;
    value = next;
  }
  return value;
}
