// fast-check settings shared by the property tests: a few hundred runs by default, many more with
// DEEP=1, and a failing run replayed with FC_SEED (and FC_PATH) as fast-check prints them.

/** Whether DEEP=1 asks for the long runs. */
export const DEEP = (process.env.DEEP ?? "") !== "";

/** Per-test time limit (ms): generous, since the machine may be shared; DEEP runs take minutes. */
export const TIMEOUT = DEEP ? 60 * 60_000 : 60_000;

const replaySeed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);

/** fast-check parameters: `fast` runs by default, `deep` under DEEP, replayable by seed and path. */
export function runs(fast: number, deep: number): { numRuns: number; seed?: number; path?: string } {
  return {
    numRuns: DEEP ? deep : fast,
    ...(replaySeed === undefined ? {} : { seed: replaySeed }),
    ...(process.env.FC_PATH === undefined ? {} : { path: process.env.FC_PATH }),
  };
}
