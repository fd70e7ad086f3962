// The contention model's engine (`npm run simulate`): a discrete-event run of one Convex
// deployment serving one hot limit key under optimistic concurrency control. Pure and synchronous
// except where a limiter under test is asynchronous (upstream's decision code awaits its database).
// - Requests arrive as a Poisson stream. An attempt reads at its snapshot (its start), commits
//   after a service time, and conflicts when a document or index range it read was written by a
//   transaction that committed after its snapshot and no later than its own commit. Then it is
//   retried after a backoff, a few times, and finally fails.
// - A transaction that writes nothing is not checked, as Convex commits it (unless
//   `readOnlyConflicts`).
// - The applier (asynchronous mode) and the metrics fold are scheduled mutations: each iteration
//   is retried until it commits, and they run until no work is left.
// What an attempt reads and writes is the {@link Driver}'s: ours.ts, metrics.ts and upstream.ts.
import type { ReadEntry, Store, StoreOp } from "./store.js";

/** Counts of the index reads an attempt issued: all of them, and those that joined its read set. */
export type ReadCount = { queries: number; dependent: number };

/** How a request's attempt was decided: on the current state, or on a stale snapshot. */
export type DecidedOn = "current" | "stale";

/**
 * One attempt of a transaction: its snapshot and decision instant (`now`, its start), what it read
 * (its read set), what it will write at commit (the takes among them count toward the
 * asynchronous bound), and what it decided; `onCommit` runs when it commits, with the commit's instant.
 */
export type Attempt = {
  snapshot: number;
  now: number;
  reads: ReadEntry[];
  ops: StoreOp[];
  count: ReadCount;
  outcome: "admitted" | "refused" | "none";
  decidedOn: DecidedOn;
  onCommit?: (at: number) => void;
};

/**
 * settledAttempt is the attempt of a scheduled mutation (the applier, the metrics fold): it decides
 * no request, reads at its own start `now`, and runs `onCommit` with the commit's instant.
 */
export function settledAttempt(now: number, reads: ReadEntry[], ops: StoreOp[], count: ReadCount, onCommit: (at: number) => void): Attempt {
  return { snapshot: now, now, reads, ops, count, outcome: "none", decidedOn: "current", onCommit };
}

/** The parameters of one run of the model. */
export type ModelParams = {
  /** Poisson arrivals per second. */
  qps: number;
  /** Model time of arrivals (ms); the run lasts until every request has finished. */
  durationMs: number;
  /** A transaction's time from snapshot to commit (ms). */
  serviceMs: number;
  /** Retries after a conflict before the request fails. */
  maxRetries: number;
  /** A retry starts after a backoff drawn uniformly from [0, backoffMs) (ms). */
  backoffMs: number;
  /** Stale snapshots lag a transaction's own by a draw uniform in [0, stalenessMs) (ms). */
  stalenessMs: number;
  /** The applier (asynchronous mode) starts an iteration every `applyEveryMs` (ms), or null for none. */
  applyEveryMs: number | null;
  /**
   * Whether a transaction that writes nothing (a refusal) is checked for conflicts at commit like
   * any other. By default (false) it never conflicts, as Convex commits it: its committer skips
   * read-only transactions (`crates/database/src/committer.rs`, `start_commit`), and a mutation
   * that throws is not committed at all. `true` is the pessimistic reading, kept for comparison.
   */
  readOnlyConflicts?: boolean;
  /** The metrics fold starts a transaction every `foldEveryMs` (ms), or never when null or unset. */
  foldEveryMs?: number | null;
};

/** What an implementation under test does: one attempt of a request, of its applier, and of the metrics fold. */
export type Driver = {
  request(now: number, lag: number): Attempt | Promise<Attempt>;
  applier?(now: number, lag: number): Attempt | Promise<Attempt>;
  fold?(now: number): Attempt;
};

/** The random streams of a run, each its own so that runs replay whatever changes elsewhere. */
export type Streams = { arrivals: () => number; backoff: () => number; staleness: () => number };

/** A take committed, for the asynchronous bound: tokens taken from `shard`, committed at `at`. */
export type CommittedTake = { at: number; shard: number; count: number };

/** What a run measured. */
export type RunStats = {
  requests: number;
  admitted: number;
  refused: number;
  failed: number;
  /** Attempts of requests that conflicted (each retried, or the last, failed). */
  conflicts: number;
  attempts: number;
  /** Index reads issued by requests' attempts, and those that joined a read set. */
  queries: number;
  dependent: number;
  /** Attempts decided on a stale snapshot (asynchronous mode). */
  staleDecisions: number;
  applierRuns: number;
  applierConflicts: number;
  /** Transactions of the metrics fold committed, and those that conflicted (and were retried). */
  foldRuns: number;
  foldConflicts: number;
  /** Admitted requests at their decision instants, one token each. */
  admissions: { at: number; count: number }[];
  /** Takes recorded and committed (asynchronous mode). */
  takes: CommittedTake[];
};

type Scheduled =
  | { at: number; kind: "arrive" | "start"; req: Req }
  | { at: number; kind: "commit"; req: Req; attempt: Attempt }
  | { at: number; kind: "applier"; retry: number }
  | { at: number; kind: "applierCommit"; attempt: Attempt; retry: number }
  | { at: number; kind: "fold" }
  | { at: number; kind: "foldCommit"; attempt: Attempt };

type Event = Scheduled & { seq: number };

type Req = { tries: number };

