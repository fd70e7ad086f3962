// Tests that look at, or alter, what a Convex function asks of the database go through the
// `Convex` global that convex-test installs: its `syscall`, `asyncSyscall` and `jsSyscall`, each an
// operation name and its arguments as JSON. `withSyscalls` swaps the global for the length of one
// piece of work, for one call at a time (convex-test runs them one at a time).

/** The three entry points of the `Convex` global. */
type ConvexGlobal = {
  syscall: (op: string, json: string) => string;
  asyncSyscall: (op: string, json: string) => Promise<string>;
  jsSyscall: (op: string, args: unknown) => unknown;
};

/**
 * A wrapper for some of the entry points: each gets the operation, its arguments and the entry
 * point it wraps (`next`), and returns what the function sees.
 */
export type SyscallHooks = {
  syscall?: (op: string, json: string, next: ConvexGlobal["syscall"]) => string;
  asyncSyscall?: (op: string, json: string, next: ConvexGlobal["asyncSyscall"]) => Promise<string>;
  jsSyscall?: (op: string, args: unknown, next: ConvexGlobal["jsSyscall"]) => unknown;
};

/**
 * withSyscalls runs `fn` with the `Convex` global's entry points wrapped by `hooks` (those not
 * given pass through), and puts the global back afterwards, whether `fn` returns or throws. Each
 * entry point is looked up on the original when called, as convex-test's own global does.
 */
export async function withSyscalls<T>(hooks: SyscallHooks, fn: () => Promise<T>): Promise<T> {
  const global = globalThis as unknown as { Convex: ConvexGlobal };
  const original = global.Convex;
  global.Convex = {
    syscall: (op, json) => (hooks.syscall ? hooks.syscall(op, json, original.syscall) : original.syscall(op, json)),
    asyncSyscall: (op, json) => (hooks.asyncSyscall ? hooks.asyncSyscall(op, json, original.asyncSyscall) : original.asyncSyscall(op, json)),
    jsSyscall: (op, args) => (hooks.jsSyscall ? hooks.jsSyscall(op, args, original.jsSyscall) : original.jsSyscall(op, args)),
  };
  try {
    return await fn();
  } finally {
    global.Convex = original;
  }
}
