// Concurrency flows, pure, with explicit instants: the exact reads and results of acquire (its metric event, who raises a refusal, no `key` field without a key), release at its lease's expiry instant, extend's writes, and getValue's `expiries`.
import { describe, expect, test } from "vitest";
import { acquireFlow, extendFlow, leaseValueFlow, releaseFlow, type LeaseQuery, type LeaseRecord } from "../src/shared/flow/concurrency.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import type { AcquireArgs, ConcurrencyConfig } from "../src/shared/shapes/concurrency-validators.js";

const T0 = 1_700_000_000_000;
const plain: ConcurrencyConfig = { kind: "concurrency", capacity: 2, lease: 1000 };
const metered: ConcurrencyConfig = { ...plain, metrics: true };

/** Runs a lease flow, answering every read with `live`, and returns the reads it made and its result. */
function drive<R>(flow: Generator<LeaseQuery, R, LeaseRecord<string>[]>, live: LeaseRecord<string>[]): { reads: LeaseQuery[]; out: R } {
  const reads: LeaseQuery[] = [];
  const out = runPlan(flow, (q) => {
    reads.push(q);
    return live;
  });
  return { reads, out };
}

/** Two leases held (the capacity of `plain`), expiring 300 and 500 ms after T0. */
const full: LeaseRecord<string>[] = [
  { id: "a", expiresAt: T0 + 300, lease: 1000 },
  { id: "b", expiresAt: T0 + 500, lease: 1000 },
];

describe("acquireFlow", () => {
  // toStrictEqual: a read or insert with `key: undefined` is not the same request as one without a key.
  test("without a key, neither the read nor the insert has a `key` field", () => {
    const { reads, out } = drive(acquireFlow<string>({ name: "n", config: plain }, T0), []);
    expect(reads).toStrictEqual([{ read: "live", name: "n", now: T0 }]);
    expect(out).toStrictEqual({ ok: true, expiresAt: T0 + 1000, insert: { name: "n", expiresAt: T0 + 1000, lease: 1000 } });
  });

  test("with a key, the read and the insert name it", () => {
    const { reads, out } = drive(acquireFlow<string>({ name: "n", key: "k", config: plain }, T0), []);
    expect(reads).toStrictEqual([{ read: "live", name: "n", key: "k", now: T0 }]);
    expect(out).toStrictEqual({ ok: true, expiresAt: T0 + 1000, insert: { name: "n", key: "k", expiresAt: T0 + 1000, lease: 1000 } });
  });

  test("with metrics, an admitted acquire's event is admitted, one slot; a refused one's refused, one slot", () => {
    expect(drive(acquireFlow<string>({ name: "n", config: metered }, T0), []).out).toStrictEqual({
      ok: true,
      expiresAt: T0 + 1000,
      event: { outcome: "admitted", count: 1 },
      insert: { name: "n", expiresAt: T0 + 1000, lease: 1000 },
    });
    expect(drive(acquireFlow<string>({ name: "n", config: metered }, T0), full).out).toStrictEqual({
      ok: false,
      retryAfter: 300,
      event: { outcome: "refused", count: 1 },
    });
  });

  test("without metrics, no event", () => {
    expect(drive(acquireFlow<string>({ name: "n", config: plain }, T0), full).out).toStrictEqual({ ok: false, retryAfter: 300 });
  });

  const error = { kind: "RateLimited", name: "n", retryAfter: 300 };
  // [why, raiseInCaller, config, inCaller]
  const rows: [string, boolean | undefined, ConcurrencyConfig, boolean][] = [
    ["raiseInCaller with metrics: the caller throws, so the refusal's event is kept", true, metered, true],
    ["raiseInCaller without metrics: no event to keep, the component throws", true, plain, false],
    ["metrics without raiseInCaller: the component throws", undefined, metered, false],
    ["raiseInCaller false with metrics: the component throws", false, metered, false],
    ["neither: the component throws", undefined, plain, false],
  ];
  test.each(rows)("a refusal with throws: %s", (_why, raiseInCaller, config, inCaller) => {
    const args: AcquireArgs = { name: "n", config, throws: true, ...(raiseInCaller === undefined ? {} : { raiseInCaller }) };
    const { out } = drive(acquireFlow<string>(args, T0), full);
    expect(out).toStrictEqual({
      ok: false,
      retryAfter: 300,
      ...(config.metrics === true ? { event: { outcome: "refused", count: 1 } } : {}),
      raise: { error, inCaller },
    });
  });
});

