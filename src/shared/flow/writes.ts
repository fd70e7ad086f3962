// The exact writes that apply a plan to a key's rows: each row's fields under the current terms,
// what every row of the key carries (its override, a lockout), and the terms recorded for the name.
// Pure: the clock comes in as an argument.
import { evaluate, type State } from "../kinds/algebra.js";
import { configTerms, isShardOf, shardParams, termsHash } from "../shards/layout.js";
import type { Plan } from "../shards/plan.js";
import type { KeyRow, RowOp } from "../shapes/rows.js";
import { isAsync, kindOf, type RateLimitConfig } from "../shapes/validators.js";
import type { RowFields, StoredRow } from "../shapes/stored.js";
import type { Override } from "../shapes/override-validators.js";
import { migrated, type View } from "./view.js";
import { takesOf } from "./takes.js";

/**
 * The fields of a row holding `state`, written under `config`: the state (an approximate sliding
 * window's `prev` too, an exact one's `log` when it has takes in its window) and `h`, the
 * fingerprint of the config's terms (`termsHash(configTerms(config))`).
 */
export function fieldsOf(state: State, config: RateLimitConfig, h: number): RowFields {
  const fields: RowFields = { value: state.value, ts: state.ts, h };
  if (config.kind !== "sliding window") return fields;
  if (kindOf(config) === "sliding window") fields.prev = state.prev ?? 0;
  // Set even when undefined: a row patched under the same terms whose log emptied (a credit
  // gave back every take) must lose its old log, which a patch would otherwise keep.
  else fields.log = state.log;
  return fields;
}

/**
 * The write that records the terms a limit's rows are written under for its name (once per name
 * and terms; the store skips it when they are recorded already).
 */
export function termsOp<Id>(config: RateLimitConfig): RowOp<Id> {
  const terms = configTerms(config);
  return { op: "terms", hash: termsHash(terms), terms };
}

/**
 * carry adds to `fields`, written over `row` (null: inserted), what every row of the key carries
 * (see `rowCarriedFields`): the key's own override, and a lockout still in force at `now`; a
 * lockout that has ended is cleared from the row.
 */
export function carry(fields: RowFields, row: StoredRow | null, own: Override | undefined, lockedUntil: number, now: number): RowFields {
  if (own !== undefined) fields.o = own;
  if (lockedUntil > now) fields.u = lockedUntil;
  else if (row?.u !== undefined) fields.u = undefined;
  return fields;
}

/**
 * The writes that apply `plan`, recording the layout they were written under. After a layout
 * change (unless the request is a peek, which never writes) every shard of the new layout is
 * written and rows the new layout doesn't have are deleted; a refused request writes the
 * migration too, since a row whose clock changed is carried over "as it stands, now" and would
 * otherwise restart that clock on every read and never refill. A key's first write creates all its
 * shards (full ones for those not taken from), so later requests never find a missing row.
 */
export function opsOf<Id>(view: View<Id>, plan: Plan, count: number): RowOp<Id>[] {
  if (isAsync(view.config)) return takesOf(view, plan);
  const ops: RowOp<Id>[] = [];
  const writes = new Map(plan.writes.map((w) => [w.shard, w.state]));
  if (view.migration && count > 0) {
    view.migration.states.forEach((state, shard) => {
      if (!writes.has(shard)) writes.set(shard, state);
    });
    for (const row of view.migration.rows) {
      if (!isShardOf(row.shard, view.n)) ops.push({ op: "delete", id: row.id, shard: row.shard });
    }
  }
  if (writes.size > 0 && view.fresh) {
    for (let shard = 0; shard < view.n; shard++) {
      if (!writes.has(shard)) writes.set(shard, evaluate(null, shardParams(view.config, view.phase, shard), view.now));
    }
  }
  for (const [shard, state] of writes) {
    const row = view.migration ? migrated(view, shard).row : (view.rows.get(shard)?.row ?? null);
    const fields = carry(fieldsOf(state, view.config, view.hash), row, view.own, view.lockedUntil, view.now);
    ops.push(row ? patchOf(row, shard, fields, view.hash) : { op: "insert", shard, fields });
  }
  // Rows written under terms the name may not have recorded yet (a new key, a new layout, a row
  // that carried another fingerprint) record them, so a later change can carry the rows over exactly.
  const recordTerms = writes.size > 0 && (view.fresh || view.migration !== undefined || view.rewrites || ops.some((o) => o.op === "insert"));
  return recordTerms ? [termsOp<Id>(view.config), ...ops] : ops;
}

/**
 * The write of `fields` over a stored row: a patch, which replaces the row when it was written
 * under other terms than `hash` or in full (it then loses the fields the fingerprint stands for).
 */
export function patchOf<Id>(row: KeyRow<Id>, shard: number, fields: RowFields, hash: number): RowOp<Id> {
  return row.h === hash ? { op: "patch", id: row.id, shard, fields } : { op: "patch", id: row.id, shard, fields, replace: true };
}

