// The exact window's log as bytes: its bounds, the encoding's parts, and what a call does on the
// bytes themselves (read the window's tokens, cut what left, add a take at the end), building no
// entries. window-log.ts builds and merges entries; both write the same encoding.
import { math } from "../core/math.js";

/**
 * MAX_LOG_ENTRIES is the most entries one row's log keeps (32), whatever the rate. Past it, entries
 * merge into later ones (`bounded`, window-log.ts): the earlier tokens are counted as taken a little later,
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

// The encoding is described at `encodeLog` (window-log.ts), which writes a log whole.

/** The bytes of `n` (a whole number, 0 ≤ n < 2^53) as a base-128 varint. */
export function varintLength(n: number): number {
  let length = 1;
  while (n >= 128) {
    n = math.floor(n / 128);
    length++;
  }
  return length;
}

/** Writes `n` (a whole number, 0 ≤ n < 2^53) at `i` as a little-endian base-128 varint; returns the end. */
export function putVarint(out: Uint8Array, i: number, n: number): number {
  while (n >= 128) {
    out[i++] = (n % 128) + 128;
    n = math.floor(n / 128);
  }
  out[i++] = n;
  return i;
}

/** Whether an entry `d` ms after the one before, of `count` tokens, is written as two varints. */
export function isCompact(d: number, count: number): boolean {
  return Number.isSafeInteger(d) && d >= 0 && 2 * d < Number.MAX_SAFE_INTEGER && Number.isSafeInteger(count) && count > 0;
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

/** The last buffer {@link bytesOf} viewed, and its view (one slot: a call scans, then writes, one log). */
let lastView: Uint8Array = new Uint8Array(0);

/** A byte view of `buffer`: the last one made when it is the same buffer. */
function bytesOf(buffer: ArrayBuffer): Uint8Array {
  if (lastView.buffer !== buffer) lastView = new Uint8Array(buffer);
  return lastView;
}

/**
 * scanLog reads a log's bytes as {@link decodeLog} does (undefined for bytes that aren't a log),
 * counting the entries taken after `after` (ms) as live. A call's decision needs only this: the
 * tokens in the window, and where its bytes may be cut or added to ({@link trimmedLog},
 * {@link appendedLog}).
 */
export function scanLog(buffer: ArrayBuffer, after: number): LogScan | undefined {
  // The log trimmed last, scanned whole: a call trims a row's log, then takes from it.
  if (buffer === lastTrimmed.buffer && after === -Infinity) return lastTrimmed.scan;
  const bytes = bytesOf(buffer);
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
    // The common entry first: a header and a count of one or two bytes each, read directly.
    const b0 = bytes[i]!;
    const b1 = i + 1 < length ? bytes[i + 1]! : 256;
    if ((b0 & 1) === 0 && (b0 < 128 || b1 < 128)) {
      const header = b0 < 128 ? b0 : (b0 & 127) + b1 * 128;
      let j = b0 < 128 ? i + 1 : i + 2;
      const c0 = j < length ? bytes[j]! : 256;
      const c1 = j + 1 < length ? bytes[j + 1]! : 256;
      if (c0 < 128 || c1 < 128) {
        const count = c0 < 128 ? c0 : (c0 & 127) + c1 * 128;
        if (count === 0) return undefined;
        j += c0 < 128 ? 1 : 2;
        const at = last + header / 2;
        if (at > after) {
          if (live === 0) {
            firstStart = start;
            firstEnd = j;
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
        compact = true;
        i = j;
        continue;
      }
    }
    // Any other entry: its header, a varint.
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
      // Never before the one before, and finite: only a count of 0 is no entry.
      at = last + header / 2;
      if (count === 0) return undefined;
      compact = true;
    } else {
      return undefined;
    }
    if (!compact && (!Number.isFinite(at) || (entries > 0 && at < last) || !(Number.isFinite(count) && count > 0))) return undefined;
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
export function entryLength(d: number, count: number): number {
  return isCompact(d, count) ? varintLength(2 * d) + varintLength(count) : 17;
}

/**
 * Writes at `i` of `bytes` an entry at `at` (ms), `d` ms after the one before, of `count` tokens:
 * two varints, or in full when not compact (see {@link encodeLog}), in {@link entryLength} bytes.
 */
function putEntry(bytes: Uint8Array, i: number, at: number, d: number, count: number): void {
  if (isCompact(d, count)) {
    putVarint(bytes, putVarint(bytes, i, 2 * d), count);
    return;
  }
  bytes[i] = 1;
  const view = new DataView(bytes.buffer);
  view.setFloat64(i + 1, at, true);
  view.setFloat64(i + 9, count, true);
}

/**
 * The first `end` bytes of `bytes`, then an entry (as {@link putEntry} writes it), then the bytes
 * of `bytes` from `from` on, as one new buffer, and the entry's length in bytes.
 */
function spliced(bytes: Uint8Array, end: number, at: number, d: number, count: number, from: number): { buffer: ArrayBuffer; length: number } {
  const length = entryLength(d, count);
  const buffer = new ArrayBuffer(end + length + (bytes.length - from));
  const out = new Uint8Array(buffer);
  // Byte by byte: a log is about a hundred bytes, where subarray views and set cost more.
  for (let i = 0; i < end; i++) out[i] = bytes[i]!;
  putEntry(out, end, at, d, count);
  for (let i = from, j = end + length; i < bytes.length; i++, j++) out[j] = bytes[i]!;
  return { buffer, length };
}

/**
 * trimmedLog returns the bytes of a log's live entries (`scan` of `buffer`, with `live` > 0): the
 * first rewritten from instant 0, the rest as they were (each is written from the one before).
 * The buffer itself when every entry is live.
 */
export function trimmedLog(buffer: ArrayBuffer, scan: LogScan): ArrayBuffer {
  if (scan.live === scan.entries) return buffer;
  const { buffer: out, length } = spliced(new Uint8Array(buffer), 0, scan.firstAt, scan.firstAt, scan.firstCount, scan.firstEnd);
  lastTrimmed = { buffer: out, scan: trimmedScan(scan, length) };
  return out;
}

/**
 * What {@link scanLog} would find, every entry live, in the bytes {@link trimmedLog} makes of a
 * log of `scan`, whose first live entry is rewritten in `length` bytes (the last entry is the same
 * one, moved).
 */
function trimmedScan(scan: LogScan, length: number): LogScan {
  return {
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
  // Within the bounds (a log an earlier version wrote may be over them: it merges).
  if (scan.entries > 0 && at === scan.lastAt) {
    if (!scan.compact) return undefined;
    const d = at - scan.beforeLast;
    const length = scan.lastStart + entryLength(d, scan.lastCount + count);
    if (!within(length, scan.entries)) return undefined;
    return spliced(bytes, scan.lastStart, at, d, scan.lastCount + count, bytes.length).buffer;
  }
  if (scan.entries > 0 && !(at > scan.lastAt)) return undefined;
  // An empty log's lastAt is 0: the first entry is written from instant 0.
  const d = at - scan.lastAt;
  if (!isCompact(d, count) || !within(bytes.length + entryLength(d, count), scan.entries + 1)) return undefined;
  return spliced(bytes, bytes.length, at, d, count, bytes.length).buffer;
}


/**
 * takenLog returns `appendedLog(trimmedLog(buffer, scan), …, at, count)` in one buffer, without
 * the trimmed one between: the bytes of a row's live entries (`scan` of `buffer`, with `live` > 0)
 * after `count` more tokens are taken at `at` (ms), or undefined where {@link appendedLog} would be.
 * A call that takes from an unsharded row makes this one buffer and no other.
 */
export function takenLog(buffer: ArrayBuffer, scan: LogScan, at: number, count: number): ArrayBuffer | undefined {
  if (scan.live === scan.entries) return appendedLog(buffer, scan, at, count);
  if (!(Number.isSafeInteger(count) && count > 0 && Number.isSafeInteger(scan.total + count))) return undefined;
  const bytes = bytesOf(buffer);
  const first = entryLength(scan.firstAt, scan.firstCount);
  const trimmed = trimmedScan(scan, first);
  const size = first + (bytes.length - scan.firstEnd);
  // As appendedLog on the trimmed bytes: the trimmed log's first `keep` bytes, then one entry.
  let keep: number;
  let d: number;
  let total: number;
  if (at === trimmed.lastAt) {
    if (!trimmed.compact) return undefined;
    keep = trimmed.lastStart;
    d = at - trimmed.beforeLast;
    total = trimmed.lastCount + count;
    if (!within(keep + entryLength(d, total), trimmed.entries)) return undefined;
  } else {
    if (!(at > trimmed.lastAt)) return undefined;
    keep = size;
    d = at - trimmed.lastAt;
    total = count;
    if (!isCompact(d, count) || !within(size + entryLength(d, count), trimmed.entries + 1)) return undefined;
  }
  const out = new Uint8Array(keep + entryLength(d, total));
  if (keep > 0) {
    putEntry(out, 0, scan.firstAt, scan.firstAt, scan.firstCount);
    for (let i = scan.firstEnd, j = first; j < keep; i++, j++) out[j] = bytes[i]!;
  }
  putEntry(out, keep, at, d, total);
  return out.buffer;
}

/** Whether a log of `length` bytes and `entries` entries is within the bounds (`bounded`'s, window-log.ts). */
function within(length: number, entries: number): boolean {
  return entries <= MAX_LOG_ENTRIES && (length <= MAX_LOG_BYTES || entries <= MIN_LOG_ENTRIES);
}
