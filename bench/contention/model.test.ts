// The contention model of `npm run simulate` (bench/contention: the store, the engine, our limiter under test, its metrics, a cell's bound) on hand-made histories with explicit instants: snapshot reads, conflict detection, a retry after a conflict, stale reads outside the read set, inserts against range reads, the asynchronous bound, and metric events and their fold.
import { describe, expect, test } from "vitest";
import { asyncBound } from "./cell.js";
import { runModel, type ModelParams } from "./engine.js";
import { oursFold, withMetricEvent } from "./metrics.js";
import { oursAsynchronous, oursTransactional, requestArgs } from "./ours.js";
import { Store, type ReadEntry } from "./store.js";
import type { RateLimitConfig } from "../../src/shared/shapes/validators.js";
import { seededRandom } from "../../tools/random.js";

const rowFields = { value: 5, ts: 0 };
const row0: ReadEntry = { table: "rows", lo: 0, hi: 0 };

/** A store with shard 0's row inserted at `at`. */
function storeWithRow(at: number): Store {
  const store = new Store();
  store.commit(at, [{ op: "insertRow", shard: 0, fields: rowFields }]);
  return store;
}

describe("Store", () => {
  test("a read at a snapshot sees exactly the commits at or before it", () => {
    const store = storeWithRow(10);
    const id = store.rowsAt(10)[0]!.id;
    store.commit(20, [{ op: "patchRow", id, fields: { value: 4, ts: 20 } }]);
    expect(store.rowsAt(9)).toEqual([]); // before the insert
    expect(store.rowsAt(10)[0]!.value).toBe(5); // the insert itself is visible at its instant
    expect(store.rowsAt(19.9)[0]!.value).toBe(5);
    expect(store.rowsAt(20)[0]!.value).toBe(4);
  });

  test("two transactions: the later snapshot that read a row conflicts with the earlier commit that wrote it", () => {
    // T1 reads shard 0 at 0 and commits a patch at 25; T2 read shard 0 at 10 and commits at 35.
    const store = storeWithRow(-100);
    const id = store.rowsAt(0)[0]!.id;
    expect(store.conflict([row0], 0)).toBeNull(); // T1 at its commit (25): nothing committed since 0
    store.commit(25, [{ op: "patchRow", id, fields: { value: 4, ts: 0 } }]);
    expect(store.conflict([row0], 10)?.at).toBe(25); // T2 at 35: T1 committed at 25, after T2's snapshot
    expect(store.conflict([row0], 25)).toBeNull(); // a snapshot at the commit saw it: no conflict
    expect(store.conflict([{ table: "rows", lo: 1, hi: 1 }], 10)).toBeNull(); // another shard's range
    expect(store.conflict([{ table: "takes", lo: 0, hi: 0 }], 10)).toBeNull(); // another table
  });

  test("an insert conflicts with a read of the index range it lands in, and only with that", () => {
    const store = new Store();
    store.commit(10, [{ op: "insertTake", shard: 0, count: 1, ts: 10 }]);
    expect(store.conflict([{ table: "takes", lo: 0, hi: 0 }], 5)?.at).toBe(10); // the shard's pending range
    expect(store.conflict([{ table: "takes", lo: -Infinity, hi: Infinity }], 5)?.at).toBe(10); // the key's
    expect(store.conflict([{ table: "takes", lo: 1, hi: 1 }], 5)).toBeNull(); // another shard's range
    expect(store.conflict([], 5)).toBeNull(); // two inserters read nothing: never a conflict
    // A missing row read (`.first()` found nothing) is the whole key's range: a row insert lands in it.
    store.commit(12, [{ op: "insertRow", shard: 3, fields: rowFields }]);
    expect(store.conflict([{ table: "rows", lo: -Infinity, hi: Infinity }], 11)?.at).toBe(12);
  });

  test("a delete of a take conflicts with a read of it by id", () => {
    const store = new Store();
    store.commit(10, [{ op: "insertTake", shard: 2, count: 1, ts: 10 }]);
    const take = store.takesAt(10)[0]!;
    store.commit(30, [{ op: "deleteTake", id: take.id }]);
    expect(store.takeAt(take.id, 29)).not.toBeNull();
    expect(store.takeAt(take.id, 30)).toBeNull();
    expect(store.conflict([{ table: "takes", id: take.id }], 20)?.at).toBe(30);
    expect(store.conflict([{ table: "takes", id: take.id + 1 }], 20)).toBeNull();
  });
});

