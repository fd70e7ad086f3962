// The fold's plan (foldFlow and pruneFlow, src/shared/metrics/metrics-fold.ts) as tables over metrics
// tables held in memory, run at explicit instants the way metrics.fold runs them: the exact reads,
// writes, result and rescheduling of one transaction.
import { ConvexError } from "convex/values";
import { describe, expect, test } from "vitest";
import { DAY, MINUTE, SECOND } from "../src/shared/kinds/algebra.js";
import { addCounts, topOffenders, zeroCounts, type FoldResult, type MetricCounts, type MetricOutcome } from "../src/shared/metrics/metrics.js";
import {
  DEFAULT_RETAIN_MS,
  FOLD_SETTLE_MS,
  foldFlow,
  pruneFlow,
  type FoldQuery,
  type FoldRead,
  type FoldSettings,
  type FoldWrite,
  type StoredBucket,
  type StoredEvent,
  type StoredKey,
} from "../src/shared/metrics/metrics-fold.js";
import { runPlan } from "../src/shared/shapes/rows.js";

/** A whole minute, so minutes start at T0 + k * MINUTE. */
const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);
/** The fold runs at NOW: half a minute into the third minute after T0. */
const NOW = T0 + 2 * MINUTE + 30 * SECOND;

type S = { event: string; bucket: string; key: string };
/** An event as stored, with its creation time (ms), which the fold's read is ordered and bounded by. */
type Event = StoredEvent<S> & { created: number };
type Tables = { events: Event[]; buckets: StoredBucket<S>[]; keys: StoredKey<S>[] };

/** An event of `name` (and `key`), `outcome` for `count` tokens, decided at `ts` and created then. */
function ev(id: string, name: string, outcome: MetricOutcome, count: number, ts: number, key?: string): Event {
  return { id, name, ...(key === undefined ? {} : { key }), outcome, count, ts, created: ts };
}
const counts = (c: Partial<MetricCounts>): MetricCounts => ({ ...zeroCounts(), ...c });
const bucketRow = (id: string, name: string, bucket: number, c: Partial<MetricCounts>): StoredBucket<S> => ({ id, name, bucket, ...counts(c) });
const keyRow = (id: string, name: string, bucket: number, key: string | undefined, refused: number, refusedTokens: number): StoredKey<S> => ({
  id,
  name,
  bucket,
  ...(key === undefined ? {} : { key }),
  refused,
  refusedTokens,
});

/**
 * Runs one transaction of the fold over `tables` as metrics.fold does: the fold's reads, its
 * writes, then the prune's reads (which see those writes) and its writes. Reads are answered in
 * index order (creation order; minute order, ties in insertion order, as `_creationTime` breaks
 * them); inserts get ids `bucket1`, `key1`, … Returns the reads, the writes, the result and `next`.
 */
function transaction(tables: Tables, args: { batchSize?: number; retainFor?: number }) {
  const reads: FoldQuery[] = [];
  const writes: FoldWrite<S>[] = [];
  let inserted = 0;
  const none: FoldRead<S> = { events: [], buckets: [], keys: [] };
  const strip = ({ created: _c, ...event }: Event): StoredEvent<S> => event;
  const one = <T>(found: T[]): T[] => {
    if (found.length > 1) throw new Error("unique() found more than one");
    return found;
  };
  const answer = (q: FoldQuery): FoldRead<S> => {
    reads.push(q);
    switch (q.read) {
      case "events": {
        const settled = tables.events.filter((e) => e.created < q.createdBefore).sort((a, b) => a.created - b.created);
        return { ...none, events: settled.slice(0, q.take).map(strip) };
      }
      case "bucket":
        return { ...none, buckets: one(tables.buckets.filter((b) => b.name === q.name && b.bucket === q.bucket)) };
      case "key":
        return { ...none, keys: one(tables.keys.filter((k) => k.name === q.name && k.bucket === q.bucket && k.key === q.key)) };
      case "aged": {
        const aged = <T extends { bucket: number }>(rows: T[]) => rows.filter((r) => r.bucket < q.before).sort((a, b) => a.bucket - b.bucket).slice(0, q.take);
        return q.table === "metricBuckets" ? { ...none, buckets: aged(tables.buckets) } : { ...none, keys: aged(tables.keys) };
      }
      default: {
        const never: never = q;
        throw new Error(`unknown read ${JSON.stringify(never)}`);
      }
    }
  };
  const apply = (w: FoldWrite<S>) => {
    writes.push(w);
    switch (w.op) {
      case "delete event":
        tables.events = tables.events.filter((e) => e.id !== w.id);
        return;
      case "delete bucket":
        tables.buckets = tables.buckets.filter((b) => b.id !== w.id);
        return;
      case "delete key":
        tables.keys = tables.keys.filter((k) => k.id !== w.id);
        return;
      case "patch bucket":
        tables.buckets = tables.buckets.map((b) => (b.id === w.id ? { ...b, ...w.counts } : b));
        return;
      case "patch key":
        tables.keys = tables.keys.map((k) => (k.id === w.id ? { ...k, ...w.counts } : k));
        return;
      case "insert bucket":
        tables.buckets.push({ id: `bucket${++inserted}`, ...w.fields });
        return;
      case "insert key":
        tables.keys.push({ id: `key${++inserted}`, ...w.fields });
        return;
      default: {
        const never: never = w;
        throw new Error(`unknown write ${JSON.stringify(never)}`);
      }
    }
  };
  const fold = runPlan(foldFlow<S>(args, NOW), answer);
  fold.writes.forEach(apply);
  const prune = runPlan(pruneFlow<S>(fold), answer);
  prune.writes.forEach(apply);
  return { reads, writes, result: prune.result, next: prune.next };
}

