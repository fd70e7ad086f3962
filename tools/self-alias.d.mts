// Types of tools/self-alias.mjs, for the TypeScript that imports it (vitest.config.ts).
/** selfAlias returns vite `resolve.alias` entries mapping the package's exports to `root`'s src/. */
export function selfAlias(root: string): { find: RegExp; replacement: string }[];
