// window-log-bytes.ts against references of its own (decodeLog, and the encoding as encodeLog describes it, written here): scanLog's whole LogScan on encoded, non-canonical, cut and corrupted bytes; trimmedLog, appendedLog and takenLog's bytes and when they decline, at the bounds; the view and trim caches across buffers; the varint and compactness tables.
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import {
  MAX_LOG_BYTES,
  MAX_LOG_ENTRIES,
  MIN_LOG_ENTRIES,
  appendedLog,
  entryLength,
  isCompact,
  putVarint,
  scanLog,
  takenLog,
  trimmedLog,
  varintLength,
  type LogScan,
} from "../src/shared/kinds/window-log-bytes.js";
import { decodeLog, encodeLog, type Entry } from "../src/shared/kinds/window-log.js";
import { runs, TIMEOUT } from "../tools/fast-check.js";

// ---- The references: nothing below calls window-log-bytes.ts (encodeLog does: it is checked, not used).

/** Whether the encoding writes an entry `d` ms after the one before, of `count` tokens, as two varints. */
function refCompact(d: number, count: number): boolean {
  // 2d < 2^53 - 1 with 2d even: d < 2^52.
  return Number.isInteger(d) && d >= 0 && d < 2 ** 52 && Number.isInteger(count) && count >= 1 && count <= Number.MAX_SAFE_INTEGER;
}

/** `n` (whole, 0 ≤ n < 2^53) as a little-endian base-128 varint. */
function refVarint(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const low = n % 128;
    n = (n - low) / 128;
    out.push(n > 0 ? low + 128 : low);
    if (n === 0) return out;
  }
}

/** A float64's eight bytes, little-endian. */
function f64(x: number): number[] {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, x, true);
  return [...b];
}

/** An entry's bytes: at `at`, `d` ms after the one before, of `count` tokens. */
function refEntry(at: number, d: number, count: number): number[] {
  return refCompact(d, count) ? [...refVarint(2 * d), ...refVarint(count)] : [1, ...f64(at), ...f64(count)];
}

/** The bytes of entries in order of time, as the encoding (encodeLog's description) writes them. */
function refEncode(entries: readonly Entry[]): Uint8Array {
  const out: number[] = [];
  let last = 0;
  for (const { at, count } of entries) {
    out.push(...refEntry(at, at - last, count));
    last = at;
  }
  return Uint8Array.from(out);
}

/** A fresh ArrayBuffer holding exactly `bytes`. */
const bufferOf = (bytes: ArrayLike<number>): ArrayBuffer => Uint8Array.from(bytes).buffer;

/** A log's bytes, entries (decodeLog's) and where each entry starts (`bounds`, with the end last). */
type Log = { bytes: Uint8Array; entries: readonly Entry[]; bounds: number[] };

/**
 * The Log of `bytes`, or undefined where decodeLog refuses them. An entry's bounds are the prefixes
 * decodeLog reads as a log: a prefix cut inside an entry is cut short.
 */
function refLog(bytes: Uint8Array): Log | undefined {
  const entries = decodeLog(bufferOf(bytes));
  if (entries === undefined) return undefined;
  const bounds = [0];
  for (let p = 1; p <= bytes.length; p++) if (decodeLog(bufferOf(bytes.subarray(0, p)))?.length === bounds.length) bounds.push(p);
  expect(bounds.length).toBe(entries.length + 1);
  return { bytes, entries, bounds };
}

/** Whether entry `k` of `log` is written as two varints (a float entry takes at least 17 bytes, two varints at most 16). */
const writtenCompact = (log: Log, k: number): boolean => log.bounds[k + 1]! - log.bounds[k]! < 17;

