// The data of the `ConvexError` a synchronous call throws, for the pure flow tables.
import { ConvexError } from "convex/values";

/** The data of the `ConvexError` that `call` throws; any other error is rethrown, and no throw fails the test. */
export function errorData(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    if (error instanceof ConvexError) return error.data;
    throw error;
  }
  throw new Error("did not throw");
}
