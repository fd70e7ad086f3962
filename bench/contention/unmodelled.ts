// What neither contention model serves (the model's ours.ts, the independent check.ts): the reads
// and writes the code under test makes only for what the models' one limit never has. Both use
// these, as both run the same code under test; neither's bookkeeping is in here.
import type { KeyRead, RowOp, RowQuery } from "../../src/shared/flow/flow.js";

/** The reads the models leave out. */
export type UnmodelledRead = Extract<RowQuery, { read: "terms" | "tier" | "network" }>;

/** The writes the models leave out. */
export type UnmodelledOp = Extract<RowOp<number>, { op: "terms" | "override" }>;

/**
 * isUnmodelledRead reports whether `q` is a read the models answer with nothing: a config's terms
 * (the models run one config, whose rows carry its own fingerprint), a tier's override (their
 * requests name no tier) or a network entry (their limits have none). None is ever asked.
 */
export function isUnmodelledRead(q: RowQuery): q is UnmodelledRead {
  return q.read === "terms" || q.read === "tier" || q.read === "network";
}

/** The answer to an {@link UnmodelledRead}: no rows, no takes. */
export function unmodelledAnswer(): KeyRead<number> {
  return { rows: [], pending: [] };
}

/**
 * isUnmodelledOp reports whether `op` is a write the models leave out: the terms of a config
 * (once per config, on a key's first write, into a table no request's decision reads while the
 * config stays), or an override (written only by the app's admin calls, never by a request).
 */
export function isUnmodelledOp(op: RowOp<number>): op is UnmodelledOp {
  return op.op === "terms" || op.op === "override";
}
