// Calls at instants a test chooses, on convex-test's clock that moves with commits (0.0.70 on): `at` runs one transaction at exactly the instant asked, and hands it a runner so several calls share it.
import type { TestConvexForDataModel } from "convex-test";
import type { GenericDataModel } from "convex/server";
import { expect, vi } from "vitest";

/**
 * Runner is what runs a function as a transaction, as `t.run` does: a convex-test instance, or the
 * runner {@link at} hands its body, whose `run` calls the function inside `at`'s one transaction.
 */
export type Runner<DataModel extends GenericDataModel = GenericDataModel> = Pick<TestConvexForDataModel<DataModel>, "run">;

/**
 * at moves the fake clock to `ms` (milliseconds since the epoch; fake timers must be on) and runs
 * `body` as one top-level transaction there. Every call `body` makes through the runner it gets
 * sees `ms`, so calls that mean "the same instant" share it. It fails if convex-test started the
 * transaction at another instant: a transaction never runs behind the last commit (rounded up to
 * the ms), so `ms` must not be before an instant an earlier commit reached; see {@link next}.
 */
export async function at<DataModel extends GenericDataModel, R>(
  t: Runner<DataModel>,
  ms: number,
  body: (u: Runner<DataModel>) => Promise<R>,
): Promise<R> {
  vi.setSystemTime(ms);
  return t.run(async (ctx) => {
    // Inside a transaction Date.now() is the instant convex-test pinned for it.
    expect(Date.now(), `the transaction asked for at ${ms}`).toBe(ms);
    return body({ run: (fn) => fn(ctx) });
  });
}

/**
 * next is the instant 1 ms after the fake clock's, where {@link at} may always run: with the fake
 * clock frozen, commits only add nanoseconds to it, so no commit reaches past it. Transactions
 * after the second in a frozen millisecond already see `next()`: it is not after every instant
 * seen so far, only at or after them.
 */
export function next(): number {
  return Date.now() + 1;
}
