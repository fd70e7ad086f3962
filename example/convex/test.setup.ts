// The example app's convex-test setup, shared by its tests. (Convex skips files with two dots in
// their name, so this one is never deployed.)
// #region testSetup
import { convexTest } from "convex-test";
import { register } from "convex-rate-limiter/test";
import schema from "./schema.js";

const modules = import.meta.glob("./**/*.*s");

/** A convex-test instance of this app, with the rate limiter component registered. */
export function makeTest() {
  const t = convexTest(schema, modules);
  register(t);
  return t;
}

/**
 * errorOf returns the error `promise` rejects with, and fails the test if it resolves. (Plain
 * TypeScript, no vitest: the demo imports this file outside a test run.)
 */
export async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected an error, but the call succeeded");
}
// #endregion testSetup

/**
 * quietCrashes runs `work`, during which scheduled runs of `fn` (a function path such as
 * "generations:generate") are expected to crash on purpose with `message`. convex-test reports
 * every scheduled function that throws with console.error and a stack trace; those reports are
 * counted instead of printed. Any other console.error goes through as usual, so an unexpected
 * error still shows. Returns `work`'s result and how many deliberate crashes were reported. (Plain
 * TypeScript, no vitest: the demo uses it too.)
 */
export async function quietCrashes<T>(
  fn: string,
  message: string,
  work: () => Promise<T>,
): Promise<{ result: T; crashes: number }> {
  const report = `Error when running scheduled function ${fn}`;
  const original = console.error;
  let crashes = 0;
  console.error = (...args: unknown[]) => {
    if (args[0] === report && args[1] instanceof Error && args[1].message === message) crashes++;
    else original(...args);
  };
  try {
    return { result: await work(), crashes };
  } finally {
    console.error = original;
  }
}
