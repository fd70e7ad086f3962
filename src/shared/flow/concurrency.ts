// Concurrency limits: at most `capacity` unexpired leases per name and key. The decision is pure
// (time is an argument); the flows yield the reads they need from the `leases` table and return
// the exact writes, so the component runs them over the database (src/component/store.ts) and
// tests over memory. In flight means unexpired: a lease stops counting at its `expiresAt`, so no
// job has to free the slot of a holder that crashed.
import { validateConcurrencyConfig, validateExtendBy, validateNameAndKey } from "../validation/validate.js";
import { recordsMetrics, type RateLimitError } from "../shapes/validators.js";
import type { AcquireArgs, ConcurrencyConfig, ExtendResult, LeaseValue } from "../shapes/concurrency-validators.js";
import type { DecisionEvent } from "../metrics/metrics.js";
import type { Raise } from "./request.js";
import { math } from "../core/math.js";

/** A held lease as the flows see it: its handle, when it frees itself (UTC ms) and its length (ms). */
export type LeaseRecord<Id> = { id: Id; expiresAt: number; lease: number };

/**
 * A read a concurrency flow asks for: `live`, the leases of the request's name and key that are
 * unexpired at `now` (`expiresAt > now`), earliest expiry first; `lease`, one lease by its handle
 * (none when the handle is unknown or malformed).
 */
export type LeaseQuery = { read: "live"; name: string; key?: string; now: number } | { read: "lease"; id: string };

/** A new lease: held by `name` and `key` until `expiresAt` (UTC ms), acquired for `lease` ms. */
export type LeaseInsert = { name: string; key?: string; expiresAt: number; lease: number };

/** A write to a held lease a concurrency flow asks for: move its expiry, or delete it. */
export type LeaseOp<Id> =
  | { op: "patch"; id: Id; expiresAt: number }
  | { op: "delete"; id: Id };

/** A flow over leases: yields reads, is sent the leases found, returns `R`. */
export type LeaseFlow<Id, R> = Generator<LeaseQuery, R, LeaseRecord<Id>[]>;

/**
 * The decision of an acquire: `ok` with the new lease's `expiresAt` (UTC ms), or refused with
 * `retryAfter` (whole ms ≥ 1) until enough held leases expire for a slot to be free.
 */
export type AcquireDecision = { ok: true; expiresAt: number } | { ok: false; retryAfter: number };

/**
 * decideAcquire decides an acquire at `now` (ms) given the `live` leases' expiries (each
 * `> now`, in any order): admitted while fewer than `capacity` are held, with a lease to
 * `now + config.lease`. Refused otherwise, with `retryAfter` the whole ms until the lease whose
 * expiry leaves `capacity - 1` held expires: with `capacity` held, the earliest. A retry at that
 * instant succeeds if nothing else acquired meanwhile (the lease counts while `expiresAt > now`).
 * A clock that went backwards only makes leases count longer: never more than `capacity` at once.
 */
export function decideAcquire(live: readonly number[], config: ConcurrencyConfig, now: number): AcquireDecision {
  if (live.length < config.capacity) return { ok: true, expiresAt: now + config.lease };
  const sorted = [...live].sort((a, b) => a - b);
  // With n held, n - capacity + 1 must expire for one slot: the (n - capacity)th, from 0.
  const frees = sorted[live.length - config.capacity] ?? now;
  return { ok: false, retryAfter: math.max(1, math.ceil(frees - now)) };
}

/**
 * What an acquire's flow decided, executed as it stands: admitted, the lease to insert (the
 * component returns the inserted document's id as the handle); refused, nothing to write, and
 * the `RateLimited` error to throw when the request asked for `throws`. With `metrics: true`,
 * `event` is the metric event to record (admitted or refused, one slot).
 */
export type AcquireOutcome = { event?: DecisionEvent } & (
  | (Extract<AcquireDecision, { ok: true }> & { insert: LeaseInsert })
  | (Extract<AcquireDecision, { ok: false }> & { raise?: Raise<RateLimitError> })
);

/**
 * acquireFlow decides an acquire at `now` (ms): validates the request (an `InvalidRateLimit`
 * error naming the field, before any read), reads the key's live leases and decides with
 * {@link decideAcquire}. A query (`check`) runs it and drops the writes.
 */
