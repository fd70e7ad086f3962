// The protocol between a flow over one key and the store that answers it: the reads a flow
// yields, the rows and takes it is sent back, and the writes it returns. The component answers it
// from the database (src/component/store.ts), tests and models from memory (`answerRead`).
import type { NetworkEntry, NetworkInterval, Override } from "./override-validators.js";
import type { RowFields, StoredRow, Take } from "./stored.js";

/** A stored row of one key as a flow sees it: the layout fields and the component's own `id`. */
export type KeyRow<Id> = StoredRow & { id: Id };


/**
 * A read a flow asks for, always within the request's name and key. Each is answered with the
 * rows found, in shard order: `shard`, the row of one shard (none or one); `any`, the key's first
 * row (none or one); `all`, every row of the key. With `pending`, also the takes recorded but not
 * yet applied in the same range (a limit with `applyUpdates: "asynchronously"`), in the order they
 * were recorded (a take recorded after another was seen has a later or equal instant, and `settle`
 * keeps equal instants in this order). `terms`, the limit name's terms with fingerprint `hash`
 * (see `termsHash`), when a row carries a fingerprint that isn't the current config's: answered in
 * `terms` (absent when unknown), with no rows.
 * `tier`, the override set for the limit name's tier `tier`: answered in `override` (absent when
 * none), with no rows; a read of another table, only when the request names a tier.
 * `network`, the network entry holding `address` (32 hex digits, see `hexOf`), the longest
 * prefix: answered in `entry` (absent when none), with no rows; only for a limit with
 * `networks: true` and a request with an address.
 */
export type RowQuery =
  | { read: "shard"; shard: number; pending?: true }
  | { read: "any" }
  | { read: "all"; pending?: true }
  | { read: "terms"; hash: number }
  | { read: "tier"; tier: string }
  | { read: "network"; address: string };

/**
 * The answer to a {@link RowQuery}: the rows found, the takes asked for (else none), the terms
 * asked for, the tier's override asked for.
 */
export type KeyRead<Id> = { rows: KeyRow<Id>[]; pending: Take[]; terms?: string; override?: Override; entry?: NetworkEntry };

/**
 * A key held in memory, to answer reads from: its rows in index order, its takes, the name's terms
 * by fingerprint, and the name's tier overrides by tier.
 */
export type KeyInMemory<Id> = {
  rows: KeyRow<Id>[];
  pending: Take[];
  known?: ReadonlyMap<number, string>;
  tiers?: ReadonlyMap<string, Override>;
  /** The name's network entries flattened (see `networkIntervals`), in address order, each with its entry's override. */
  networks?: readonly (NetworkInterval & { override: NetworkEntry["override"] })[];
};


/**
 * A write a flow asks for, within the request's name and key: a row to insert, patch or delete,
 * (asynchronous mode) a take to record for the applier, or the terms a fingerprint stands for,
 * recorded for the name if not yet. A patch writes every field a row under its terms keeps; with
 * `replace`, the row was written under other terms or in full, and loses every field not written.
 * `override` sets a row's `o`, the key's own override, or clears it (absent), leaving its state.
 */
export type RowOp<Id> =
  | { op: "insert"; shard: number; fields: RowFields }
  | { op: "patch"; id: Id; shard: number; fields: RowFields; replace?: true }
  | { op: "delete"; id: Id; shard: number }
  | { op: "record"; take: Take }
  | { op: "terms"; hash: number; terms: string }
  | { op: "override"; id: Id; shard: number; o?: Override };

/** A flow over one key: yields reads, is sent the rows found, returns `R`. */
export type KeyFlow<Id, R> = Generator<RowQuery, R, KeyRead<Id>>;

/**
 * runPlan drives a flow (a generator that yields reads and is sent their answers) to its end and
 * returns its result. In-memory models (tests, the benchmark) use it; the component drives the
 * same generators with database reads (see `runPlanAsync`).
 */
export function runPlan<Q, A, R>(flow: Generator<Q, R, A>, answer: (query: Q) => A): R {
  let step = flow.next();
  while (!step.done) step = flow.next(answer(step.value));
  return step.value;
}

/** runPlanAsync is {@link runPlan} for an asynchronous reader, such as the database. */
export async function runPlanAsync<Q, A, R>(flow: Generator<Q, R, A>, answer: (query: Q) => Promise<A>): Promise<R> {
  let step = flow.next();
  while (!step.done) step = flow.next(await answer(step.value));
  return step.value;
}

/**
 * answerRead answers a flow's read from one key's rows and pending takes held in memory, exactly
 * as the component's store answers it from the database: `read.rows` in index order (by shard),
 * so `any` is the first row and `shard` the first of that shard.
 */
export function answerRead<Id>(read: KeyInMemory<Id>, q: RowQuery): KeyRead<Id> {
  switch (q.read) {
    case "shard":
      return {
        rows: read.rows.filter((r) => r.shard === q.shard).slice(0, 1),
        pending: q.pending ? read.pending.filter((t) => t.shard === q.shard) : [],
      };
    case "any":
      return { rows: read.rows.slice(0, 1), pending: [] };
    case "all":
      return { rows: [...read.rows], pending: q.pending ? [...read.pending] : [] };
    case "terms": {
      const terms = read.known?.get(q.hash);
      return terms === undefined ? { rows: [], pending: [] } : { rows: [], pending: [], terms };
    }
    case "tier": {
      const override = read.tiers?.get(q.tier);
      return override === undefined ? { rows: [], pending: [] } : { rows: [], pending: [], override };
    }
    case "network": {
      // As the store reads it: the last interval starting at or before the address, if it reaches it.
      const before = read.networks?.filter((x) => x.start <= q.address);
      const last = before?.[before.length - 1];
      return last !== undefined && last.end >= q.address ? { rows: [], pending: [], entry: { network: last.network, override: last.override } } : { rows: [], pending: [] };
    }
    default: {
      const never: never = q;
      throw new Error(`unknown read ${JSON.stringify(never)}`);
    }
  }
}

/**
 * keyIdOf returns one string per limit name and key (no key is its own, distinct from every
 * string key), for grouping requests, takes and events by the key they are for.
 */
export function keyIdOf({ name, key }: { name: string; key?: string | undefined }): string {
  return JSON.stringify([name, key ?? null]);
}