const empty = (): Tables => ({ events: [], buckets: [], keys: [] });
const settled = (ms: number) => NOW - FOLD_SETTLE_MS - ms;
const M0 = T0;
const M1 = T0 + MINUTE;

type Row = {
  why: string;
  tables: Tables;
  args?: { batchSize?: number; retainFor?: number };
  reads: FoldQuery[];
  writes: FoldWrite<S>[];
  result: FoldResult;
  next?: FoldSettings;
};

const rows: Row[] = [
  {
    why: "events across two minutes and two names sum per (name, minute), each summary looked up once; every event is deleted",
    tables: {
      ...empty(),
      events: [
        ev("e1", "chat", "admitted", 1, M0 + 1000),
        ev("e2", "api", "reserved", 5, M0 + 2000),
        ev("e3", "chat", "admitted", 2, M0 + 3000),
        ev("e4", "chat", "reserved", 3, M1 + 1000),
      ],
    },
    reads: [
      { read: "events", createdBefore: NOW - FOLD_SETTLE_MS, take: 500 },
      { read: "bucket", name: "chat", bucket: M0 },
      { read: "bucket", name: "api", bucket: M0 },
      { read: "bucket", name: "chat", bucket: M1 },
      { read: "aged", table: "metricBuckets", before: NOW - DEFAULT_RETAIN_MS - 30 * SECOND, take: 496 },
      { read: "aged", table: "metricKeys", before: NOW - DEFAULT_RETAIN_MS - 30 * SECOND, take: 496 },
    ],
    writes: [
      { op: "delete event", id: "e1" },
      { op: "delete event", id: "e2" },
      { op: "delete event", id: "e3" },
      { op: "delete event", id: "e4" },
      { op: "insert bucket", fields: { name: "chat", bucket: M0, ...counts({ admitted: 2, admittedTokens: 3 }) } },
      { op: "insert bucket", fields: { name: "api", bucket: M0, ...counts({ reserved: 1, reservedTokens: 5 }) } },
      { op: "insert bucket", fields: { name: "chat", bucket: M1, ...counts({ reserved: 1, reservedTokens: 3 }) } },
    ],
    result: { folded: 4, pruned: 0, done: true },
  },
  {
    why: "refusals also sum per (name, minute, key): key a twice, the keyless key (no key field) once, a again in the next minute",
    tables: {
      ...empty(),
      events: [
        ev("e1", "chat", "refused", 1, M0 + 1000, "a"),
        ev("e2", "chat", "refused", 4, M0 + 2000),
        ev("e3", "chat", "refused", 2, M0 + 3000, "a"),
        ev("e4", "chat", "refused", 3, M1 + 1000, "a"),
      ],
    },
    reads: [
      { read: "events", createdBefore: NOW - FOLD_SETTLE_MS, take: 500 },
      { read: "bucket", name: "chat", bucket: M0 },
      { read: "key", name: "chat", bucket: M0, key: "a" },
      { read: "key", name: "chat", bucket: M0, key: undefined },
      { read: "bucket", name: "chat", bucket: M1 },
      { read: "key", name: "chat", bucket: M1, key: "a" },
      { read: "aged", table: "metricBuckets", before: NOW - DEFAULT_RETAIN_MS - 30 * SECOND, take: 496 },
      { read: "aged", table: "metricKeys", before: NOW - DEFAULT_RETAIN_MS - 30 * SECOND, take: 496 },
    ],
    writes: [
      { op: "delete event", id: "e1" },
      { op: "delete event", id: "e2" },
      { op: "delete event", id: "e3" },
      { op: "delete event", id: "e4" },
      { op: "insert bucket", fields: { name: "chat", bucket: M0, ...counts({ refused: 3, refusedTokens: 7 }) } },
      { op: "insert bucket", fields: { name: "chat", bucket: M1, ...counts({ refused: 1, refusedTokens: 3 }) } },
      { op: "insert key", fields: { name: "chat", bucket: M0, key: "a", refused: 2, refusedTokens: 3 } },
      { op: "insert key", fields: { name: "chat", bucket: M0, refused: 1, refusedTokens: 4 } },
      { op: "insert key", fields: { name: "chat", bucket: M1, key: "a", refused: 1, refusedTokens: 3 } },
    ],
    result: { folded: 4, pruned: 0, done: true },
  },
  {
    why: "existing summaries are added to and patched (only the refusal counts of a key's row); other names' rows are untouched",
    tables: {
      events: [ev("e1", "chat", "admitted", 2, M0 + 1000), ev("e2", "chat", "refused", 3, M0 + 2000)],
      buckets: [bucketRow("b1", "chat", M0, { admitted: 5, admittedTokens: 6, refused: 1, refusedTokens: 1 }), bucketRow("b2", "api", M0, { admitted: 9 })],
      keys: [keyRow("k1", "chat", M0, undefined, 1, 1)],
    },
    args: { retainFor: MINUTE },
    reads: [
      { read: "events", createdBefore: NOW - FOLD_SETTLE_MS, take: 500 },
      { read: "bucket", name: "chat", bucket: M0 },
      { read: "key", name: "chat", bucket: M0, key: undefined },
      { read: "aged", table: "metricBuckets", before: M1, take: 498 },
      { read: "aged", table: "metricKeys", before: M1, take: 496 },
    ],
    writes: [
      { op: "delete event", id: "e1" },
      { op: "delete event", id: "e2" },
      { op: "patch bucket", id: "b1", counts: counts({ admitted: 6, admittedTokens: 8, refused: 2, refusedTokens: 4 }) },
      { op: "patch key", id: "k1", counts: { refused: 2, refusedTokens: 4 } },
      // retainFor is a minute: the minute of T0 ends before NOW - MINUTE's minute starts.
      { op: "delete bucket", id: "b1" },
      { op: "delete bucket", id: "b2" },
      { op: "delete key", id: "k1" },
    ],
    result: { folded: 2, pruned: 3, done: true },
  },
  {
    why: "settle boundary: an event created exactly at now - FOLD_SETTLE_MS is left (the read is `<`); 1 ms earlier is folded",
    tables: { ...empty(), events: [{ ...ev("e1", "chat", "admitted", 1, M1), created: settled(1) }, { ...ev("e2", "chat", "admitted", 1, M1), created: settled(0) }] },
    args: { batchSize: 2 },
    reads: [
      { read: "events", createdBefore: NOW - FOLD_SETTLE_MS, take: 2 },
      { read: "bucket", name: "chat", bucket: M1 },
      { read: "aged", table: "metricBuckets", before: NOW - DEFAULT_RETAIN_MS - 30 * SECOND, take: 1 },
      { read: "aged", table: "metricKeys", before: NOW - DEFAULT_RETAIN_MS - 30 * SECOND, take: 1 },
    ],
    writes: [
      { op: "delete event", id: "e1" },
      { op: "insert bucket", fields: { name: "chat", bucket: M1, ...counts({ admitted: 1, admittedTokens: 1 }) } },
    ],
    result: { folded: 1, pruned: 0, done: true },
  },
  {
    why: "a full batch may have left settled events: no prune (nothing aged is read) and it reschedules with the settings resolved",
    tables: {
      ...empty(),
      events: [ev("e1", "chat", "admitted", 1, M0), ev("e2", "chat", "admitted", 1, M0 + 1), ev("e3", "chat", "admitted", 1, M0 + 2)],
      buckets: [bucketRow("old", "chat", M0 - DEFAULT_RETAIN_MS, { admitted: 1 })],
    },
    args: { batchSize: 2 },
    reads: [
      { read: "events", createdBefore: NOW - FOLD_SETTLE_MS, take: 2 },
      { read: "bucket", name: "chat", bucket: M0 },
    ],
    writes: [
      { op: "delete event", id: "e1" },
      { op: "delete event", id: "e2" },
      { op: "insert bucket", fields: { name: "chat", bucket: M0, ...counts({ admitted: 2, admittedTokens: 2 }) } },
    ],
    result: { folded: 2, pruned: 0, done: false },
    next: { batchSize: 2, retainFor: DEFAULT_RETAIN_MS },
  },
  {
    why: "a partial batch prunes within the rest of it (5 - 1 = 4): buckets first, keys in what is left (4 - 1); fewer than 4, so done",
    tables: {
      events: [ev("e1", "chat", "admitted", 1, M1)],
      buckets: [bucketRow("b-old", "chat", M0 - 2 * MINUTE, { admitted: 1 }), bucketRow("b-kept", "chat", M0, { admitted: 1 })],
      keys: [keyRow("k-old", "chat", M0 - 2 * MINUTE, "a", 1, 1)],
    },
    args: { batchSize: 5, retainFor: 2 * MINUTE + 30 * SECOND },
    reads: [
      { read: "events", createdBefore: NOW - FOLD_SETTLE_MS, take: 5 },
      { read: "bucket", name: "chat", bucket: M1 },
      // NOW - retainFor is T0 exactly: the minute starting at T0 is kept (`<`).
      { read: "aged", table: "metricBuckets", before: M0, take: 4 },
      { read: "aged", table: "metricKeys", before: M0, take: 3 },
    ],
    writes: [
      { op: "delete event", id: "e1" },
      { op: "insert bucket", fields: { name: "chat", bucket: M1, ...counts({ admitted: 1, admittedTokens: 1 }) } },
      { op: "delete bucket", id: "b-old" },
      { op: "delete key", id: "k-old" },
    ],
    result: { folded: 1, pruned: 2, done: true },
  },
  {
    why: "a prune that uses its whole budget (3 - 1 = 2, both buckets) may have left more: reschedule; keys are read with 0 left",
    tables: {
      ...empty(),
      events: [ev("e1", "chat", "admitted", 1, M1)],
      buckets: [bucketRow("b1", "chat", M0 - 3 * MINUTE, {}), bucketRow("b2", "api", M0 - 3 * MINUTE, {})],
      keys: [keyRow("k1", "chat", M0 - 3 * MINUTE, "a", 1, 1)],
    },
    args: { batchSize: 3, retainFor: 0 },
    reads: [
      { read: "events", createdBefore: NOW - FOLD_SETTLE_MS, take: 3 },
      { read: "bucket", name: "chat", bucket: M1 },
      { read: "aged", table: "metricBuckets", before: T0 + 2 * MINUTE, take: 2 },
      { read: "aged", table: "metricKeys", before: T0 + 2 * MINUTE, take: 0 },
    ],
    writes: [
      { op: "delete event", id: "e1" },
      { op: "insert bucket", fields: { name: "chat", bucket: M1, ...counts({ admitted: 1, admittedTokens: 1 }) } },
      { op: "delete bucket", id: "b1" },
      { op: "delete bucket", id: "b2" },
    ],
    result: { folded: 1, pruned: 2, done: false },
    next: { batchSize: 3, retainFor: 0 },
  },
  {
    why: "the prune reads after the fold's writes: with retainFor 0, the minute just folded (before NOW's) is pruned with the rest",
    tables: { ...empty(), events: [ev("e1", "chat", "refused", 2, M1, "a")] },
    args: { retainFor: 0 },
    reads: [
      { read: "events", createdBefore: NOW - FOLD_SETTLE_MS, take: 500 },
      { read: "bucket", name: "chat", bucket: M1 },
      { read: "key", name: "chat", bucket: M1, key: "a" },
      { read: "aged", table: "metricBuckets", before: T0 + 2 * MINUTE, take: 499 },
      { read: "aged", table: "metricKeys", before: T0 + 2 * MINUTE, take: 498 },
    ],
    writes: [
      { op: "delete event", id: "e1" },
      { op: "insert bucket", fields: { name: "chat", bucket: M1, ...counts({ refused: 1, refusedTokens: 2 }) } },
      { op: "insert key", fields: { name: "chat", bucket: M1, key: "a", refused: 1, refusedTokens: 2 } },
      { op: "delete bucket", id: "bucket1" },
      { op: "delete key", id: "key2" },
    ],
    result: { folded: 1, pruned: 2, done: true },
  },
  {
    why: "nothing settled and nothing aged: one read of each kind, no write, done",
    tables: { ...empty(), events: [{ ...ev("e1", "chat", "admitted", 1, NOW), created: NOW }] },
    reads: [
      { read: "events", createdBefore: NOW - FOLD_SETTLE_MS, take: 500 },
      { read: "aged", table: "metricBuckets", before: NOW - DEFAULT_RETAIN_MS - 30 * SECOND, take: 500 },
      { read: "aged", table: "metricKeys", before: NOW - DEFAULT_RETAIN_MS - 30 * SECOND, take: 500 },
    ],
    writes: [],
    result: { folded: 0, pruned: 0, done: true },
  },
  {
    why: "batchSize 2000 is the most allowed, retainFor 0 the least: one read of 2000",
    tables: empty(),
    args: { batchSize: 2000, retainFor: 0 },
    reads: [
      { read: "events", createdBefore: NOW - FOLD_SETTLE_MS, take: 2000 },
      { read: "aged", table: "metricBuckets", before: T0 + 2 * MINUTE, take: 2000 },
      { read: "aged", table: "metricKeys", before: T0 + 2 * MINUTE, take: 2000 },
    ],
    writes: [],
    result: { folded: 0, pruned: 0, done: true },
  },
];