/** What scanLog must find in `log`, cut off at `after`. */
function refScan(log: Log, after: number): LogScan {
  const { entries, bounds } = log;
  const n = entries.length;
  let live = 0;
  let total = 0;
  let first = -1;
  entries.forEach((e, k) => {
    if (!(e.at > after)) return;
    if (first < 0) first = k;
    live++;
    total += e.count;
  });
  return {
    entries: n,
    live,
    total,
    firstStart: first < 0 ? 0 : bounds[first]!,
    firstEnd: first < 0 ? 0 : bounds[first + 1]!,
    firstAt: first < 0 ? 0 : entries[first]!.at,
    firstCount: first < 0 ? 0 : entries[first]!.count,
    lastStart: n === 0 ? 0 : bounds[n - 1]!,
    lastAt: n === 0 ? 0 : entries[n - 1]!.at,
    lastCount: n === 0 ? 0 : entries[n - 1]!.count,
    beforeLast: n < 2 ? 0 : entries[n - 2]!.at,
    compact: n === 0 ? true : writtenCompact(log, n - 1),
  };
}

/** The bytes trimmedLog must make of `log` cut off at `after` (some entry live): the first live one rewritten from 0, the rest as they were. */
function refTrimmed(log: Log, after: number): Uint8Array {
  const first = log.entries.findIndex((e) => e.at > after);
  const e = log.entries[first]!;
  return Uint8Array.from([...refEntry(e.at, e.at, e.count), ...log.bytes.subarray(log.bounds[first + 1]!)]);
}

/** Whether a log of `length` bytes and `n` entries is one `bounded` leaves as it is. */
const refWithin = (length: number, n: number): boolean => n <= 32 && (length <= 112 || n <= 8);

/**
 * The bytes appendedLog must return for `log` (every entry live) after `count` tokens taken at
 * `at`: a whole count, a total that stays a safe integer, `at` at the last entry (itself two
 * varints: merged into it) or later (a new entry, two varints), within the bounds; undefined
 * otherwise. The bytes before the entry written are the log's own.
 */
function refAppended(log: Log, at: number, count: number): Uint8Array | undefined {
  const { entries, bytes, bounds } = log;
  const n = entries.length;
  let total = 0;
  for (const e of entries) total += e.count;
  if (!(Number.isSafeInteger(count) && count > 0 && Number.isSafeInteger(total + count))) return undefined;
  const last = entries[n - 1];
  let out: number[];
  let after: number;
  if (last !== undefined && at === last.at) {
    if (!writtenCompact(log, n - 1)) return undefined;
    const before = n > 1 ? entries[n - 2]!.at : 0;
    out = [...bytes.subarray(0, bounds[n - 1]), ...refEntry(at, at - before, last.count + count)];
    after = n;
  } else {
    if (last !== undefined && !(at > last.at)) return undefined;
    const d = at - (last?.at ?? 0);
    if (!refCompact(d, count)) return undefined;
    out = [...bytes, ...refEntry(at, d, count)];
    after = n + 1;
  }
  return refWithin(out.length, after) ? Uint8Array.from(out) : undefined;
}

/** An ArrayBuffer's bytes, for comparing. */
const bytesOf = (b: ArrayBuffer | undefined): number[] | undefined => (b === undefined ? undefined : [...new Uint8Array(b)]);
const arr = (b: Uint8Array | undefined): number[] | undefined => (b === undefined ? undefined : [...b]);

// ---- The checks, each against the references.

/** scanLog of `log` cut off at `after`, on a buffer of its own. */
function checkScan(log: Log, after: number, buffer: ArrayBuffer = bufferOf(log.bytes)): LogScan {
  const scan = scanLog(buffer, after);
  expect(scan).toStrictEqual(refScan(log, after));
  return scan!;
}

/** trimmedLog of `log` cut off at `after` (some entry live): its bytes, its whole scan, and the scan cut off again. */
function checkTrim(log: Log, after: number, buffer: ArrayBuffer, again: number): ArrayBuffer {
  const scan = checkScan(log, after, buffer);
  const out = trimmedLog(buffer, scan);
  if (scan.live === scan.entries) {
    expect(out).toBe(buffer);
    return out;
  }
  expect(bytesOf(out)).toEqual(arr(refTrimmed(log, after)));
  const trimmed = refLog(new Uint8Array(out))!;
  expect(trimmed.entries).toEqual(log.entries.filter((e) => e.at > after));
  // Whole, as a call reads it just after trimming; then cut off elsewhere.
  expect(scanLog(out, -Infinity)).toStrictEqual(refScan(trimmed, -Infinity));
  expect(scanLog(out, again)).toStrictEqual(refScan(trimmed, again));
  expect(scanLog(out, -Infinity)).toStrictEqual(refScan(trimmed, -Infinity));
  return out;
}

