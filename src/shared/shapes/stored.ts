// What the component stores for a limit: a shard's row (its state and the fingerprint of the
// terms it was written under), a take recorded for the applier, and a name's recorded terms.
// Declared once, as validators: the schema spreads them, and the types are inferred from them.
import { v, type Infer } from "convex/values";
import { partial } from "convex-helpers/validators";
import { configValidator, kindValidator } from "./validators.js";
import { overrideEntryValidator, overrideScope, overrideValidator } from "./override-validators.js";

/** The fields of a take: `count` tokens (negative: given back) from `shard` at `ts` (ms). */
export const takeFields = {
  /** The shard the tokens were taken from, under the layout of the config they were taken under. */
  shard: v.number(),
  /** Tokens taken (negative: given back, by a credit or a take balanced over two shards). */
  count: v.number(),
  /**
   * When the tokens were taken (ms). -Infinity marks a marker: a take of nothing recorded on a
   * shard of rows under other terms, so a reader of that shard alone sees the change (see
   * `isMarker` in flow/settle.ts).
   */
  ts: v.number(),
  /**
   * The config the take was decided under, as stored: it counts under those terms (see
   * `settle`). Absent on a take just decided, which is under the request's config.
   */
  config: v.optional(configValidator),
};

/** A take recorded but not yet applied to its row (asynchronous mode); see {@link takeFields}. */
export const takeValidator = v.object(takeFields);

/**
 * The fields of a take recorded for the applier (asynchronous mode): the table `pendingTakes`
 * stores them (plus its commit-time cursor) and the applier's batches carry them (plus the id).
 */
export const pendingTakeFields = {
  name: v.string(),
  key: v.optional(v.string()),
  ...takeFields,
  /** The config the take was decided under; the applier evaluates the rows with it. */
  config: configValidator,
};

/**
 * The state a row stores: `value` tokens available at `ts` (ms), negative while reserved ahead;
 * an approximate sliding window also stores `prev`, the tokens taken in the aligned window before
 * the one containing `ts`, and an exact one `log`, what it took in the window ending at `ts`. Token bucket: `ts` is when `value` was evaluated; fixed window: the start of
 * its window.
 */
export const rowStateFields = {
  value: v.number(),
  ts: v.number(),
  prev: v.optional(v.number()),
  /** An exact sliding window's log of its last window's takes (`encodeLog`); absent otherwise. */
  log: v.optional(v.bytes()),
};

/**
 * `h`: the fingerprint (`termsHash`) of the terms a row was written under (`configTerms`: kind,
 * rate, period, capacity, shard count and start), which stands for the layout fields below and
 * which `rateLimitTerms` maps back to the terms once per limit name. One letter: it is read and
 * written on every call.
 */
export const rowFingerprintFields = { h: v.number() };

/**
 * The layout and terms a row is written under, so a change of config is recognised and carried
 * over without granting tokens: the shard count, the kind (`ts` means something else for each),
 * the shard's own `rate`, `period` (ms) and `capacity`, and `terms`, the whole limit's terms (see
 * `shardParams`), so a change that leaves this shard's own share as it was still shows. Rows
 * written by this package's earlier versions record them; rows it writes now store `h` instead.
 */
export const rowLayoutFields = {
  shards: v.number(),
  kind: kindValidator,
  rate: v.number(),
  period: v.number(),
  capacity: v.number(),
  terms: v.string(),
};

/**
 * What a key's rows carry besides their state, only when there is something to carry (a key
 * without either stores neither, and pays nothing for them): `o`, the key's own override (see
 * `overrideValidator`), on every row of the key, so the read a request makes anyway finds it; and
 * `u`, the instant (UTC ms) until which a limit with `lockout` keeps the key locked out.
 */
export const rowCarriedFields = {
  o: v.optional(overrideValidator),
  u: v.optional(v.number()),
};

/**
 * What a flow writes to a row: its state and the fingerprint of the terms it was written under
 * (`h`), a dozen bytes where the terms in full took about a hundred and twenty, and what the key
 * carries ({@link rowCarriedFields}).
 */
export const rowFieldsValidator = v.object({ ...rowStateFields, ...rowFingerprintFields, ...rowCarriedFields });

/**
 * A stored row of one name and key: its shard (0 when unsharded), its state and, when recorded,
 * its layout. Rows written by `@convex-dev/rate-limiter` have no layout fields.
 */
export const storedRowFields = { shard: v.number(), ...rowStateFields, ...partial(rowFingerprintFields), ...partial(rowLayoutFields), ...rowCarriedFields };
const storedRowValidator = v.object(storedRowFields);

/**
 * A limit's whole terms as rows fingerprint them (`termsHash`): one document per limit name and
 * fingerprint, written with the first row of a key under those terms and read only when a row's
 * fingerprint isn't the current config's (after a config change), to carry it over exactly.
 */
export const termsFields = {
  name: v.string(),
  /** The fingerprint rows store, `termsHash(terms)`. */
  hash: v.number(),
  /** The whole limit's terms: `[kind, rate, period, capacity, shards, phase]` as JSON. */
  terms: v.string(),
};

/**
 * An override of a limit, as the component stores it (`rateLimitOverrides`): the limit's name, its
 * target (`scope` `"key"` with the key, absent for the limit without one; or `"tier"` with the
 * tier), the override, an optional note for whoever reads the list, and when it was set (ms).
 */
export const overrideDocFields = {
  name: v.string(),
  scope: overrideScope,
  target: v.optional(v.string()),
  override: overrideEntryValidator,
  note: v.optional(v.string()),
  updatedAt: v.number(),
};

const rowLayoutValidator = v.object(rowLayoutFields);
export type RowLayout = Infer<typeof rowLayoutValidator>;
export type Take = Infer<typeof takeValidator>;
export type RowFields = Infer<typeof rowFieldsValidator>;
export type StoredRow = Infer<typeof storedRowValidator>;

/**
 * One interval of a limit's network entries flattened (see `networkIntervals`): the addresses from
 * `start` to `end` (32 hex digits each, ordered as the addresses), all held most specifically by
 * the entry for `network` (canonical CIDR), whose `override` it carries so a request's one read
 * finds it.
 */
export const networkIntervalFields = {
  name: v.string(),
  start: v.string(),
  end: v.string(),
  network: v.string(),
  override: overrideEntryValidator,
};