/** A binary min-heap of events by time, then by order of scheduling. */
class Queue {
  private heap: Event[] = [];
  private seq = 0;
  get size(): number {
    return this.heap.length;
  }
  push(e: Scheduled): void {
    const ev: Event = { ...e, seq: this.seq++ };
    const h = this.heap;
    h.push(ev);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  pop(): Event | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Event, b: Event): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * runModel runs one implementation under Poisson arrivals at `params.qps` for
 * `params.durationMs`, then until every request and applier iteration has finished; the applier
 * keeps running until no takes are left. Each attempt starts (its snapshot and decision instant),
 * commits `serviceMs` later unless a commit since its snapshot wrote something it read, and
 * after a conflict is retried after a backoff, up to `maxRetries` times, then fails.
 */
export async function runModel(store: Store, driver: Driver, params: ModelParams, streams: Streams): Promise<RunStats> {
  const stats: RunStats = {
    requests: 0,
    admitted: 0,
    refused: 0,
    failed: 0,
    conflicts: 0,
    attempts: 0,
    queries: 0,
    dependent: 0,
    staleDecisions: 0,
    applierRuns: 0,
    applierConflicts: 0,
    foldRuns: 0,
    foldConflicts: 0,
    admissions: [],
    takes: [],
  };
  const q = new Queue();
  const perMs = params.qps / 1000;
  let arrivals = 0;
  for (let t = -Math.log(1 - streams.arrivals()) / perMs; t < params.durationMs; t += -Math.log(1 - streams.arrivals()) / perMs) {
    q.push({ at: t, kind: "arrive", req: { tries: 0 } });
    arrivals++;
  }
  if (driver.applier && params.applyEveryMs !== null) q.push({ at: params.applyEveryMs, kind: "applier", retry: 0 });
  const foldEvery = params.foldEveryMs ?? null;
  if (driver.fold && foldEvery !== null) q.push({ at: foldEvery, kind: "fold" });
  let inFlight = 0;
  /** Whether some request hasn't arrived or hasn't finished yet. */
  const requestsLeft = () => stats.requests < arrivals || inFlight > 0;
  let nextPrune = 1000;
  const horizon = params.stalenessMs + params.serviceMs + params.backoffMs + 1;
  for (let e = q.pop(); e; e = q.pop()) {
    if (e.at >= nextPrune) {
      store.prune(e.at - horizon);
      nextPrune = e.at + 1000;
    }
    switch (e.kind) {
      case "arrive":
      case "start": {
        if (e.kind === "arrive") {
          stats.requests++;
          inFlight++;
        }
        e.req.tries++;
        const attempt = await driver.request(e.at, streams.staleness() * params.stalenessMs);
        stats.attempts++;
        stats.queries += attempt.count.queries;
        stats.dependent += attempt.count.dependent;
        if (attempt.decidedOn === "stale") stats.staleDecisions++;
        q.push({ at: e.at + params.serviceMs, kind: "commit", req: e.req, attempt });
        break;
      }
      case "commit": {
        const { attempt, req } = e;
        const checked = attempt.ops.length > 0 || (params.readOnlyConflicts ?? false);
        if (checked && store.conflict(attempt.reads, attempt.snapshot)) {
          stats.conflicts++;
          if (req.tries <= params.maxRetries) {
            q.push({ at: e.at + streams.backoff() * params.backoffMs, kind: "start", req });
          } else {
            stats.failed++;
            inFlight--;
          }
          break;
        }
        store.commit(e.at, attempt.ops);
        attempt.onCommit?.(e.at);
        inFlight--;
        if (attempt.outcome === "admitted") {
          stats.admitted++;
          stats.admissions.push({ at: attempt.now, count: 1 });
        } else if (attempt.outcome === "refused") stats.refused++;
        for (const op of attempt.ops) {
          if (op.op === "insertTake") stats.takes.push({ at: e.at, shard: op.shard, count: op.count });
        }
        break;
      }
      case "applier": {
        const attempt = await driver.applier!(e.at, streams.staleness() * params.stalenessMs);
        q.push({ at: e.at + params.serviceMs, kind: "applierCommit", attempt, retry: e.retry });
        break;
      }
      case "applierCommit": {
        const { attempt } = e;
        if (store.conflict(attempt.reads, attempt.snapshot)) {
          stats.applierConflicts++;
          // A scheduled mutation is retried until it commits.
          q.push({ at: e.at + streams.backoff() * params.backoffMs, kind: "applier", retry: e.retry + 1 });
          break;
        }
        store.commit(e.at, attempt.ops);
        attempt.onCommit?.(e.at);
        stats.applierRuns++;
        const every = params.applyEveryMs!;
        const more = requestsLeft() || store.takesAt(e.at).length > 0;
        if (more) q.push({ at: Math.max(e.at, attempt.now + every), kind: "applier", retry: 0 });
        break;
      }
      case "fold": {
        q.push({ at: e.at + params.serviceMs, kind: "foldCommit", attempt: driver.fold!(e.at) });
        break;
      }
      case "foldCommit": {
        const { attempt } = e;
        if (store.conflict(attempt.reads, attempt.snapshot)) {
          stats.foldConflicts++;
          q.push({ at: e.at + streams.backoff() * params.backoffMs, kind: "fold" });
          break;
        }
        store.commit(e.at, attempt.ops);
        attempt.onCommit?.(e.at);
        stats.foldRuns++;
        if (requestsLeft() || store.eventsAt(e.at).length > 0) q.push({ at: Math.max(e.at, attempt.now + foldEvery!), kind: "fold" });
        break;
      }
      default: {
        const never: never = e;
        throw new Error(`unknown event ${JSON.stringify(never)}`);
      }
    }
  }
  return stats;
}
