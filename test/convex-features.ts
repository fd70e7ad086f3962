// What the installed convex can do, for tests of features that the lowest convex our peer range
// admits lacks (`npm run test:lowest` runs the suite there). A test of such a feature runs only
// where it exists, and says why it skips elsewhere: `describe.runIf(stalenessKnown)(…)`.
import { version } from "convex";

const [major = 0, minor = 0] = version.split(".").map(Number);
const atLeast = (maj: number, min: number) => major > maj || (major === maj && minor >= min);

/**
 * stalenessKnown: `ctx.meta.getSnapshotTs` exists (convex 1.48 on), so an asynchronous limit
 * decides on a stale snapshot and sheds from it; before, every request is decided on the current
 * state (src/component/lib.ts, `canMeasureStaleness`).
 */
export const stalenessKnown = atLeast(1, 48);

/** The convex version installed, for messages. */
export const convexVersion = version;