test("metrics are kept seven days unless the fold is told otherwise (DEFAULT_RETAIN_MS)", () => {
  expect(DEFAULT_RETAIN_MS).toBe(7 * DAY);
});

describe("foldFlow and pruneFlow: one transaction's reads, writes and result", () => {
  test.each(rows)("$why", ({ tables, args, reads, writes, result, next }) => {
    const out = transaction(tables, args ?? {});
    expect(out.reads).toEqual(reads);
    expect(out.writes).toStrictEqual(writes);
    expect(out.result).toStrictEqual(result);
    expect(out.next).toStrictEqual(next);
  });

  test("run until done, batches of 2 fold every settled event exactly once and leave the rest", () => {
    const tables: Tables = {
      ...empty(),
      events: [
        ...Array.from({ length: 5 }, (_, i) => ev(`e${i}`, "chat", i % 2 ? "refused" : "admitted", i + 1, M0 + i, i % 2 ? "k" : undefined)),
        { ...ev("young", "chat", "admitted", 1, NOW), created: NOW },
      ],
    };
    let runs = 0;
    for (let args: FoldSettings | undefined = { batchSize: 2, retainFor: DEFAULT_RETAIN_MS }; args; runs++) args = transaction(tables, args).next;
    expect(runs).toBe(3);
    expect(tables.events.map((e) => e.id)).toEqual(["young"]);
    expect(tables.buckets.map(({ id: _id, ...b }) => b)).toEqual([{ name: "chat", bucket: M0, ...counts({ admitted: 3, admittedTokens: 9, refused: 2, refusedTokens: 6 }) }]);
    expect(tables.keys.map(({ id: _id, ...k }) => k)).toEqual([{ name: "chat", bucket: M0, key: "k", refused: 2, refusedTokens: 6 }]);
  });
});