/** appendedLog of `log` (scanned whole) after `count` tokens at `at`. */
function checkAppend(log: Log, at: number, count: number, buffer: ArrayBuffer = bufferOf(log.bytes)): ArrayBuffer | undefined {
  const scan = scanLog(buffer, -Infinity)!;
  const out = appendedLog(buffer, scan, at, count);
  expect(bytesOf(out)).toEqual(arr(refAppended(log, at, count)));
  return out;
}

/** takenLog of `log` cut off at `after` (some entry live) after `count` tokens at `at`: as appendedLog on the trimmed log. */
function checkTake(log: Log, after: number, at: number, count: number, buffer: ArrayBuffer = bufferOf(log.bytes)): ArrayBuffer | undefined {
  const scan = scanLog(buffer, after)!;
  const out = takenLog(buffer, scan, at, count);
  const trimmed = scan.live === scan.entries ? log : refLog(refTrimmed(log, after))!;
  expect(bytesOf(out)).toEqual(arr(refAppended(trimmed, at, count)));
  return out;
}

/** The Log of entries written by the reference encoder; encodeLog must write the same bytes. */
function logOf(entries: readonly Entry[]): Log {
  const bytes = refEncode(entries);
  expect(bytesOf(encodeLog(entries.map((e) => ({ ...e }))))).toEqual([...bytes]);
  const log = refLog(bytes);
  expect(log?.entries).toEqual(entries);
  return log!;
}

// ---- Generators.

const gapArb = fc.oneof(
  { weight: 4, arbitrary: fc.nat(3) },
  { weight: 2, arbitrary: fc.integer({ min: 60, max: 68 }) },
  { weight: 2, arbitrary: fc.integer({ min: 8188, max: 8196 }) },
  { weight: 1, arbitrary: fc.constantFrom(2 ** 20, 2 ** 21, 2 ** 28, 2 ** 35, 2 ** 48, 2 ** 52 - 1, 2 ** 52, 2 ** 53) },
  // Eighths: fractional instants whose sums are exact, so the log's instants are the entries'.
  { weight: 1, arbitrary: fc.nat(800).map((k) => k / 8) },
  { weight: 1, arbitrary: fc.nat(100_000) },
);
const countArb = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 130 }) },
  { weight: 2, arbitrary: fc.integer({ min: 16_380, max: 16_388 }) },
  { weight: 1, arbitrary: fc.constantFrom(2 ** 21 - 1, 2 ** 21, 2 ** 35, 2 ** 49, 2 ** 50 + 3, 2 ** 53 - 1, 2 ** 53, 2 ** 60) },
  { weight: 1, arbitrary: fc.double({ min: 0.001, max: 10, noNaN: true }) },
);
const startArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 3, arbitrary: fc.nat(1000) },
  { weight: 1, arbitrary: fc.integer({ min: -8000, max: 8000 }).map((k) => k / 8) },
  { weight: 1, arbitrary: fc.constantFrom(-5, 0.5, 2 ** 52 - 2, 2 ** 53 + 2, 1e300) },
);
/** Entries in order of time: equal instants, large gaps, fractional and unsafe counts and instants. */
const entriesArb = fc
  .tuple(startArb, fc.array(fc.tuple(gapArb, countArb), { minLength: 1, maxLength: 40 }))
  .map(([start, parts]) => {
    let at = start;
    return parts.map(([gap, count], k) => {
      if (k > 0) at += gap;
      return { at, count };
    });
  });

/** Instants to cut off at: each entry's, just before and after it, and the ends. */
function cutsOf(entries: readonly Entry[]): number[] {
  const out = [-Infinity, Infinity, NaN, 0, -1];
  for (const { at } of entries) out.push(at, at - 1, at + 1, at - 0.5, at + 0.5, at - Math.abs(at) * 2 ** -52 - 1e-300, at + Math.abs(at) * 2 ** -52 + 1e-300);
  return out;
}