describe("releaseFlow", () => {
  const lease: LeaseRecord<string> = { id: "a", expiresAt: T0 + 300, lease: 1000 };

  test("1 ms before its expiry the lease still counted: released, and deleted", () => {
    expect(drive(releaseFlow<string>("a", T0 + 299), [lease]).out).toStrictEqual({ released: true, ops: [{ op: "delete", id: "a" }] });
  });

  test("at its expiry instant the lease counts no more (in flight means expiresAt > now): not released, still deleted", () => {
    expect(drive(releaseFlow<string>("a", T0 + 300), [lease]).out).toStrictEqual({ released: false, ops: [{ op: "delete", id: "a" }] });
  });

  test("an unknown handle: nothing released, nothing written", () => {
    const { reads, out } = drive(releaseFlow<string>("nope", T0), []);
    expect(reads).toStrictEqual([{ read: "lease", id: "nope" }]);
    expect(out).toStrictEqual({ released: false, ops: [] });
  });
});

describe("extendFlow", () => {
  const lease: LeaseRecord<string> = { id: "a", expiresAt: T0 + 300, lease: 1000 };

  test("an unknown handle: not extended, nothing written", () => {
    expect(drive(extendFlow<string>("nope", undefined, T0), []).out).toStrictEqual({ result: { ok: false }, ops: [] });
  });

  test("an extension that would end sooner than the lease does keeps its expiry and writes nothing", () => {
    expect(drive(extendFlow<string>("a", 100, T0), [lease]).out).toStrictEqual({ result: { ok: true, expiresAt: T0 + 300 }, ops: [] });
    // Ending exactly at its expiry is no move either.
    expect(drive(extendFlow<string>("a", 300, T0), [lease]).out).toStrictEqual({ result: { ok: true, expiresAt: T0 + 300 }, ops: [] });
  });

  test("an extension past the expiry patches it, 1 ms later included", () => {
    expect(drive(extendFlow<string>("a", 301, T0), [lease]).out).toStrictEqual({
      result: { ok: true, expiresAt: T0 + 301 },
      ops: [{ op: "patch", id: "a", expiresAt: T0 + 301 }],
    });
  });

  test("at its expiry instant the lease is expired: not extended, deleted", () => {
    expect(drive(extendFlow<string>("a", undefined, T0 + 300), [lease]).out).toStrictEqual({ result: { ok: false }, ops: [{ op: "delete", id: "a" }] });
  });
});

describe("leaseValueFlow", () => {
  test("without a key the read has no `key` field; without `expiries`, no expiries", () => {
    const { reads, out } = drive(leaseValueFlow<string>({ name: "n", config: plain }, T0), full);
    expect(reads).toStrictEqual([{ read: "live", name: "n", now: T0 }]);
    expect(out).toStrictEqual({ inFlight: 2, capacity: 2, ts: T0, earliestExpiry: T0 + 300 });
    expect(drive(leaseValueFlow<string>({ name: "n", config: plain, expiries: false }, T0), full).out).toStrictEqual({
      inFlight: 2,
      capacity: 2,
      ts: T0,
      earliestExpiry: T0 + 300,
    });
  });

  test("with a key the read names it", () => {
    expect(drive(leaseValueFlow<string>({ name: "n", key: "k", config: plain }, T0), []).reads).toStrictEqual([{ read: "live", name: "n", key: "k", now: T0 }]);
  });

  test("with `expiries`, every live lease's expiry, earliest first, whatever order the read answered in", () => {
    // The store answers earliest first; the flow sorts anyway, so the hook's prediction never depends on it.
    const live: LeaseRecord<string>[] = [
      { id: "c", expiresAt: T0 + 900, lease: 1000 },
      { id: "a", expiresAt: T0 + 300, lease: 1000 },
      { id: "d", expiresAt: T0 + 700, lease: 1000 },
      { id: "b", expiresAt: T0 + 500, lease: 1000 },
    ];
    expect(drive(leaseValueFlow<string>({ name: "n", config: plain, expiries: true }, T0), live).out).toStrictEqual({
      inFlight: 4,
      capacity: 2,
      ts: T0,
      earliestExpiry: T0 + 300,
      expiries: [T0 + 300, T0 + 500, T0 + 700, T0 + 900],
    });
  });

  test("with `expiries` and nothing held: an empty list and no earliest expiry", () => {
    expect(drive(leaseValueFlow<string>({ name: "n", config: plain, expiries: true }, T0), []).out).toStrictEqual({ inFlight: 0, capacity: 2, ts: T0, expiries: [] });
  });
});
