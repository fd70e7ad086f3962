import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "edge-runtime",
    include: ["test/**/*.test.ts", "test/**/*.test.tsx", "example/**/*.test.ts"],
    server: { deps: { inline: ["convex-test"] } },
    typecheck: {
      // Type tests (expectTypeOf, @ts-expect-error) live in *.test-d.ts and are checked by tsc.
      include: ["test/**/*.test-d.ts"],
      tsconfig: "./tsconfig.json",
    },
  },
});
