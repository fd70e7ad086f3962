// The flows over one key, one file each: each is a generator that yields the reads it needs
// (src/shared/shapes/rows.ts) and returns exactly what to write and report, so the component runs it as a
// thin read/write loop over the database and tests run it over memory. Pure: the clock and the
// random draws come in as arguments.
export { applyFlow } from "./apply.js";
export { creditFlow } from "./credit.js";
export { combineResults, limitAllOutcome, mergeRequests } from "./limit-all.js";
export { ASYNC_MARGIN, requestFlow, resultOf, type RequestOutcome } from "./request.js";
export { MAX_STALENESS_MS, staleVerdict } from "../shards/overload.js";
export { answerRead, keyIdOf, runPlan, runPlanAsync, type KeyFlow, type KeyRead, type KeyRow, type RowOp, type RowQuery } from "../shapes/rows.js";
export { getValueFlow, summarize } from "./value.js";
export { isAsync } from "../shapes/validators.js";
export { fold, settle } from "./settle.js";
export type { RowFields, StoredRow, Take } from "../shapes/stored.js";