/** Instants to take at, around the last entry's. */
function takesOf(entries: readonly Entry[]): number[] {
  const last = entries.at(-1)?.at ?? 0;
  const prev = entries.at(-2)?.at ?? 0;
  return [last, last, last, last - 1, last - 0.5, last + 1, last + 0.5, last + 63, last + 64, last + 8192, last + 2 ** 52, prev, 0, NaN, Infinity];
}

/** Counts to take. */
function countsOf(entries: readonly Entry[]): number[] {
  let total = 0;
  for (const e of entries) total += e.count;
  const room = Number.MAX_SAFE_INTEGER - total;
  return [1, 1, 2, 127, 128, 16_384, 0.5, 0, -1, NaN, 2 ** 53, room, room + 1];
}

/** The `k`th of `list`, round and round (`k` from a fixed-length array of draws: never undefined). */
const pick = <T>(list: readonly T[], k: number | undefined): T => list[(k ?? 0) % list.length]!;

/** `n`'s varint padded to `length` bytes (continuation bytes of 0): what decodeLog reads up to eight bytes of. */
function padded(n: number, length: number): number[] {
  const v = refVarint(n);
  if (length <= v.length) return v;
  v[v.length - 1]! += 128;
  while (v.length < length - 1) v.push(128);
  v.push(0);
  return v;
}

/**
 * How one entry is written: as the encoding writes it, its varints padded (up to the eight bytes
 * allowed), in full (two float64s) where two varints would do, or broken: a count of 0, an instant
 * not finite or before the one before, a count not finite or ≤ 0, an odd header, a varint of nine
 * bytes, cut short.
 */
const styleArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant("plain" as const) },
  { weight: 2, arbitrary: fc.constant("padHeader" as const) },
  { weight: 2, arbitrary: fc.constant("padCount" as const) },
  { weight: 1, arbitrary: fc.constant("pad8" as const) },
  { weight: 2, arbitrary: fc.constant("full" as const) },
  { weight: 1, arbitrary: fc.constantFrom("count0", "count0pad", "nanAt", "infAt", "earlier", "count0full", "badCount", "odd", "pad9", "cut", "junk") },
);
type Style = typeof styleArb extends fc.Arbitrary<infer S> ? S : never;

/** The bytes of `entries` each written in its style (the first one's style for the last, if any). */
function variantBytes(entries: readonly Entry[], styles: readonly Style[], pads: readonly number[], badCount: number): Uint8Array {
  const out: number[] = [];
  let last = 0;
  entries.forEach(({ at, count }, k) => {
    const style = pick(styles, k);
    const pad = pick(pads, k);
    const d = at - last;
    const before = last;
    last = at;
    const compact = refCompact(d, count);
    const full = (a: number, c: number) => [...(pad % 2 === 0 ? [1] : padded(1, 2 + (pad % 7))), ...f64(a), ...f64(c)];
    switch (style) {
      case "padHeader":
        return out.push(...(compact ? [...padded(2 * d, refVarint(2 * d).length + 1 + (pad % 3)), ...refVarint(count)] : full(at, count)));
      case "padCount":
        return out.push(...(compact ? [...refVarint(2 * d), ...padded(count, refVarint(count).length + 1 + (pad % 3))] : full(at, count)));
      case "pad8":
        return out.push(...(compact ? [...padded(2 * d, 8), ...padded(count, 8)] : full(at, count)));
      case "full":
        return out.push(...full(at, count));
      case "count0":
        return out.push(...(compact ? padded(2 * d, pad % 2 === 0 ? 1 : 3) : [0]), 0);
      case "count0pad":
        return out.push(...(compact ? refVarint(2 * d) : [0]), ...padded(0, 2 + (pad % 4)));
      case "nanAt":
        return out.push(...full(NaN, count));
      case "infAt":
        return out.push(...full(pad % 2 === 0 ? Infinity : -Infinity, count));
      case "earlier":
        // Before the entry before it (the first has none: it may lie before 0).
        return out.push(...full(before - 1 - (pad % 3) / 2, count));
      case "count0full":
        return out.push(...full(at, pad % 2 === 0 ? 0 : -0));
      case "badCount":
        return out.push(...full(at, badCount));
      case "odd":
        return out.push(3 + 2 * (pad % 60), 1);
      case "pad9":
        return out.push(...(pad % 2 === 0 ? [...padded(2 * (pad % 50), 9), 1] : [...refVarint(2 * (pad % 50)), ...padded(1, 9)]));
      case "cut": {
        const whole = compact ? [...refVarint(2 * d), ...refVarint(count)] : full(at, count);
        return out.push(...whole.slice(0, pad % whole.length));
      }
      case "junk":
        return out.push(pad % 256);
      default:
        return out.push(...(compact ? [...refVarint(2 * d), ...refVarint(count)] : full(at, count)));
    }
  });
  return Uint8Array.from(out);
}

