// The exact sliding window's log: what one row took in its last window, as [instant, tokens]
// entries, stored compactly as bytes. Pure: the clock comes in as an argument.
import { math } from "./math.js";
import { minus } from "./split.js";

/**
 * MAX_EXACT_RATE was the largest rate per shard an exact sliding window accepted (1,000 tokens per
 * period), when a row's log kept every take of its window. A log now keeps at most
 * {@link MAX_LOG_ENTRIES} entries whatever the rate, so there is no cap: `Infinity`, kept for code
 * that imports it.
 */
export const MAX_EXACT_RATE = Infinity;

/**
 * MAX_LOG_ENTRIES is the most entries one row's log keeps (32), whatever the rate. Past it, entries
 * merge into later ones ({@link bounded}): the earlier tokens are counted as taken a little later,
 * so they leave the window a little later, which may refuse a little early but never admits more
 * than the rate in any window. Chosen from the frontier of bytes against admissions that
 * `npm run bench -- --only sliding` prints (docs/reference.md, "Exact sliding window: bytes"): 32
 * entries keep 99 % of the reference sliding log's admissions on each of the bench's traffic shapes.
 */
export const MAX_LOG_ENTRIES = 32;

/**
 * MAX_LOG_BYTES is the most bytes one row's log keeps (112) while it holds more than
 * {@link MIN_LOG_ENTRIES} entries: at high rates an entry's distance and count take two bytes
 * each, and 32 of them would make the row more than twice a token bucket's. Whole counts at
 * whole-ms instants take 2 to 4 bytes an entry; fractional ones 17.
 */
export const MAX_LOG_BYTES = 112;

/** MIN_LOG_ENTRIES is the fewest entries {@link MAX_LOG_BYTES} merges a log down to (8). */
export const MIN_LOG_ENTRIES = 8;

/** One entry of a log: `count` tokens (> 0) taken at `at` (ms). */
export type Entry = { readonly at: number; readonly count: number };

/** What {@link decodeLog} made of each log it decoded (logs are never mutated once built). */
const decoded = new WeakMap<ArrayBuffer, readonly Entry[]>();

/**
 * The bytes {@link encodeLog} made of each list of entries (frozen once encoded, so the bytes stay
 * theirs): a flow evaluates a row several times, and each would encode the same entries again.
 */
const encoded = new WeakMap<readonly Entry[], ArrayBuffer>();

/** What {@link live} kept of each log it trimmed last: the instant it trimmed at, and the result. */
const trimmed = new WeakMap<readonly Entry[], { t: number; period: number; kept: readonly Entry[] }>();

/** The empty log. */
export const EMPTY_LOG: readonly Entry[] = [];

// The encoding: entries in order of time, each a varint header, then its fields.
// - Header even, 2d: the entry is d whole ms after the one before (the first: after instant 0),
//   and a varint of its whole count follows.
// - Header 1: the entry's instant and count follow as two float64s (anything not a whole ms, a
//   whole count or a non-negative offset).
// A steady key's entry takes two to four bytes, against sixteen as two plain numbers.

/** The bytes of `n` (a whole number, 0 ≤ n < 2^53) as a base-128 varint. */
function varintLength(n: number): number {
  let length = 1;
  while (n >= 128) {
    n = math.floor(n / 128);
    length++;
  }
  return length;
}

/** Writes `n` (a whole number, 0 ≤ n < 2^53) at `i` as a little-endian base-128 varint; returns the end. */
function putVarint(out: Uint8Array, i: number, n: number): number {
  while (n >= 128) {
    out[i++] = (n % 128) + 128;
    n = math.floor(n / 128);
  }
  out[i++] = n;
  return i;
}

/** Whether an entry `d` ms after the one before, of `count` tokens, is written as two varints. */
function isCompact(d: number, count: number): boolean {
  return Number.isSafeInteger(d) && d >= 0 && 2 * d < Number.MAX_SAFE_INTEGER && Number.isSafeInteger(count) && count > 0;
}

/**
 * encodeLog returns the bytes of a log whose entries are in order of time (`at` non-decreasing),
 * each with `count` > 0.
 */
