// The exact sliding window's log: what one row took in its last window, as [instant, tokens]
// entries, stored compactly as bytes. Pure: the clock comes in as an argument.
import { math } from "../core/math.js";
import { minus } from "../core/split.js";
import { MAX_LOG_BYTES, MAX_LOG_ENTRIES, MIN_LOG_ENTRIES, entryLength, isCompact, putVarint, varintLength } from "./window-log-bytes.js";

export { MAX_LOG_BYTES, MAX_LOG_ENTRIES, MIN_LOG_ENTRIES, appendedLog, scanLog, takenLog, trimmedLog, type LogScan } from "./window-log-bytes.js";

/**
 * MAX_EXACT_RATE was the largest rate per shard an exact sliding window accepted (1,000 tokens per
 * period), when a row's log kept every take of its window. A log now keeps at most
 * {@link MAX_LOG_ENTRIES} entries whatever the rate, so there is no cap: `Infinity`, kept for code
 * that imports it.
 */
export const MAX_EXACT_RATE = Infinity;

/** One entry of a log: `count` tokens (> 0) taken at `at` (ms). */
export type Entry = { readonly at: number; readonly count: number };

/** What {@link decodeLog} made of each log it decoded (logs are never mutated once built). */
const decoded = new WeakMap<ArrayBuffer, readonly Entry[]>();

/** The empty log. */
export const EMPTY_LOG: readonly Entry[] = [];

// The encoding: entries in order of time, each a varint header, then its fields.
// - Header even, 2d: the entry is d whole ms after the one before (the first: after instant 0),
//   and a varint of its whole count follows.
// - Header 1: the entry's instant and count follow as two float64s (anything not a whole ms, a
//   whole count or a non-negative offset).
// A steady key's entry takes two to four bytes, against sixteen as two plain numbers.

/**
 * encodeLog returns the bytes of a log whose entries are in order of time (`at` non-decreasing),
 * each with `count` > 0.
 */
export function encodeLog(entries: readonly Entry[]): ArrayBuffer {
  // Two passes, the size and then the bytes, into one buffer.
  let size = 0;
  let last = 0;
  for (const { at, count } of entries) {
    const d = at - last;
    size += isCompact(d, count) ? varintLength(2 * d) + varintLength(count) : 17;
    last = at;
  }
  const buffer = new ArrayBuffer(size);
  const bytes = new Uint8Array(buffer);
  let view: DataView | undefined;
  let i = 0;
  last = 0;
  for (const { at, count } of entries) {
    const d = at - last;
    if (isCompact(d, count)) {
      i = putVarint(bytes, i, 2 * d);
      i = putVarint(bytes, i, count);
    } else {
      bytes[i++] = 1;
      view ??= new DataView(buffer);
      view.setFloat64(i, at, true);
      view.setFloat64(i + 8, count, true);
      i += 16;
    }
    last = at;
  }
  decoded.set(buffer, freeze(entries));
  return buffer;
}

/**
 * `entries` frozen in place, each entry too: a decoded log is shared by every reader of its bytes.
 * Every array given here is one its maker hands over (no caller changes a log after encoding it).
 */
function freeze(entries: readonly Entry[]): readonly Entry[] {
  if (Object.isFrozen(entries)) return entries;
  for (const e of entries) Object.freeze(e);
  return Object.freeze(entries);
}

/**
 * decodeLog returns the entries of a log {@link encodeLog} wrote, or undefined for bytes that are
 * not such a log (entries out of order, a count ≤ 0, or cut short).
 */
