// The applier's flow (asynchronous mode): folding recorded takes into a key's rows.
import { configHash, isShardOf, resolvePhase, sameClock, shardParams } from "../shards/layout.js";
import type { KeyFlow, KeyRow, RowOp } from "../shapes/rows.js";
import { isMarker, settle, takenUnder, type PhaseOf } from "./settle.js";
import type { RateLimitConfig } from "../shapes/validators.js";
import type { Take } from "../shapes/stored.js";
import { checkStored, expanded } from "./view.js";
import { carry, fieldsOf, patchOf, termsOp } from "./writes.js";

/**
 * applyFlow folds takes recorded for one key (asynchronous mode) into its rows at `now`, under
 * `args.config` (the newest take's): it reads every row of the key (expanded from its fingerprint)
 * and settles rows and takes (`settle`): each take folded in order of time under the config it was
 * taken under, rows of another layout or terms carried over (`relayout`). It returns the exact
 * writes: every shard of the layout that changed or is missing is patched or inserted (every
 * shard, when a row or take was of other terms), rows beyond the layout are deleted, and the terms
 * are recorded when rows are first written under them. The takes themselves are deleted by the
 * caller, in the same transaction.
 */
export function* applyFlow<Id>(
  args: { name: string; key?: string; config: RateLimitConfig },
  takes: readonly Take[],
  now: number,
): KeyFlow<Id, RowOp<Id>[]> {
  const { config } = args;
  const phaseOf: PhaseOf = (c) => resolvePhase(c, args.name, args.key);
  const phase = phaseOf(config);
  const n = config.shards ?? 1;
  const params = Array.from({ length: n }, (_, i) => shardParams(config, phase, i));
  const read = (yield { read: "all" }).rows;
  const known = new Map<number, string | undefined>();
  const rows: KeyRow<Id>[] = [];
  const hash = configHash(config);
  for (const r of read) rows.push(yield* expanded(r, { ...args, phase, hash }, known));
  rows.forEach(checkStored);
  // Rows of another layout (or beyond this one), or takes under other terms: every shard is
  // rewritten, each take counted under the terms it was taken under (settle).
  const laidOut =
    rows.some((r) => !isShardOf(r.shard, n) || r.shards !== n || !sameClock(r, params[r.shard] ?? params[0]!)) ||
    takes.some((t) => !takenUnder(t, config, phaseOf));
  const after = settle(rows, takes, config, phaseOf, now);
  // What every row of the key carries (its own override) goes on every row written.
  const own = read.find((r) => r.o !== undefined)?.o;
  const ops: RowOp<Id>[] = [];
  if (laidOut) {
    for (const row of rows) {
      if (!isShardOf(row.shard, n)) ops.push({ op: "delete", id: row.id, shard: row.shard });
    }
  }
  params.forEach((_, i) => {
    const row = rows.find((r) => r.shard === i) ?? null;
    // A marker (a take of nothing, see `isMarker`) changes no row.
    if (row && !laidOut && !takes.some((t) => t.shard === i && !isMarker(t))) return;
    const fields = carry(fieldsOf(after[i]!, config, hash), row, own, -Infinity, now);
    ops.push(row ? patchOf(row, i, fields, hash) : { op: "insert", shard: i, fields });
  });
  // As a request's writes do (see `opsOf`): record the terms of a new key, layout or rewritten row.
  const rewrites = read.some((r) => r.h !== hash);
  const writes = ops.some((o) => o.op === "insert" || o.op === "patch");
  return writes && (laidOut || rewrites || ops.some((o) => o.op === "insert")) ? [termsOp<Id>(config), ...ops] : ops;
}
