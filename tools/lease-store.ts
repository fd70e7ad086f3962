// An in-memory stand-in for the component's `leases` table, driven by the component's own
// concurrency flows (src/shared/flow/concurrency.ts): reads answered as `store.readLeases` answers
// them, writes applied as `store.writeLeases` applies them. Tests and the demo use it where a
// moving clock and many histories would be slow on convex-test.
import { ConvexError } from "convex/values";
import {
  acquireFlow,
  extendFlow,
  leaseValueFlow,
  releaseFlow,
  type LeaseOp,
  type LeaseQuery,
  type LeaseRecord,
} from "../src/shared/flow/concurrency.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import type { AcquireArgs, AcquireResult, ConcurrencyConfig, ExtendResult, LeaseValue } from "../src/shared/shapes/concurrency-validators.js";

type Stored = { name: string; key?: string; expiresAt: number; lease: number };

/** MemoryLeases holds every lease, as the `leases` table does; handles are the ids as strings. */
export class MemoryLeases {
  private leases = new Map<number, Stored>();
  private nextId = 0;

  /** Answers a concurrency flow's read: live leases earliest expiry first (then by id), or one by handle. */
  read(q: LeaseQuery): LeaseRecord<number>[] {
    switch (q.read) {
      case "live":
        return [...this.leases.entries()]
          .filter(([, l]) => l.name === q.name && l.key === q.key && l.expiresAt > q.now)
          .sort(([a, x], [b, y]) => x.expiresAt - y.expiresAt || a - b)
          .map(([id, l]) => ({ id, expiresAt: l.expiresAt, lease: l.lease }));
      case "lease": {
        const id = /^\d+$/.test(q.id) ? Number(q.id) : -1;
        const l = this.leases.get(id);
        return l === undefined ? [] : [{ id, expiresAt: l.expiresAt, lease: l.lease }];
      }
    }
  }

  private write(ops: readonly LeaseOp<number>[]): void {
    for (const op of ops) {
      const l = this.leases.get(op.id);
      if (op.op === "delete") this.leases.delete(op.id);
      else if (l !== undefined) l.expiresAt = op.expiresAt;
    }
  }

  /** `leases.acquire` at `now`: throws the `RateLimited` `ConvexError` when the flow says so. */
  acquire(args: AcquireArgs, now: number): AcquireResult {
    const outcome = runPlan(acquireFlow<number>(args, now), (q) => this.read(q));
    if (!outcome.ok) {
      if (outcome.raise) throw new ConvexError(outcome.raise.error);
      return { ok: false, retryAfter: outcome.retryAfter };
    }
    const id = this.nextId++;
    this.leases.set(id, { ...outcome.insert });
    return { ok: true, lease: String(id), expiresAt: outcome.expiresAt };
  }

  /** `leases.check` at `now`: decides as `acquire` would, holding nothing. */
  check(args: AcquireArgs, now: number): { ok: true } | { ok: false; retryAfter: number } {
    const outcome = runPlan(acquireFlow<number>(args, now), (q) => this.read(q));
    return outcome.ok ? { ok: true } : { ok: false, retryAfter: outcome.retryAfter };
  }

  /** `leases.release` at `now`. */
  release(lease: string, now: number): { released: boolean } {
    const { released, ops } = runPlan(releaseFlow<number>(lease, now), (q) => this.read(q));
    this.write(ops);
    return { released };
  }

  /** `leases.extend` at `now`. */
  extend(lease: string, by: number | undefined, now: number): ExtendResult {
    const { result, ops } = runPlan(extendFlow<number>(lease, by, now), (q) => this.read(q));
    this.write(ops);
    return result;
  }

  /** `leases.getValue` at `now`. */
  value(args: { name: string; key?: string; config: ConcurrencyConfig }, now: number): LeaseValue {
    return runPlan(leaseValueFlow<number>(args, now), (q) => this.read(q));
  }

  /** `leases.deleteExpired` at `now`, all at once: returns how many were deleted. */
  deleteExpired(now: number): number {
    let deleted = 0;
    for (const [id, l] of this.leases) if (!(l.expiresAt > now)) deleted += Number(this.leases.delete(id));
    return deleted;
  }

  /** How many leases are stored, expired or not. */
  get size(): number {
    return this.leases.size;
  }
}