export function decodeLog(buffer: ArrayBuffer): readonly Entry[] | undefined {
  const known = decoded.get(buffer);
  if (known) return known;
  const bytes = new Uint8Array(buffer);
  const view = new DataView(buffer);
  const entries: Entry[] = [];
  let i = 0;
  let last = 0;
  const varint = (): number | undefined => {
    let n = 0;
    let scale = 1;
    for (;;) {
      if (i >= bytes.length || scale > 2 ** 49) return undefined;
      const b = bytes[i++]!;
      n += (b & 127) * scale;
      if (b < 128) return n;
      scale *= 128;
    }
  };
  while (i < bytes.length) {
    const header = varint();
    if (header === undefined) return undefined;
    let at: number;
    let count: number;
    if (header === 1) {
      if (i + 16 > bytes.length) return undefined;
      at = view.getFloat64(i, true);
      count = view.getFloat64(i + 8, true);
      i += 16;
    } else if (header % 2 === 0) {
      const n = varint();
      if (n === undefined) return undefined;
      at = last + header / 2;
      count = n;
    } else {
      return undefined;
    }
    if (!Number.isFinite(at) || (entries.length > 0 && at < last)) return undefined;
    if (!(Number.isFinite(count) && count > 0)) return undefined;
    entries.push({ at, count });
    last = at;
  }
  const frozen = freeze(entries);
  decoded.set(buffer, frozen);
  return frozen;
}

/** The tokens the entries hold in all. */
export function logTotal(entries: readonly Entry[]): number {
  let total = 0;
  for (const e of entries) total += e.count;
  return total;
}

/**
 * live returns the entries still inside the window at `t` (ms): those taken after `t - period`.
 * An entry taken at `at` leaves the window at `at + period` exactly.
 */
export function live(entries: readonly Entry[], t: number, period: number): readonly Entry[] {
  let first = 0;
  while (first < entries.length && !(entries[first]!.at > t - period)) first++;
  if (first === 0) return entries;
  return entries.slice(first);
}

/**
 * withTaken returns the log after `count` (> 0) more tokens are taken at `at` (ms), kept in order
 * of time (entries may lie ahead of `at`: a debt carried in from another kind) and merged with an
 * entry at the same instant, then {@link bounded} (to `max` entries and `maxBytes` bytes; by
 * default {@link MAX_LOG_ENTRIES} and {@link MAX_LOG_BYTES}).
 */
export function withTaken(
  entries: readonly Entry[],
  at: number,
  count: number,
  max: number = MAX_LOG_ENTRIES,
  maxBytes: number = MAX_LOG_BYTES,
): readonly Entry[] {
  let i = entries.length;
  while (i > 0 && entries[i - 1]!.at > at) i--;
  const out = entries.slice();
  if (i > 0 && out[i - 1]!.at === at) out[i - 1] = { at, count: out[i - 1]!.count + count };
  else out.splice(i, 0, { at, count });
  return bounded(out, max, maxBytes);
}

/**
 * bounded returns `entries` (in order of time; an array the caller hands over, changed in place)
 * merged down to at most `max` (≥ 1) entries, and to at most `maxBytes` bytes as
 * {@link encodeLog} writes them while more than {@link MIN_LOG_ENTRIES} entries remain (defaults
 * {@link MAX_LOG_ENTRIES} and {@link MAX_LOG_BYTES}): while there are more, the entry whose tokens
 * cost least to count later merges into the one after it. The cost of merging an entry of `c`
 * tokens at `a` into the next, at `b`, is `c × (b − a)`: tokens × ms by which its tokens come back
 * later. Counting a take as taken later never admits more than the rate in any window: every
 * window that held it still holds it, or holds it later, when no more can have been admitted on
 * its account. Ties merge the oldest pair. Cheapest first keeps bursts (many entries close
 * together) as one entry each and spreads the entries kept over the window.
 */
export function bounded(entries: Entry[], max: number = MAX_LOG_ENTRIES, maxBytes: number = MAX_LOG_BYTES): Entry[] {
  let size = 0;
  if (Number.isFinite(maxBytes)) for (let k = 0; k < entries.length; k++) size += lengthAt(entries, k);
  while (entries.length > max || (size > maxBytes && entries.length > MIN_LOG_ENTRIES)) {
    let j = 1;
    let least = Infinity;
    for (let k = 1; k < entries.length; k++) {
      const cost = entries[k - 1]!.count * (entries[k]!.at - entries[k - 1]!.at);
      if (cost < least) {
        least = cost;
        j = k;
      }
    }
    if (Number.isFinite(maxBytes)) size -= lengthAt(entries, j - 1) + lengthAt(entries, j);
    entries.splice(j - 1, 2, { at: entries[j]!.at, count: entries[j - 1]!.count + entries[j]!.count });
    if (Number.isFinite(maxBytes)) size += lengthAt(entries, j - 1);
  }
  return entries;
}

