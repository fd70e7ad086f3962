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
