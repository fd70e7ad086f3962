// `node:async_hooks` for the browser, as much of it as convex-test needs to run the component in
// the offline UI: `AsyncLocalStorage` with `run`, `getStore` and `exit`. example/vite.config.ts
// aliases `node:async_hooks` here for browser builds only; tests and the demo use Node's.
//
// Browsers have no way to carry a context across a native `await`, so this one holds the store
// from the moment `run` is called until the promise `fn` returns settles. That is exact when calls
// nest and never overlap: each `run` is awaited by the code that made it, and no other call is in
// flight meanwhile. The offline UI guarantees that by running one convex-test call at a time (see
// deployment.ts), and convex-test itself runs nested calls of one transaction one after another.
// Two overlapping `run`s of the same storage would see each other's store.

/** A restore that runs once, when a promise settles or at once for a plain value. */
function settle<T>(result: T, restore: () => void): T {
  if (typeof result === "object" && result !== null && typeof (result as { then?: unknown }).then === "function") {
    // The caller sees the result only after the store is restored, so its continuation runs in
    // the store it was called from.
    return Promise.resolve(result).then(
      (value) => {
        restore();
        return value;
      },
      (error: unknown) => {
        restore();
        throw error;
      },
    ) as T;
  }
  restore();
  return result;
}

/**
 * AsyncLocalStorage holds a store for the duration of a call, as Node's does for calls that nest
 * and don't overlap (see the top of this file).
 */
export class AsyncLocalStorage<T> {
  #store: T | undefined = undefined;

  /** getStore returns the store of the innermost `run` in progress, or undefined. */
  getStore(): T | undefined {
    return this.#store;
  }

  /** run calls `fn` with `store` current until it returns, or until the promise it returns settles. */
  run<R, A extends unknown[]>(store: T, fn: (...args: A) => R, ...args: A): R {
    return this.#with(store, () => fn(...args));
  }

  /** exit calls `fn` with no store current, like `run(undefined, fn)`. */
  exit<R, A extends unknown[]>(fn: (...args: A) => R, ...args: A): R {
    return this.#with(undefined, () => fn(...args));
  }

  /** enterWith makes `store` current from now on. */
  enterWith(store: T): void {
    this.#store = store;
  }

  /** disable forgets the current store. */
  disable(): void {
    this.#store = undefined;
  }

  #with<R>(store: T | undefined, fn: () => R): R {
    const previous = this.#store;
    this.#store = store;
    let result: R;
    try {
      result = fn();
    } catch (error) {
      this.#store = previous;
      throw error;
    }
    return settle(result, () => {
      this.#store = previous;
    });
  }
}

export default { AsyncLocalStorage };