/** The bytes {@link encodeLog} writes entry `k` of `entries` in. */
function lengthAt(entries: readonly Entry[], k: number): number {
  const e = entries[k]!;
  return entryLength(e.at - (k > 0 ? entries[k - 1]!.at : 0), e.count);
}

/**
 * withGivenBack returns the log after `count` (> 0) tokens are given back: taken off the oldest
 * entries first (those that would leave the window first). The log can't tell which take a
 * credit undoes; whichever it was, the entries left then leave the window no earlier than the
 * takes that really stand, so no window ever counts fewer than stand in it and the rate holds.
 * (Taking off the latest instead would, when the credited take wasn't the latest, count a later
 * take as gone while an earlier one stays: a later window would admit more than the rate.)
 * Giving back more than the log holds empties it.
 */
export function withGivenBack(entries: readonly Entry[], count: number): readonly Entry[] {
  let first = 0;
  let left = count;
  // An entry that holds no more than what is left (up to float noise, as `minus` snaps it) goes
  // whole: a remainder of 0 would leave a 0-token entry, which no log may hold (decodeLog refuses it).
  while (left > 0 && first < entries.length && !(minus(entries[first]!.count, left) > 0)) {
    left = minus(left, entries[first]!.count);
    first++;
  }
  const out = entries.slice(first);
  if (left > 0 && out.length > 0) out[0] = { at: out[0]!.at, count: minus(out[0]!.count, left) };
  return out;
}

/**
 * withWithdrawn returns the log after `count` (> 0) tokens logged at `at` (ms) are withdrawn: a
 * take logged ahead for work that will never run (a cancelled run). They come off the entry at
 * `at`, which holds them, as if never taken; whatever that entry doesn't hold comes off the oldest
 * entries, as {@link withGivenBack} gives back.
 */
export function withWithdrawn(entries: readonly Entry[], at: number, count: number): readonly Entry[] {
  const i = entries.findIndex((e) => e.at === at);
  if (i < 0) return withGivenBack(entries, count);
  const entry = entries[i]!;
  const out = entries.slice();
  const left = minus(count, entry.count);
  if (left < 0) out[i] = { at, count: minus(entry.count, count) };
  else out.splice(i, 1);
  return left > 0 ? withGivenBack(out, left) : out;
}

/**
 * carriedLog returns a log for a row that has none, holding `used` tokens as of `ts` (ms): a row
 * carried over from another kind, or from another layout, whose times of taking are unknown. They
 * are taken to have been taken at `ts`, the latest they could have been, so they leave the window
 * no earlier than they would have; a debt deeper than one window's `rate` is held until a window's
 * worth per window would have repaid it (one entry, `period` ms per `rate` tokens ahead).
 */
export function carriedLog(used: number, ts: number, rate: number, period: number): readonly Entry[] {
  if (!(used > 0)) return EMPTY_LOG;
  const windows = math.max(1, math.ceil(used / rate));
  return [{ at: ts + (windows - 1) * period, count: used }];
}

/**
 * mergeLogs returns the entries of several logs (each in order of time) as one log in order of
 * time, entries at one instant added together: what a key's shards took, together. Not bounded.
 */
export function mergeLogs(logs: readonly (readonly Entry[])[]): Entry[] {
  const all = logs.flat().sort((a, b) => a.at - b.at);
  const out: Entry[] = [];
  for (const e of all) {
    const last = out[out.length - 1];
    if (last !== undefined && last.at === e.at) out[out.length - 1] = { at: e.at, count: last.count + e.count };
    else out.push({ at: e.at, count: e.count });
  }
  return out;
}

/**
 * splitLog returns `entries` (in order of time) split over shards of capacities `shares` (> 0), for
 * a key whose shard count changes: each entry's tokens are shared out in proportion to the shards'
 * capacities, keeping the entry's instant, so the shards' logs together hold exactly what the
 * entries held, each token leaving the window when it would have. Whole counts stay whole: each
 * shard's running total keeps within a token of its share of the entries' running total (the
 * tokens an entry can't split evenly go to the shards furthest behind their share, the first of
 * them on a tie); a fractional count evens out the shards' running totals. Then no shard holds
 * more than its capacity while another has room: a shard over it hands its latest entries' excess
 * to shards with room (a shard that held more than its share would otherwise let the others admit
 * its excess again). Each shard's log is then {@link bounded}.
 */
