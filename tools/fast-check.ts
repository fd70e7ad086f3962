// fast-check settings shared by the property tests: a few hundred runs by default, many more with
// DEEP=1, a fifth with FC_QUICK=1 (mutation testing runs the covering tests once per mutant), and a
// failing run replayed with FC_SEED (and FC_PATH) as fast-check prints them.
import { appendFileSync } from "node:fs";
import { afterAll } from "vitest";

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
 *
 * Such a tally is random: each run of the suite draws new cases. Its threshold is set from the
 * tally's spread over many runs of the suite (`npm run test:tallies`, see {@link recordTally}): at
 * least 5 standard deviations below its mean, so that a run of the suite falls short by chance
 * about once in three million (a normal tail). Where that would leave the threshold too low to
 * catch a generator that stops reaching the case, the property gets more runs, or the case is
 * counted once per run instead of once per event (a run's events share its draws, and swing
 * together). Under FC_QUICK the margin is √5 times narrower (2.2 sd): a mutant that only a tally
 * fails is worth a second look.
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

/**
 * Records a tally of what a file's property runs exercised, for `node tools/tallies.mjs`, which
 * runs the tallied files many times and prints each count's mean, spread and least value: with
 * TALLY_OUT set, appends `{ tally: name, ...counts }` as one JSON line to that file once the file's
 * tests have run. Does nothing otherwise.
 */
export function recordTally(name: string, counts: Readonly<Record<string, number>>): void {
  afterAll(() => {
    const out = process.env.TALLY_OUT;
    if (out) appendFileSync(out, `${JSON.stringify({ tally: name, ...counts })}\n`);
  });
}