export function encodeLog(entries: readonly Entry[]): ArrayBuffer {
  // Two passes, the size and then the bytes: a log is encoded on every call that takes.
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

/**
 * What {@link scanLog} found in a log's bytes, without building its entries: how many entries it
 * holds (`entries`) and how many lie after the cut-off (`live`), what those hold (`total`, added in
 * order of time, as {@link logTotal} adds them), where the first of them starts and ends in the
 * bytes and what it is, and the last entry: its instant and count, where it starts, the instant of
 * the one before it (0 for the first), and whether it is written as two varints (`compact`).
 */
export type LogScan = {
  entries: number;
  live: number;
  total: number;
  firstStart: number;
  firstEnd: number;
  firstAt: number;
  firstCount: number;
  lastStart: number;
  lastAt: number;
  lastCount: number;
  beforeLast: number;
  compact: boolean;
};

/**
 * scanLog reads a log's bytes as {@link decodeLog} does (undefined for bytes that aren't a log),
 * counting the entries taken after `after` (ms) as live. A call's decision needs only this: the
 * tokens in the window, and where its bytes may be cut or added to ({@link trimmedLog},
 * {@link appendedLog}).
 */
export function scanLog(buffer: ArrayBuffer, after: number): LogScan | undefined {
  // The log trimmed last, scanned whole: a call trims a row's log, then takes from it.
  if (buffer === lastTrimmed.buffer && after === -Infinity) return lastTrimmed.scan;
  const bytes = new Uint8Array(buffer);
  const length = bytes.length;
  let view: DataView | undefined;
  let i = 0;
  let last = 0;
  let entries = 0;
  let live = 0;
  let total = 0;
  let firstStart = 0;
  let firstEnd = 0;
  let firstAt = 0;
  let firstCount = 0;
  let lastStart = 0;
  let lastCount = 0;
  let beforeLast = 0;
  let compact = true;
  while (i < length) {
    const start = i;
    // The header, a varint (one byte for an entry under 64 ms after the one before).
    let header = bytes[i++]!;
    if (header >= 128) {
      header -= 128;
      let scale = 128;
      for (;;) {
        if (i >= length || scale > 2 ** 49) return undefined;
        const b = bytes[i++]!;
        header += (b & 127) * scale;
        if (b < 128) break;
        scale *= 128;
      }
    }
    let at: number;
    let count: number;
    if (header === 1) {
      if (i + 16 > length) return undefined;
      view ??= new DataView(buffer);
      at = view.getFloat64(i, true);
      count = view.getFloat64(i + 8, true);
      i += 16;
      compact = false;
    } else if (header % 2 === 0) {
      if (i >= length) return undefined;
      count = bytes[i++]!;
      if (count >= 128) {
        count -= 128;
        let scale = 128;
        for (;;) {
          if (i >= length || scale > 2 ** 49) return undefined;
          const b = bytes[i++]!;
          count += (b & 127) * scale;
          if (b < 128) break;
          scale *= 128;
        }
      }
      at = last + header / 2;
      compact = true;
    } else {
      return undefined;
    }
    if (!Number.isFinite(at) || (entries > 0 && at < last)) return undefined;
    if (!(Number.isFinite(count) && count > 0)) return undefined;
    if (at > after) {
      if (live === 0) {
        firstStart = start;
        firstEnd = i;
        firstAt = at;
        firstCount = count;
      }
      live++;
      total += count;
    }
    entries++;
    beforeLast = last;
    lastStart = start;
    lastCount = count;
    last = at;
  }
  return { entries, live, total, firstStart, firstEnd, firstAt, firstCount, lastStart, lastAt: last, lastCount, beforeLast, compact };
}

/** The bytes an entry `d` ms after the one before, of `count` tokens, takes. */
function entryLength(d: number, count: number): number {
  return isCompact(d, count) ? varintLength(2 * d) + varintLength(count) : 17;
}

/**
 * Writes at `i` of `bytes` an entry at `at` (ms), `d` ms after the one before, of `count` tokens:
 * two varints, or in full when not compact (see {@link encodeLog}). Returns the end.
 */
function putEntry(bytes: Uint8Array, i: number, at: number, d: number, count: number): number {
  if (isCompact(d, count)) return putVarint(bytes, putVarint(bytes, i, 2 * d), count);
  bytes[i] = 1;
  const view = new DataView(bytes.buffer);
  view.setFloat64(i + 1, at, true);
  view.setFloat64(i + 9, count, true);
  return i + 17;
}

/**
 * The first `end` bytes of `bytes`, then an entry (as {@link putEntry} writes it), then the bytes
 * of `bytes` from `from` on, as one new buffer, and the entry's length in bytes.
 */
function spliced(bytes: Uint8Array, end: number, at: number, d: number, count: number, from: number): { buffer: ArrayBuffer; length: number } {
  const length = entryLength(d, count);
  const out = new Uint8Array(end + length + (bytes.length - from));
  if (end > 0) out.set(bytes.subarray(0, end));
  putEntry(out, end, at, d, count);
  if (from < bytes.length) out.set(bytes.subarray(from), end + length);
  return { buffer: out.buffer, length };
}

/**
 * trimmedLog returns the bytes of a log's live entries (`scan` of `buffer`, with `live` > 0): the
 * first rewritten from instant 0, the rest as they were (each is written from the one before).
 * The buffer itself when every entry is live.
 */
export function trimmedLog(buffer: ArrayBuffer, scan: LogScan): ArrayBuffer {
  if (scan.live === scan.entries) return buffer;
  const { buffer: out, length } = spliced(new Uint8Array(buffer), 0, scan.firstAt, scan.firstAt, scan.firstCount, scan.firstEnd);
  // What a scan of the result would find, every entry live (the last entry is the same one).
  const whole: LogScan = {
    entries: scan.live,
    live: scan.live,
    total: scan.total,
    firstStart: 0,
    firstEnd: length,
    firstAt: scan.firstAt,
    firstCount: scan.firstCount,
    lastStart: scan.live === 1 ? 0 : scan.lastStart - scan.firstEnd + length,
    lastAt: scan.lastAt,
    lastCount: scan.lastCount,
    beforeLast: scan.live === 1 ? 0 : scan.beforeLast,
    compact: scan.live === 1 ? isCompact(scan.firstAt, scan.firstCount) : scan.compact,
  };
  lastTrimmed = { buffer: out, scan: whole };
  return out;
}

/** The last log {@link trimmedLog} made, and its scan (one slot: a call trims one row's log). */
let lastTrimmed: { buffer: ArrayBuffer | undefined; scan: LogScan | undefined } = { buffer: undefined, scan: undefined };

/**
 * appendedLog returns the bytes of a log (`scan` of `buffer`, every entry live) after `count` more
 * tokens are taken at `at` (ms), when they can be written at its end as {@link withTaken} would
 * leave them: whole counts, `at` no earlier than the last entry, and within
 * {@link MAX_LOG_ENTRIES} and {@link MAX_LOG_BYTES}. Undefined otherwise (then decode, and use
 * withTaken).
 */
export function appendedLog(buffer: ArrayBuffer, scan: LogScan, at: number, count: number): ArrayBuffer | undefined {
  if (!(Number.isSafeInteger(count) && count > 0 && Number.isSafeInteger(scan.total + count))) return undefined;
  const bytes = new Uint8Array(buffer);
  // Within the bounds as they were (a log an earlier version wrote may be over them: it merges).
  const within = (length: number, entries: number) => entries <= MAX_LOG_ENTRIES && (length <= MAX_LOG_BYTES || entries <= MIN_LOG_ENTRIES);
  if (scan.entries > 0 && at === scan.lastAt) {
    if (!scan.compact) return undefined;
    const d = at - scan.beforeLast;
    const length = scan.lastStart + entryLength(d, scan.lastCount + count);
    if (!within(length, scan.entries)) return undefined;
    return spliced(bytes, scan.lastStart, at, d, scan.lastCount + count, bytes.length).buffer;
  }
  if (scan.entries > 0 && !(at > scan.lastAt)) return undefined;
  const d = at - (scan.entries > 0 ? scan.lastAt : 0);
  if (!isCompact(d, count) || !within(bytes.length + entryLength(d, count), scan.entries + 1)) return undefined;
  return spliced(bytes, bytes.length, at, d, count, bytes.length).buffer;
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
  while (left > 0 && first < entries.length && !(entries[first]!.count > left)) {
    left = minus(left, entries[first]!.count);
    first++;
  }
  const out = entries.slice(first);
  if (left > 0 && out.length > 0) out[0] = { at: out[0]!.at, count: minus(out[0]!.count, left) };
  return out;
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
 * (ms), in order of time. Each leaves the window at `at + period`, giving its tokens back then: a
 * UI can draw when each comes back. Empty for a row without a log (no takes in its window, or
 * another kind's row); undefined for bytes that aren't a log.
 */
export function windowLog(row: { log?: ArrayBuffer | undefined }): readonly Entry[] | undefined {
  return row.log === undefined ? EMPTY_LOG : decodeLog(row.log);
}
