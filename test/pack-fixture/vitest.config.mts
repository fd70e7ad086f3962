// The temporary app's vitest config, as docs/testing.md tells users to write it: an .mts file, so
// it is an ES module whatever the app's package.json says (test/pack.test.ts runs it both ways).
// #region vitestConfig
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "edge-runtime",
    server: { deps: { inline: ["convex-test"] } },
  },
});
// #endregion vitestConfig