const brokenStyles = ["count0", "count0pad", "nanAt", "infAt", "earlier", "count0full", "badCount", "odd", "pad9", "cut", "junk"] as const;

/** Bytes that may or may not be a log: logs written in any style, logs with one entry broken, and random bytes. */
const rawArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(entriesArb, fc.nat(), fc.constantFrom(...brokenStyles), fc.nat(1000), fc.constantFrom(0, -0, -1, NaN, Infinity, -Infinity))
      .map(([entries, k, broken, pad, bad]) => {
        // Every entry as the encoding writes it but one, at any place.
        const styles: Style[] = entries.map((_, j) => (j === k % entries.length ? broken : "plain"));
        return variantBytes(entries, styles, [pad], bad);
      }),
  },
  {
    weight: 5,
    arbitrary: fc
      .tuple(
        entriesArb,
        fc.array(styleArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(1000), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(0, -0, -1, NaN, Infinity, -Infinity),
      )
      .map(([entries, styles, pads, bad]) => variantBytes(entries, styles, pads, bad)),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 24 }) },
);

// ---- The properties.

describe("scanLog against decodeLog", () => {
  test.prop([entriesArb, fc.array(fc.nat(), { minLength: 4, maxLength: 4 })], { ...runs(300, 5000), timeout: TIMEOUT })(
    "on an encoded log, the whole LogScan at each entry's instant, around it, and at the ends",
    (entries, ks) => {
      const log = logOf(entries);
      const cuts = cutsOf(log.entries);
      const buffer = bufferOf(log.bytes);
      for (const k of ks) checkScan(log, pick(cuts, k), buffer);
      // Every cut once, on the same buffer: the view made for it stays right.
      for (const after of cuts) checkScan(log, after, buffer);
    },
  );

  test.prop([rawArb, fc.nat()], { ...runs(600, 10_000), timeout: TIMEOUT })(
    "on any bytes: undefined exactly where decodeLog is, else the whole LogScan",
    (raw, k) => {
      const log = refLog(raw);
      const buffer = bufferOf(raw);
      if (log === undefined) {
        expect(scanLog(buffer, -Infinity)).toBeUndefined();
        expect(scanLog(buffer, pick([0, 100, Infinity], k))).toBeUndefined();
        return;
      }
      for (const after of [-Infinity, pick(cutsOf(log.entries), k)]) checkScan(log, after, buffer);
    },
  );
});