export function* acquireFlow<Id>(args: AcquireArgs, now: number): LeaseFlow<Id, AcquireOutcome> {
  validateNameAndKey(args.name, args.key);
  validateConcurrencyConfig(args.config);
  const { name, key } = args;
  const at = { name, ...(key === undefined ? {} : { key }) };
  const live: LeaseRecord<Id>[] = yield { read: "live", ...at, now };
  const decision = decideAcquire(
    live.map((l) => l.expiresAt),
    args.config,
    now,
  );
  const event: { event?: DecisionEvent } = recordsMetrics(args.config) ? { event: { outcome: decision.ok ? "admitted" : "refused", count: 1 } } : {};
  if (decision.ok) return { ...decision, ...event, insert: { ...at, expiresAt: decision.expiresAt, lease: args.config.lease } };
  if (!args.throws) return { ...decision, ...event };
  const error: RateLimitError = { kind: "RateLimited", name, retryAfter: decision.retryAfter };
  // A refusal writes nothing but its event: returned for the caller to throw, the event is kept.
  return { ...decision, ...event, raise: { error, inCaller: args.raiseInCaller === true && event.event !== undefined } };
}

/**
 * releaseFlow releases the lease `id` at `now` (ms): deletes it if it exists. `released` is true
 * when it was still unexpired (this call freed its slot). Idempotent: an unknown, malformed,
 * expired or already released handle changes nothing that counts.
 */
export function* releaseFlow<Id>(id: string, now: number): LeaseFlow<Id, { released: boolean; ops: LeaseOp<Id>[] }> {
  const [lease] = yield { read: "lease", id };
  if (lease === undefined) return { released: false, ops: [] };
  return { released: lease.expiresAt > now, ops: [{ op: "delete", id: lease.id }] };
}

/**
 * extendFlow moves lease `id`'s expiry to `now + by` (ms; default the length it was acquired
 * with), never earlier than it was. A lease that expired (its slot may be another's now), was
 * released or is unknown is not extended: `ok: false`, and an expired one is deleted.
 */
export function* extendFlow<Id>(
  id: string,
  by: number | undefined,
  now: number,
): LeaseFlow<Id, { result: ExtendResult; ops: LeaseOp<Id>[] }> {
  validateExtendBy(by);
  const [lease] = yield { read: "lease", id };
  if (lease === undefined) return { result: { ok: false }, ops: [] };
  if (!(lease.expiresAt > now)) return { result: { ok: false }, ops: [{ op: "delete", id: lease.id }] };
  const expiresAt = math.max(lease.expiresAt, now + (by ?? lease.lease));
  return { result: { ok: true, expiresAt }, ops: expiresAt === lease.expiresAt ? [] : [{ op: "patch", id: lease.id, expiresAt }] };
}

/**
 * leaseValueFlow reads a concurrency limit's state at `now` (ms): how many leases are in flight
 * (unexpired) of `capacity`, and the earliest expiry among them.
 */
export function* leaseValueFlow<Id>(
  args: { name: string; key?: string | undefined; config: ConcurrencyConfig; expiries?: boolean | undefined },
  now: number,
): LeaseFlow<Id, LeaseValue> {
  validateNameAndKey(args.name, args.key);
  validateConcurrencyConfig(args.config);
  const { name, key } = args;
  const live: LeaseRecord<Id>[] = yield { read: "live", name, ...(key === undefined ? {} : { key }), now };
  const earliest = live.reduce((min, l) => math.min(min, l.expiresAt), Infinity);
  return {
    inFlight: live.length,
    capacity: args.config.capacity,
    ts: now,
    ...(live.length > 0 ? { earliestExpiry: earliest } : {}),
    ...(args.expiries === true ? { expiries: live.map((l) => l.expiresAt).sort((a, b) => a - b) } : {}),
  };
}

/**
 * What {@link predictAcquire} says about a concurrency limit at an instant: the slots `free`,
 * and whether an acquire of `count` slots would be admitted, else `retryAfter` (whole ms ≥ 1).
 */
export type AcquirePrediction = { free: number; ok: true } | { free: number; ok: false; retryAfter: number };

/**
 * predictAcquire predicts at `now` (ms, the server's clock) what an acquire decides, from the
 * expiries (UTC ms) of the leases held when they were read: those with `expiresAt > now` still
 * count, and {@link decideAcquire} decides over them, so the prediction is the server's own
 * decision if no lease was acquired, released or extended since. `count` is 1 (an acquire) or 0
 * (a peek: always ok). `useRateLimit` calls it for a concurrency limit.
 */
export function predictAcquire(expiries: readonly number[], config: ConcurrencyConfig, now: number, count: 0 | 1): AcquirePrediction {
  const live = expiries.filter((e) => e > now);
  const free = math.max(0, config.capacity - live.length);
  if (count === 0) return { free, ok: true };
  const decision = decideAcquire(live, config, now);
  return decision.ok ? { free, ok: true } : { free, ok: false, retryAfter: decision.retryAfter };
}
