// The error a program run by tools/run.mjs throws for bad arguments: run.mjs prints its message
// (the usage) without a stack and exits with status 2, as command-line tools do.

/** UsageError is a bad command line; its message says what was wrong and how to call the program. */
export class UsageError extends Error {
  override name = "UsageError";
}
