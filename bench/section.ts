// What the sections of `npm run bench` share: the kinds they compare, and their progress lines on
// stderr (the tables go to stdout).

/** The kinds the sections compare side by side. */
export const KINDS = ["token bucket", "fixed window"] as const;
export type Kind = (typeof KINDS)[number];

/** The wall time since `start` (a `performance.now()`), in whole seconds: "12 s". */
export const secondsSince = (start: number) => `${((performance.now() - start) / 1000).toFixed(0)} s`;

/** Prints a progress line to stderr, indented under "  ... ". */
export const progress = (line: string) => process.stderr.write(`  ... ${line}\n`);