describe("trimmedLog, appendedLog, takenLog against the references", () => {
  test.prop([entriesArb, fc.array(fc.nat(), { minLength: 5, maxLength: 5 })], { ...runs(300, 5000), timeout: TIMEOUT })(
    "on an encoded log: the live entries' bytes, a take written at the end or declined, in one buffer or two",
    (entries, [kc, ka, kn, kc2, kk]) => {
      const log = logOf(entries);
      const cuts = cutsOf(log.entries);
      const after = pick(cuts, kc);
      const live = log.entries.filter((e) => e.at > after);
      const at = pick(takesOf(log.entries), ka);
      const count = pick(countsOf(log.entries), kn);
      checkAppend(log, at, count);
      if (live.length === 0) return;
      const trimmed = checkTrim(log, after, bufferOf(log.bytes), pick(cuts, kc2));
      // The trimmed log is what the reference encoder writes of the live entries.
      expect(bytesOf(trimmed)).toEqual([...refEncode(live)]);
      const liveLog = refLog(new Uint8Array(trimmed))!;
      const at2 = pick(takesOf(live), (ka ?? 0) + (kk ?? 0));
      checkAppend(liveLog, at2, count, trimmed);
      checkTake(log, after, at2, count);
      checkTake(log, after, at, count);
    },
  );

  test.prop([rawArb, fc.array(fc.nat(), { minLength: 4, maxLength: 4 })], { ...runs(600, 10_000), timeout: TIMEOUT })(
    "on any log's bytes, non-canonical ones too: the same, the bytes kept as they were",
    (raw, [kc, ka, kn, kc2]) => {
      const log = refLog(raw);
      if (log === undefined) return;
      const after = pick(cutsOf(log.entries), kc);
      const at = pick(takesOf(log.entries), ka);
      const count = pick(countsOf(log.entries), kn);
      checkAppend(log, at, count);
      if (!log.entries.some((e) => e.at > after)) return;
      checkTrim(log, after, bufferOf(raw), pick(cutsOf(log.entries), kc2));
      checkTake(log, after, at, count);
    },
  );

  test.prop([entriesArb, entriesArb, fc.array(fc.tuple(fc.nat(5), fc.nat(), fc.nat(), fc.nat(), fc.nat()), { minLength: 1, maxLength: 12 })], {
    ...runs(200, 4000),
    timeout: TIMEOUT,
  })("calls interleaved on several buffers (the cached view and trimmed scan are never another buffer's)", (a, b, ops) => {
    const pool: { log: Log; buffer: ArrayBuffer }[] = [a, b].map((entries) => {
      const log = logOf(entries);
      return { log, buffer: bufferOf(log.bytes) };
    });
    for (const [op, kb, kc, ka, kn] of ops) {
      const { log, buffer } = pick(pool, kb);
      const cuts = cutsOf(log.entries);
      const after = pick(cuts, kc);
      const live = log.entries.some((e) => e.at > after);
      const at = pick(takesOf(log.entries), ka);
      const count = pick(countsOf(log.entries), kn);
      if (op === 0 || op === 1) checkScan(log, op === 0 ? -Infinity : after, buffer);
      else if (op === 2 && live) {
        const out = checkTrim(log, after, buffer, pick(cuts, ka));
        if (out !== buffer) pool.push({ log: refLog(new Uint8Array(out))!, buffer: out });
      } else if (op === 3) {
        const out = checkAppend(log, at, count, buffer);
        if (out !== undefined) pool.push({ log: refLog(new Uint8Array(out))!, buffer: out });
      } else if (op === 4 && live) {
        const out = checkTake(log, after, at, count, buffer);
        if (out !== undefined) pool.push({ log: refLog(new Uint8Array(out))!, buffer: out });
      } else checkScan(log, after, buffer);
    }
  });
});

// ---- Tables.

const steady = (n: number, gap: number, count: number, start = gap): Entry[] => Array.from({ length: n }, (_, k) => ({ at: start + k * gap, count }));

