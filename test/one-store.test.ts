// One store: under src/component, only the database adapters (store.ts, and storeMetrics.ts for the metrics tables) query or write the tables; every handler goes through them. A scan of the source (generated code left out).
// @vitest-environment node
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";

const dir = path.resolve(import.meta.dirname, "../src/component");

/** The adapters: store.ts, and storeMetrics.ts and storeRuns.ts, which would take store.ts past the 450-line rule. */
const ADAPTERS = new Set(["store.ts", "storeMetrics.ts", "storeRuns.ts"]);

/**
 * The database calls in `source`: `db.query(…)`, `ctx.db.get(…)` and the like, also when the call
 * is chained onto the next line (`ctx.db\n  .query(…)`). Passing `ctx.db` on to an adapter is not one.
 */
function databaseCalls(source: string): string[] {
  const joined = source.replace(/\s*\n\s*\./g, ".");
  return [...joined.matchAll(/\bdb\.(query|get|insert|patch|replace|delete|normalizeId|system)\b/g)].map((m) => m[0]);
}

describe("only the store touches the tables", () => {
  const modules = readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));

  test("the scan finds the calls it looks for (in the adapters)", () => {
    expect(databaseCalls(readFileSync(path.join(dir, "store.ts"), "utf8"))).toEqual(expect.arrayContaining(["db.query", "db.insert", "db.patch", "db.delete", "db.get"]));
    expect(databaseCalls("await ctx.db\n      .query(\"rateLimits\")")).toEqual(["db.query"]);
    expect(databaseCalls("await readKey(ctx.db, args, q)")).toEqual([]);
  });

  test.each(modules.filter((f) => !ADAPTERS.has(f)))("%s queries and writes through the store", (file) => {
    expect(databaseCalls(readFileSync(path.join(dir, file), "utf8"))).toEqual([]);
  });
});