describe("our flows over the store", () => {
  const config: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000 };

  test("a transactional attempt's reads join its read set", () => {
    const store = new Store();
    const a = oursTransactional(store, requestArgs("n", config), 100, () => 0.5);
    expect(a.outcome).toBe("admitted");
    // Unsharded: one `.first()` over the key's rows, which found none (so the whole range).
    expect(a.reads).toEqual([{ table: "rows", lo: -Infinity, hi: Infinity }]);
    expect(a.ops).toEqual([{ op: "insertRow", shard: 0, fields: expect.objectContaining({ value: 9 }) }]);
  });

  test("a stale read doesn't join the read set, and doesn't see what committed after its snapshot", () => {
    const async: RateLimitConfig = { ...config, applyUpdates: "asynchronously" };
    const store = new Store();
    // Eight tokens taken at 50: visible at 60, not at the stale snapshot 60 − 20 = 40.
    store.commit(50, [{ op: "insertTake", shard: 0, count: 8, ts: 50 }]);
    const a = oursAsynchronous(store, requestArgs("n", async), 60, 20, 1000, () => 0.5);
    expect(a.decidedOn).toBe("stale");
    expect(a.reads).toEqual([]);
    expect(a.count).toEqual({ queries: 2, dependent: 0 }); // the key's rows, and its pending takes
    expect(a.ops).toEqual([{ op: "insertTake", shard: 0, count: 1, ts: 60 }]);
    // Decided on the current state (8 taken: 2 left, under the margin), the reads would count.
    const exact = oursAsynchronous(store, requestArgs("n", async), 60, 0, 1000, () => 0.5);
    expect(exact.decidedOn).toBe("current");
    expect(exact.reads).toContainEqual({ table: "takes", lo: -Infinity, hi: Infinity });
  });
});

describe("shedding in the model, as lib.rateLimit runs it", () => {
  const async: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000, applyUpdates: "asynchronously" };

  test("near the limit with takes pending, a stale decision sheds: no read in the read set, nothing written", () => {
    const store = new Store();
    // Eight tokens taken at 10, still pending: 2 + 0.5 refilled by 60 is inside the margin (2.5).
    store.commit(10, [{ op: "insertTake", shard: 0, count: 8, ts: 10 }]);
    const a = oursAsynchronous(store, requestArgs("n", async), 60, 20, 1000, () => 0.5);
    expect(a).toMatchObject({ decidedOn: "stale", outcome: "refused", reads: [], ops: [] });
    // The same on a snapshot that doesn't lag: decided again on the current state, and admitted.
    const exact = oursAsynchronous(store, requestArgs("n", async), 60, 0, 1000, () => 0.5);
    expect(exact).toMatchObject({ decidedOn: "current", outcome: "admitted" });
  });
});

describe("runModel", () => {
  const config: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000 };
  /** Poisson gaps at 1 per ms: a draw u gives a gap of −ln(1 − u) ms, so u = 1 − e^(−gap). */
  const gaps = (...ms: number[]) => {
    const draws = [...ms.map((g) => 1 - Math.exp(-g)), 1 - 1e-12];
    let i = 0;
    return () => draws[Math.min(i++, draws.length - 1)]!;
  };
  const params = (maxRetries: number): ModelParams => ({
    qps: 1000,
    durationMs: 2,
    serviceMs: 25,
    maxRetries,
    backoffMs: 10,
    stalenessMs: 0,
    applyEveryMs: null,
  });

  async function twoRequests(maxRetries: number) {
    // Requests at 0.5 and 1.0 ms: the second reads before the first commits (25.5), so it conflicts
    // at 26; its retry starts after a backoff of 0.5 × 10 ms, at 31, and sees the first's row.
    const store = new Store();
    const starts: number[] = [];
    const stats = await runModel(
      store,
      {
        request: (now) => {
          starts.push(now);
          return oursTransactional(store, requestArgs("n", config), now, () => 0.5);
        },
      },
      params(maxRetries),
      { arrivals: gaps(0.5, 0.5), backoff: () => 0.5, staleness: () => 0 },
    );
    return { stats, starts, store };
  }

  test("a conflict is retried after its backoff, and the retry commits", async () => {
    const { stats, starts, store } = await twoRequests(4);
    expect(starts.map((t) => +t.toFixed(6))).toEqual([0.5, 1, 31]);
    expect(stats).toMatchObject({ requests: 2, attempts: 3, conflicts: 1, admitted: 2, failed: 0 });
    // Both tokens taken from the one row: 10 − 1 at 0.5, refilled for 30.5 ms at 10/s, − 1 at 31.
    const [row] = store.rowsAt(100);
    expect(row?.ts).toBe(31);
    expect(row?.value).toBeCloseTo(10 - 1 + 0.305 - 1, 12);
  });

  test("a refusal writes nothing, so by default it is never checked; --checked-refusals checks it", async () => {
    // A spent row: the request at 0.5 ms reads it and refuses, writing nothing; another writer
    // patches the row at 10, after the request's snapshot and before its commit at 25.5.
    const spent: RateLimitConfig = { kind: "token bucket", rate: 1, period: 1_000_000 };
    const run = async (readOnlyConflicts: boolean | undefined) => {
      const store = new Store();
      store.commit(-1, [{ op: "insertRow", shard: 0, fields: { value: 0, ts: 0, shards: 1, kind: "token bucket" } }]);
      const id = store.rowsAt(0)[0]!.id;
      let patched = false;
      return runModel(
        store,
        {
          request: (now) => {
            const attempt = oursTransactional(store, requestArgs("n", spent), now, () => 0.5);
            if (!patched) {
              // Another writer's commit at 10, after this attempt's snapshot and before its commit.
              store.commit(10, [{ op: "patchRow", id, fields: { value: 0, ts: 10 } }]);
              patched = true;
            }
            return attempt;
          },
        },
        { ...params(4), readOnlyConflicts },
        { arrivals: gaps(0.5), backoff: () => 0.5, staleness: () => 0 },
      );
    };
    expect(await run(undefined)).toMatchObject({ requests: 1, attempts: 1, conflicts: 0, refused: 1 });
    expect(await run(true)).toMatchObject({ requests: 1, attempts: 2, conflicts: 1, refused: 1 });
  });

  test("with no retries left, the conflicting request fails and writes nothing", async () => {
    const { stats, store } = await twoRequests(0);
    expect(stats).toMatchObject({ requests: 2, attempts: 2, conflicts: 1, admitted: 1, failed: 1 });
    expect(store.rowsAt(100).map((r) => r.value)).toEqual([9]);
  });
});

