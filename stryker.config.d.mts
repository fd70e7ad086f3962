// Types of stryker.config.mjs, for the TypeScript that imports it (vitest.mutation.config.ts, test/mutation-config.test.ts).
import type { PartialStrykerOptions } from "@stryker-mutator/api/core";

/** A group of src/shared modules mutated together: the modules by their path under src/shared without ".ts", and the test files (globs) it runs. */
export type MutationGroup = { modules: string[]; tests: string[] };

/** The groups `npm run test:mutation` runs, in order. */
export const groups: Record<string, MutationGroup>;

declare const config: PartialStrykerOptions;
export default config;