describe("the bounds, exactly at and past them", () => {
  const gap = 100; // header 200 and count 200: two varints of two bytes, 4 bytes an entry
  test.each<[string, Entry[], number, number, boolean]>([
    ["entries: the 32nd, a new instant", steady(31, 1, 1), 32, 1, true],
    ["entries: a 33rd", steady(32, 1, 1), 33, 1, false],
    ["entries: 32, merged at the last instant", steady(32, 1, 1), 32, 1, true],
    ["entries: 33 (an earlier version's log), merged at the last instant", steady(33, 1, 1), 33, 1, false],
    ["bytes: 112 exactly", steady(27, gap, 200), 28 * gap, 200, true],
    ["bytes: 113", steady(27, gap, 200), 28 * gap, 20_000, false],
    ["bytes: 112 exactly, merged", steady(28, gap, 200), 28 * gap, 1, true],
    ["bytes: 113, merged (the count takes a third byte)", steady(28, gap, 200), 28 * gap, 16_184, false],
    ["bytes: 112, merged to a count of 16,383", steady(28, gap, 200), 28 * gap, 16_183, true],
    // Entries 1.5 ms apart, written in full (17 bytes): whole counts, so the total stays whole.
    ["min entries: an 8th past the bytes", steady(7, 1.5, 1), 11.5, 1, true],
    ["min entries: a 9th past the bytes", steady(8, 1.5, 1), 13, 1, false],
    ["min entries: 8, merged past the bytes", [...steady(7, 1.5, 1), { at: 11.5, count: 1 }], 11.5, 1, true],
    ["min entries: 9, merged past the bytes", [...steady(8, 1.5, 1), { at: 13, count: 1 }], 13, 1, false],
  ])("appendedLog: %s", (_, entries, at, count, written) => {
    expect([MAX_LOG_ENTRIES, MAX_LOG_BYTES, MIN_LOG_ENTRIES]).toEqual([32, 112, 8]);
    const log = logOf(entries);
    expect(checkAppend(log, at, count) !== undefined).toBe(written);
    // The same take with an entry before them that has left (trimmed first, in the same buffer).
    const dead = logOf([{ at: -10, count: 3 }, ...entries]);
    expect(checkTake(dead, -10, at, count) !== undefined).toBe(written);
  });

  test.each<[string, Entry[], number, number, boolean]>([
    // The first live entry, 1 ms after the one that left (three bytes), is written again from 0 (five): 109 bytes.
    ["bytes: 112 once its first entry is rewritten", [{ at: 8191, count: 1 }, ...steady(27, gap, 200, 8192)], 8193 + 26 * gap, 200, true],
    ["bytes: 113 once its first entry is rewritten", [{ at: 8191, count: 1 }, ...steady(27, gap, 200, 8192)], 8193 + 26 * gap, 20_000, false],
    ["bytes: 112, merged, once rewritten", [{ at: 8191, count: 1 }, ...steady(27, gap, 200, 8192), { at: 8193 + 26 * gap, count: 199 }], 8193 + 26 * gap, 1, true],
    ["bytes: 113, merged, once rewritten", [{ at: 8191, count: 1 }, ...steady(27, gap, 200, 8192), { at: 8193 + 26 * gap, count: 199 }], 8193 + 26 * gap, 16_185, false],
    ["entries: 31 live of 32, a new instant", steady(32, 1, 1), 33, 1, true],
    ["entries: 32 live of 33, a new instant", steady(33, 1, 1), 34, 1, false],
    ["entries: 32 live of 33, merged", steady(33, 1, 1), 33, 1, true],
    ["entries: 33 live of 34, merged", [{ at: 0.5, count: 1 }, ...steady(33, 1, 1)], 33, 1, false],
    ["one live entry, merged", [{ at: 5, count: 1 }, { at: 64, count: 127 }], 64, 1, true],
    ["one live entry, fractional once rewritten from 0, merged", [{ at: 0.5, count: 1 }, { at: 1.5, count: 1 }], 1.5, 1, false],
    ["one live entry, fractional once rewritten from 0, a new instant", [{ at: 0.5, count: 1 }, { at: 1.5, count: 1 }], 2.5, 1, true],
  ])("takenLog: %s", (_, entries, at, count, written) => {
    const log = logOf(entries);
    const after = entries[0]!.at;
    expect(checkTake(log, after, at, count) !== undefined).toBe(written);
  });

  test("a count that keeps the total a safe integer, and one past it", () => {
    const log = logOf([{ at: 1, count: 2 ** 52 }]);
    const room = Number.MAX_SAFE_INTEGER - 2 ** 52;
    expect(checkAppend(log, 2, room)).toBeDefined();
    expect(checkAppend(log, 2, room + 1)).toBeUndefined();
    expect(checkAppend(log, 1, room)).toBeDefined();
    expect(checkAppend(log, 1, room + 1)).toBeUndefined();
    const dead = logOf([{ at: 0, count: 5 }, { at: 1, count: 2 ** 52 }]);
    expect(checkTake(dead, 0, 2, room)).toBeDefined();
    expect(checkTake(dead, 0, 2, room + 1)).toBeUndefined();
    for (const count of [0, -1, 0.5, NaN, Infinity]) {
      expect(checkAppend(log, 2, count)).toBeUndefined();
      expect(checkAppend(log, 1, count)).toBeUndefined();
      expect(checkTake(dead, 0, 2, count)).toBeUndefined();
      expect(checkTake(dead, 0, 1, count)).toBeUndefined();
    }
  });

  test("an empty log: a take at 0, later, earlier, fractional", () => {
    const empty = logOf([]);
    expect(checkAppend(empty, 0, 3)).toBeDefined();
    expect(checkAppend(empty, 5, 3)).toBeDefined();
    expect(checkAppend(empty, -1, 3)).toBeUndefined();
    expect(checkAppend(empty, 0.5, 3)).toBeUndefined();
    expect(checkScan(empty, -Infinity)).toStrictEqual(refScan(empty, -Infinity));
  });
});

