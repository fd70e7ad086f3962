// The direction of imports in src/: each folder of src/shared imports only from the folders below
// it (a kind's algebra imports no flow, shapes import no rule), src/shared imports nothing of the
// component, the client or the hook, and those three meet only through src/shared and the
// component's generated API. Every import counts here, `import type` too: a type pulled upward is
// a rule that lives in the wrong room.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";

const SRC = path.resolve(__dirname, "../src");
const SHARED = path.join(SRC, "shared");

/**
 * The folders of src/shared, bottom first, each with the folders it may import from. Kept as data
 * (not just an order) so that a new edge is a visible decision in a diff.
 */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  // Exact arithmetic everything counts with: the global Math read once, shares that add up, a zone's calendar.
  core: [],
  // What crosses the component boundary or is stored: validators (types inferred from them), rows, takes, the read/write protocol.
  shapes: ["core"],
  // Checks of configs and requests, each error naming its field and value.
  validation: ["core", "shapes"],
  // Each kind's algebra on one row: refill, windows, the exact window's log, waits, predictions.
  kinds: ["core", "shapes", "validation"],
  // A limit over shards: each shard's exact share, terms and carrying rows over, the two-choice planner, overload shedding.
  shards: ["core", "shapes", "validation", "kinds"],
  // What is in force for a request: key, network and tier overrides, blocks, addresses.
  overrides: ["core", "shapes", "validation"],
  // What a request records and how records sum, and how hot a limit may run.
  metrics: ["core", "shapes", "validation", "kinds"],
  // The flows over one key: a request, getValue, credit, asynchronous takes, waiting, leases, limitAll.
  flow: ["core", "shapes", "validation", "kinds", "shards", "overrides", "metrics"],
  // What the admin functions decide: clean-up, idle keys, override writes.
  admin: ["core", "shapes", "validation", "kinds", "shards", "overrides", "metrics", "flow"],
};

/** What each top-level folder of src/ may import from, outside itself. */
const OUTER: Readonly<Record<string, readonly string[]>> = {
  shared: [],
  component: ["shared"],
  client: ["shared", "component/_generated"],
  react: ["shared"],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return entry === "_generated" ? [] : sources(full);
    return /\.tsx?$/.test(entry) ? [full] : [];
  });
}

/** Every relative module `file` imports or re-exports from, `import type` included, as paths under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+"(\.[^"]+)";/gms)].map((m) =>
    path.relative(SRC, path.resolve(path.dirname(file), m[1]!)),
  );
}

/** The folder of src/shared a path under src/ is in, or undefined. */
const sharedFolder = (rel: string) => (rel.startsWith("shared/") ? rel.split("/")[1] : undefined);

/** Whether a module of src/shared (`from`, under src/) may not import `to` (under src/). */
function breaksRule(from: string, to: string): boolean {
  const a = sharedFolder(from)!;
  const b = sharedFolder(to);
  return b === undefined || (b !== a && !ALLOWED[a]!.includes(b));
}

describe("the folders of src/shared", () => {
  test("are the ones the rule names, each holding modules, with no module left at the top", () => {
    const entries = readdirSync(SHARED);
    const folders = entries.filter((e) => statSync(path.join(SHARED, e)).isDirectory()).sort();
    expect(folders).toEqual(Object.keys(ALLOWED).sort());
    expect(entries.filter((e) => e.endsWith(".ts"))).toEqual([]);
    for (const f of folders) expect(sources(path.join(SHARED, f)).length).toBeGreaterThan(0);
  });

  test("import only from the folders below them", () => {
    const upward: string[] = [];
    for (const file of sources(SHARED)) {
      const from = path.relative(SRC, file);
      for (const to of importsOf(file)) if (breaksRule(from, to)) upward.push(`${from} → ${to}`);
    }
    expect(upward).toEqual([]);
  });

  test("are ordered: no folder may import from one that may import from it", () => {
    for (const [folder, below] of Object.entries(ALLOWED)) {
      for (const other of below) expect(ALLOWED[other], `${folder} ↔ ${other}`).not.toContain(folder);
    }
  });
});

describe("the top-level folders of src/", () => {
  test("the component, the client and the hook meet only through src/shared and the generated API", () => {
    const crossing: string[] = [];
    for (const [top, allowed] of Object.entries(OUTER)) {
      for (const file of sources(path.join(SRC, top))) {
        for (const to of importsOf(file)) {
          if (to.startsWith(`${top}/`) || to.startsWith("..")) continue;
          if (!allowed.some((a) => to.startsWith(`${a}/`))) crossing.push(`${path.relative(SRC, file)} → ${to}`);
        }
      }
    }
    expect(crossing).toEqual([]);
  });
});

describe("the check itself", () => {
  test("sees value and type imports, across lines, and re-exports", () => {
    const request = importsOf(path.join(SHARED, "flow/request.ts"));
    expect(request).toContain("shared/overrides/overrides.js");
    // `import type { … } from "../shapes/rows.js"`: types count.
    expect(request).toContain("shared/shapes/rows.js");
    expect(importsOf(path.join(SHARED, "metrics/metrics-fold.ts"))).toContain("shared/metrics/metrics.js");
    expect(importsOf(path.join(SRC, "client/index.ts"))).toContain("shared/shapes/override-validators.js");
  });

  test("flags an upward import, an import out of src/shared, and nothing else", () => {
    expect(breaksRule("shared/kinds/algebra.ts", "shared/flow/request.js")).toBe(true);
    expect(breaksRule("shared/shapes/rows.ts", "shared/overrides/overrides.js")).toBe(true);
    expect(breaksRule("shared/core/math.ts", "component/store.js")).toBe(true);
    expect(breaksRule("shared/flow/request.ts", "shared/kinds/algebra.js")).toBe(false);
    expect(breaksRule("shared/flow/request.ts", "shared/flow/view.js")).toBe(false);
  });
});