/** The `InvalidRateLimit` error data the fold throws, and the reads it made first. */
function failure(args: { batchSize?: number; retainFor?: number }) {
  const reads: FoldQuery[] = [];
  try {
    runPlan(foldFlow<S>(args, NOW), (q) => {
      reads.push(q);
      return { events: [], buckets: [], keys: [] };
    });
  } catch (error) {
    if (!(error instanceof ConvexError)) throw error;
    return { data: error.data as { kind: string; field: string }, reads };
  }
  throw new Error("expected an error, but the fold succeeded");
}

describe("foldFlow: bad arguments fail before any read, naming the field", () => {
  test.each([
    { args: { batchSize: 0 }, field: "batchSize", why: "a batch must fold at least one event" },
    { args: { batchSize: 2001 }, field: "batchSize", why: "one more than MAX_FOLD_BATCH" },
    { args: { batchSize: 1.5 }, field: "batchSize", why: "events come whole" },
    { args: { batchSize: NaN }, field: "batchSize", why: "NaN compares false with every bound" },
    { args: { retainFor: -1 }, field: "retainFor", why: "a negative retention" },
    { args: { retainFor: NaN }, field: "retainFor", why: "NaN is no duration" },
    { args: { retainFor: Infinity }, field: "retainFor", why: "keep forever is not a finite number of ms" },
    { args: { batchSize: 0, retainFor: -1 }, field: "batchSize", why: "both bad: batchSize is checked first" },
  ])("$why: names $field", ({ args, field }) => {
    const { data, reads } = failure(args);
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field });
    expect(reads).toEqual([]);
  });

  test("the messages say what is allowed", () => {
    expect(failure({ batchSize: 0 }).data).toMatchObject({ message: expect.stringMatching(/must be a whole number from 1 to \d+/) as string });
    expect(failure({ retainFor: -1 }).data).toMatchObject({ message: expect.stringMatching(/must be a finite number of ms ≥ 0/) as string });
  });

  test("the bounds themselves are allowed: a batch of 1, no retention", () => {
    const reads: FoldQuery[] = [];
    runPlan(foldFlow<S>({ batchSize: 1, retainFor: 0 }, NOW), (q) => {
      reads.push(q);
      return { events: [], buckets: [], keys: [] };
    });
    expect(reads.length).toBeGreaterThan(0);
  });

  test("the default retention is seven days", () => {
    expect(DEFAULT_RETAIN_MS).toBe(7 * 24 * 60 * 60 * 1000);
  });
});

