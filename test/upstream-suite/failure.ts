// Shared by vitest-shim.ts and expected-failures.check.ts.

/** The global flag under which expected-failures.check.ts loads a pending file: see vitest-shim.ts. */
export const PROBE = Symbol.for("upstream-suite.probe");

/**
 * A test's failure as one string, for expected-failures.ts's `because`: name and message; an
 * assertion's actual and expected values; and where in upstream's test file it failed
 * ("at: shared.test.ts:166").
 */
export function failureText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  let text = `${error.name}: ${error.message}`;
  if ("actual" in error || "expected" in error) {
    text += `\nactual: ${show((error as { actual?: unknown }).actual)}`;
    text += `\nexpected: ${show((error as { expected?: unknown }).expected)}`;
  }
  const at = /@convex-dev\/rate-limiter\/src\/([^\s:)]+\.test\.ts):(\d+)/.exec(error.stack ?? "");
  if (at) text += `\nat: ${at[1]}:${at[2]}`;
  return text;
}

function show(x: unknown): string {
  if (typeof x === "string") return x;
  try {
    return JSON.stringify(x) ?? String(x);
  } catch {
    return String(x);
  }
}