describe("asyncBound", () => {
  test("sums, over shards, the most taken within δ beyond a quarter of the shard's capacity", () => {
    const config: RateLimitConfig = { kind: "token bucket", rate: 8, period: 1000, shards: 2 };
    // Shard capacities 4 and 4: margins 1 and 1. δ = 100 ms.
    const takes = [
      { at: 0, shard: 0, count: 1 },
      { at: 50, shard: 0, count: 1 },
      { at: 100, shard: 0, count: 1 }, // 3 within [0, 100]: 2 beyond the margin
      { at: 300, shard: 0, count: 1 },
      { at: 0, shard: 1, count: 1 }, // 1: within the margin
      { at: 10, shard: 1, count: -1 }, // a give-back never counts
    ];
    const bound = asyncBound(takes, config, 100);
    expect(bound.perShard).toEqual([
      { shard: 0, taken: 3, margin: 1 },
      { shard: 1, taken: 1, margin: 1 },
    ]);
    expect(bound.value).toBe(2);
  });
});

describe("metric events and the fold", () => {
  const config: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000, shards: 2 };

  test("an event is an insert: the attempt reads what it read without it", () => {
    const store = new Store();
    const attempt = oursTransactional(store, requestArgs("k", config), 100, () => 0.3);
    const recorded = withMetricEvent(attempt);
    expect(recorded.reads).toEqual(attempt.reads);
    expect(recorded.ops).toEqual([...attempt.ops, { op: "insertEvent", createdAt: 100, bucket: 0 }]);
  });

  test("the fold reads events up to its cutoff: inserts after it don't conflict with it, one before it does", () => {
    const store = new Store();
    store.commit(10, [{ op: "insertEvent", createdAt: 5, bucket: 0 }]);
    const folded = { events: 0 };
    const fold = oursFold(store, 2000, 500, 1000, folded); // cutoff 1000
    store.commit(2010, [{ op: "insertEvent", createdAt: 1990, bucket: 0 }]); // a request started after the cutoff
    expect(store.conflict(fold.reads, fold.snapshot)).toBeNull();
    store.commit(2015, [{ op: "insertEvent", createdAt: 990, bucket: 0 }]); // one still running from before it
    expect(store.conflict(fold.reads, fold.snapshot)).not.toBeNull();
  });

  test("runModel: the same conflicts with metrics, and every event folded once", async () => {
    const params: ModelParams = { qps: 200, durationMs: 3000, serviceMs: 25, maxRetries: 4, backoffMs: 10, stalenessMs: 0, applyEveryMs: null };
    const streams = (seed: number) => ({ arrivals: seededRandom(seed), backoff: seededRandom(seed + 1), staleness: seededRandom(seed + 2) });
    const run = async (metrics: boolean) => {
      const store = new Store();
      const decide = seededRandom(9);
      const folded = { events: 0 };
      const request = (now: number) => oursTransactional(store, requestArgs("k", config), now, decide);
      const stats = await runModel(
        store,
        metrics ? { request: (now) => withMetricEvent(request(now)), fold: (now) => oursFold(store, now, 100, 1000, folded) } : { request },
        { ...params, foldEveryMs: metrics ? 500 : null },
        streams(3),
      );
      return { stats, folded: folded.events, summed: [...store.summaries.values()].reduce((s, x) => s + x.count, 0) };
    };
    const off = await run(false);
    const on = await run(true);
    expect(on.stats.conflicts).toBe(off.stats.conflicts);
    expect(on.stats.admitted).toBe(off.stats.admitted);
    expect(on.stats.foldConflicts).toBe(0);
    expect(on.folded).toBe(on.stats.admitted + on.stats.refused);
    expect(on.summed).toBe(on.folded);
  });
});