describe("topOffenders: keys ranked by refusals, tie-broken by tokens refused, then key order", () => {
  const r = (key: string | undefined, refused: number, refusedTokens = refused) => ({ ...(key === undefined ? {} : { key }), refused, refusedTokens });
  test.each([
    // [why, refusals, n, expected]
    ["most refused first", [r("a", 1), r("b", 3), r("c", 2)], 3, [r("b", 3), r("c", 2), r("a", 1)]],
    ["a key's refusals add up across minutes", [r("a", 2), r("b", 3), r("a", 2)], 2, [r("a", 4), r("b", 3)]],
    ["equal refusals: most tokens refused first", [r("a", 2, 2), r("b", 2, 9)], 2, [r("b", 2, 9), r("a", 2, 2)]],
    ["equal refusals and tokens: key order, whatever the input order", [r("b", 1), r("c", 1), r("a", 1)], 3, [r("a", 1), r("b", 1), r("c", 1)]],
    ["the global key sorts before every named key, even an empty one", [r("", 1), r("a", 1), r(undefined, 1)], 3, [r(undefined, 1), r("", 1), r("a", 1)]],
    ["keys never refused are left out", [r("a", 0, 0), r("b", 1)], 5, [r("b", 1)]],
    ["only the first n", [r("a", 3), r("b", 2), r("c", 1)], 2, [r("a", 3), r("b", 2)]],
  ])("%s", (_why, refusals, n, expected) => {
    const ranked = topOffenders(refusals, n);
    expect(ranked).toEqual(expected);
    // The global key stays keyless (no `key: undefined` field to store).
    for (const k of ranked) if (k.key === undefined) expect("key" in k).toBe(false);
  });
});

describe("addCounts: each counter summed", () => {
  test("every field is its own sum", () => {
    const a = { admitted: 1, admittedTokens: 2, reserved: 3, reservedTokens: 4, refused: 5, refusedTokens: 6, overridden: 7, blocked: 8 };
    const b = { admitted: 10, admittedTokens: 20, reserved: 30, reservedTokens: 40, refused: 50, refusedTokens: 60, overridden: 70, blocked: 80 };
    expect(addCounts(a, b)).toEqual({ admitted: 11, admittedTokens: 22, reserved: 33, reservedTokens: 44, refused: 55, refusedTokens: 66, overridden: 77, blocked: 88 });
  });
});