describe("the caches", () => {
  test("scanning the log trimmedLog just made, whole, is the scan it kept; another buffer or a cut-off reads the bytes", () => {
    const a = logOf(steady(5, 10, 2));
    const b = logOf(steady(6, 7, 3));
    const ba = bufferOf(a.bytes);
    const bb = bufferOf(b.bytes);
    const trimmed = trimmedLog(ba, scanLog(ba, 20)!);
    const kept = scanLog(trimmed, -Infinity);
    expect(scanLog(trimmed, -Infinity)).toBe(kept);
    expect(kept).toStrictEqual(refScan(refLog(new Uint8Array(trimmed))!, -Infinity));
    expect(scanLog(trimmed, 30)).toStrictEqual(refScan(refLog(new Uint8Array(trimmed))!, 30));
    expect(scanLog(bb, -Infinity)).toStrictEqual(refScan(b, -Infinity));
    expect(scanLog(ba, -Infinity)).toStrictEqual(refScan(a, -Infinity));
    expect(scanLog(trimmed, -Infinity)).toBe(kept);
    // Every entry live: the buffer itself, and the kept scan stays the other log's.
    expect(trimmedLog(bb, scanLog(bb, 0)!)).toBe(bb);
    expect(scanLog(trimmed, -Infinity)).toBe(kept);
    expect(scanLog(bb, -Infinity)).toStrictEqual(refScan(b, -Infinity));
  });
});

describe("varints and compactness", () => {
  test.each([
    [0, [0]],
    [1, [1]],
    [127, [127]],
    [128, [128, 1]],
    [16_383, [255, 127]],
    [16_384, [128, 128, 1]],
    [2 ** 21 - 1, [255, 255, 127]],
    [2 ** 21, [128, 128, 128, 1]],
    [Number.MAX_SAFE_INTEGER, [255, 255, 255, 255, 255, 255, 255, 15]],
  ])("%d: varintLength and putVarint", (n, bytes) => {
    expect(varintLength(n)).toBe(bytes.length);
    const out = new Uint8Array(bytes.length + 2);
    expect(putVarint(out, 1, n)).toBe(1 + bytes.length);
    expect([...out]).toEqual([0, ...bytes, 0]);
  });

  test.each<[number, number, boolean]>([
    [0, 1, true],
    [1, 1, true],
    [-1, 1, false],
    [-0.5, 1, false],
    [0.5, 1, false],
    [1, 0, false],
    [1, -1, false],
    [1, 0.5, false],
    [1, Number.MAX_SAFE_INTEGER, true],
    [1, 2 ** 53, false],
    [(Number.MAX_SAFE_INTEGER - 1) / 2, 1, true],
    [(Number.MAX_SAFE_INTEGER + 1) / 2, 1, false],
    [Number.MAX_SAFE_INTEGER, 1, false],
    [2 ** 53, 1, false],
    [NaN, 1, false],
    [Infinity, 1, false],
    [1, NaN, false],
    [1, Infinity, false],
  ])("isCompact(%d, %d) is %s, and entryLength agrees", (d, count, compact) => {
    expect(isCompact(d, count)).toBe(compact);
    expect(refCompact(d, count)).toBe(compact);
    expect(entryLength(d, count)).toBe(compact ? refVarint(2 * d).length + refVarint(count).length : 17);
  });
});