export function splitLog(entries: readonly Entry[], shares: readonly number[]): Entry[][] {
  const n = shares.length;
  if (n === 1) return [bounded(entries.slice())];
  const out: Entry[][] = shares.map(() => []);
  let sum = 0;
  for (const s of shares) sum += s;
  const given = shares.map(() => 0);
  let total = 0;
  for (const { at, count } of entries) {
    total += count;
    const parts = shares.map(() => 0);
    // How far each shard is behind its share of the running total.
    const behind = shares.map((s, i) => (total * s) / sum - given[i]!);
    if (Number.isSafeInteger(count)) {
      let left = count;
      for (let i = 0; i < n; i++) {
        const whole = math.min(left, math.max(0, math.floor(behind[i]!)));
        parts[i] = whole;
        behind[i]! -= whole;
        left -= whole;
      }
      while (left > 0) {
        let k = 0;
        for (let i = 1; i < n; i++) if (behind[i]! > behind[k]!) k = i;
        parts[k]! += 1;
        behind[k]! -= 1;
        left -= 1;
      }
    } else {
      // In proportion to how far behind each shard is (those ahead of their share get none).
      let weight = 0;
      for (const b of behind) weight += math.max(0, b);
      let rest = count;
      let last = -1;
      for (let i = 0; i < n; i++) {
        if (!(behind[i]! > 0)) continue;
        parts[i] = (count * behind[i]!) / weight;
        rest -= parts[i]!;
        last = i;
      }
      if (last < 0) last = n - 1;
      // The float remainder to the last shard given any, so the parts add up to the count.
      parts[last]! += rest;
    }
    for (let i = 0; i < n; i++) {
      if (!(parts[i]! > 0)) continue;
      given[i]! += parts[i]!;
      out[i]!.push({ at, count: parts[i]! });
    }
  }
  // No shard over its capacity while another has room.
  for (let i = 0; i < n; i++) {
    // `minus`: float noise in a running total is no excess.
    let excess = minus(given[i]!, shares[i]!);
    for (let j = 0; j < n && excess > 0; j++) {
      const room = minus(shares[j]!, given[j]!);
      if (!(room > 0)) continue;
      let move = math.min(excess, room);
      given[i]! -= move;
      given[j]! += move;
      excess -= move;
      while (move > 0 && out[i]!.length > 0) {
        const e = out[i]!.pop()!;
        const part = math.min(move, e.count);
        if (e.count > part) out[i]!.push({ at: e.at, count: e.count - part });
        out[j]! = mergeLogs([out[j]!, [{ at: e.at, count: part }]]);
        move -= part;
      }
    }
  }
  return out.map((log) => bounded(log));
}

/**
 * freedAt returns the instant (ms) at which the window at `t` has room for `need` tokens beyond
 * what `value` (its room at `t`) leaves, as the oldest entries leave it: the instant the entry
 * that frees the last of them leaves (`at + period`). Undefined if the entries can't free enough.
 */
export function freedAt(entries: readonly Entry[], value: number, need: number, period: number): number | undefined {
  let room = value;
  for (const e of entries) {
    room += e.count;
    if (minus(room, need) >= 0) return e.at + period;
  }
  return undefined;
}

/**
 * windowLog returns the takes an exact sliding window's row holds (`getValue`'s answer, or what
 * `calculateRateLimit` and `decideRateLimit` return): `{ at, count }`, `count` tokens taken at `at`
 * (ms), in order of time: at most `MAX_LOG_ENTRIES`, an entry past that standing for several
 * takes counted at the latest of them. Each leaves the window at `at + period`, giving its tokens
 * back then: a UI can draw when each comes back. Empty for a row without a log (no takes in its window, or
 * another kind's row); undefined for bytes that aren't a log.
 */
export function windowLog(row: { log?: ArrayBuffer | undefined }): readonly Entry[] | undefined {
  return row.log === undefined ? EMPTY_LOG : decodeLog(row.log);
}
