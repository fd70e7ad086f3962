// The global `Math`, read once. convex-test puts every global it lets a test override (`Math`,
// `Date`, timers, `fetch`, `console`) behind an accessor that looks up the running transaction's
// overrides on each read; the decision read `Math` about a hundred times a call (upstream: 7).

/**
 * math is `Math` without `random`: read `Math.random` from the global at the call, which Convex
 * seeds per function run (the flows take their draw as an argument for that reason).
 */
export const math: Omit<Math, "random"> = Math;
