// The applier's flow (asynchronous mode): folding recorded takes into a key's rows.
import { evaluate, stateOf, type State } from "./algebra.js";
import { configTerms, relayout, resolvePhase, sameClock, shardParams, termsHash } from "./layout.js";
import type { KeyFlow, KeyRow, RowOp } from "./rows.js";
import type { RateLimitConfig, Take } from "./validators.js";
import { checkStored, expanded, fieldsOf, fold, shardFor, termsOp } from "./view.js";

/**
 * applyFlow folds takes recorded for one key (asynchronous mode) into its rows at `now`: it reads
 * every row of the key, carries rows of another layout over to the current one (`relayout`), folds
 * the takes in order of time (see {@link fold}), and returns the exact writes: every shard of the
 * layout that changed or is missing is patched or inserted, and rows beyond the layout are deleted.
 * The takes themselves are deleted by the caller, in the same transaction.
 */
export function* applyFlow<Id>(
  args: { name: string; key?: string; config: RateLimitConfig },
  takes: readonly Take[],
  now: number,
): KeyFlow<Id, RowOp<Id>[]> {
  const { config } = args;
  const phase = resolvePhase(config, args.name, args.key);
  const n = config.shards ?? 1;
  const params = Array.from({ length: n }, (_, i) => shardParams(config, phase, i));
  const read = (yield { read: "all" }).rows;
  const known = new Map<number, string | undefined>();
  const rows: KeyRow<Id>[] = [];
  for (const r of read) rows.push(yield* expanded(r, { ...args, phase }, known));
  rows.forEach(checkStored);
  const laidOut = rows.some((r) => r.shards !== n || !sameClock(r, params[r.shard] ?? params[0]!));
  const before: (State | null)[] = laidOut
    ? relayout(rows, config, phase, now)
    : params.map((_, i) => {
        const row = rows.find((r) => r.shard === i);
        return row ? stateOf(row) : null;
      });
  const ops: RowOp<Id>[] = [];
  if (laidOut) {
    for (const row of rows) {
      if (row.shard >= n || !Number.isInteger(row.shard)) ops.push({ op: "delete", id: row.id, shard: row.shard });
    }
  }
  params.forEach((p, i) => {
    const mine = takes.filter((t) => shardFor(t, n) === i);
    const row = rows.find((r) => r.shard === i) ?? null;
    if (row && !laidOut && mine.length === 0) return;
    const state = fold(before[i] ?? null, mine, p) ?? evaluate(null, p, now);
    const fields = fieldsOf(state, config);
    ops.push(row ? { op: "patch", id: row.id, shard: i, fields } : { op: "insert", shard: i, fields });
  });
  // As a request's writes do (see `opsOf`): record the terms of a new key, layout or compact rewrite.
  const rewrites = read.some((r) => r.h !== termsHash(configTerms(config)));
  const writes = ops.some((o) => o.op === "insert" || o.op === "patch");
  return writes && (laidOut || rewrites || ops.some((o) => o.op === "insert")) ? [termsOp<Id>(config), ...ops] : ops;
}

