// fast-check settings shared by the property tests: a few hundred runs by default, many more with
// DEEP=1, a fifth with FC_QUICK=1 (mutation testing runs the covering tests once per mutant), and a
// failing run replayed with FC_SEED (and FC_PATH) as fast-check prints them.

/** Whether DEEP=1 asks for the long runs. */
export const DEEP = (process.env.DEEP ?? "") !== "";

/** Per-test time limit (ms): generous, since the machine may be shared; DEEP runs take minutes. */
export const TIMEOUT = DEEP ? 60 * 60_000 : 60_000;

const replaySeed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);

/** Whether FC_QUICK=1 asks for a fifth of the default runs (at least 20). */
const QUICK = (process.env.FC_QUICK ?? "") !== "";

/**
 * The share of the default runs that run (1/5 under FC_QUICK), for tests that check the properties
 * weren't vacuous by counting what their runs exercised.
 */
export const RUN_SHARE = DEEP ? 1 : QUICK ? 1 / 5 : 1;

/** fast-check parameters: `fast` runs by default, `deep` under DEEP, replayable by seed and path. */
export function runs(fast: number, deep: number): { numRuns: number; seed?: number; path?: string } {
  return {
    numRuns: DEEP ? deep : QUICK ? Math.max(20, Math.ceil(fast / 5)) : fast,
    ...(replaySeed === undefined ? {} : { seed: replaySeed }),
    ...(process.env.FC_PATH === undefined ? {} : { path: process.env.FC_PATH }),
  };
}
