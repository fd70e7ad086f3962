// @vitest-environment jsdom
// Covers useRateLimit for a concurrency limit in jsdom: a button that waits for a free slot, with convex/react's useQuery/useConvex mocked and fake timers driving both clocks; retryAt is predicted from the leases' expiries by the shared decideAcquire, on the server's clock.
import { act, cleanup, render, renderHook, screen } from "@testing-library/react";
import { makeFunctionReference } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { isInvalidRateLimitError } from "../src/client/index.js";
import { MINUTE, SECOND } from "../src/shared/kinds/algebra.js";
import type { ConcurrencyConfig, HookLeaseValue } from "../src/shared/shapes/concurrency-validators.js";
import { useRateLimit, type GetRateLimitValueQuery, type GetServerTimeMutation, type UseRateLimitOptions } from "../src/react/index.js";

const mocks = vi.hoisted(() => ({
  /** What the mocked useQuery returns. */
  result: undefined as HookLeaseValue | undefined,
  /** The mocked client's mutation (getServerTime); each test may install an implementation. */
  mutation: vi.fn<(ref: GetServerTimeMutation, args: unknown) => Promise<number>>(),
}));
const client = vi.hoisted(() => ({ mutation: mocks.mutation }));

vi.mock("convex/react", () => ({
  useQuery: () => mocks.result,
  useConvex: () => client,
}));

const getSlot: GetRateLimitValueQuery = makeFunctionReference<"query">("generations:getSlot");
const getServerTime = makeFunctionReference<"mutation", Record<string, never>, number>("generations:getServerTime");

const T0 = Date.UTC(2030, 0, 1);
/** 2 in flight, 2-minute leases. */
const config: ConcurrencyConfig = { kind: "concurrency", capacity: 2, lease: 2 * MINUTE };

/** The hook query's answer at server time `ts` with leases expiring at `expiries`. */
function leases(ts: number, expiries: number[], c: ConcurrencyConfig = config): HookLeaseValue {
  const live = expiries.filter((e) => e > ts).sort((a, b) => a - b);
  return {
    inFlight: live.length,
    capacity: c.capacity,
    ts,
    ...(live.length > 0 ? { earliestExpiry: live[0] } : {}),
    expiries: live,
    config: c,
  };
}

function hook(options: UseRateLimitOptions = {}) {
  return renderHook((opts: UseRateLimitOptions) => useRateLimit(getSlot, opts), { initialProps: options });
}

async function advance(ms: number) {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(ms);
  });
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  mocks.result = undefined;
  mocks.mutation.mockReset();
  mocks.mutation.mockImplementation(() => new Promise<number>(() => undefined));
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.restoreAllMocks(); // the console.error spy
});

/** A button that starts a generation when a slot is free, and says when one will be. */
function StartButton() {
  const { status } = useRateLimit(getSlot, { getServerTimeMutation: getServerTime });
  if (status === undefined) return <button disabled>loading</button>;
  return (
    <button disabled={!status.ok}>{status.ok ? "Generate" : `free at ${new Date(status.retryAt).toISOString()}`}</button>
  );
}

describe("a button that waits for a free slot", () => {
  test("disabled while both slots are held, enabled exactly when the earliest lease expires", async () => {
    mocks.result = leases(T0, [T0 + 30 * SECOND, T0 + 90 * SECOND]);
    render(<StartButton />);
    const button = screen.getByRole("button");
    expect(button).toHaveProperty("disabled", true);
    expect(button.textContent).toBe(`free at ${new Date(T0 + 30 * SECOND).toISOString()}`);
    await advance(30 * SECOND - 1);
    expect(screen.getByRole("button")).toHaveProperty("disabled", true);
    await advance(1); // the lease counts while expiresAt > now: free at its expiry, with no new data
    expect(screen.getByRole("button")).toHaveProperty("disabled", false);
    expect(screen.getByRole("button").textContent).toBe("Generate");
  });

  test("a release frees the slot sooner: the query's new answer re-renders it", () => {
    mocks.result = leases(T0, [T0 + 30 * SECOND, T0 + 90 * SECOND]);
    const { rerender } = render(<StartButton />);
    expect(screen.getByRole("button")).toHaveProperty("disabled", true);
    mocks.result = leases(T0, [T0 + 90 * SECOND]);
    rerender(<StartButton />);
    expect(screen.getByRole("button")).toHaveProperty("disabled", false);
  });
});

describe("status and check", () => {
  test.each([
    ["no lease held: ok", [], { ok: true }],
    ["one of two held: ok", [T0 + 10 * SECOND], { ok: true }],
    ["both held: until the earliest expires", [T0 + 90 * SECOND, T0 + 10 * SECOND], { ok: false, retryAt: T0 + 10 * SECOND }],
    // capacity lowered below the leases held: two must expire for one slot
    ["three held of two: until the second expires", [T0 + 5 * SECOND, T0 + 20 * SECOND, T0 + 7 * SECOND], { ok: false, retryAt: T0 + 7 * SECOND }],
    // a lease that expired between the query and this render no longer counts
    ["an expired lease counts for nothing", [T0 + 10 * SECOND, T0 - 1], { ok: true }],
  ])("%s", (_why, expiries, status) => {
    // The expiries as sent, even one that expired since: the hook judges them at its own instant.
    mocks.result = { ...leases(T0, []), expiries, inFlight: expiries.length };
    expect(hook().result.current.status).toEqual(status);
  });

  test("on the server's clock: a server 5 s ahead frees the slot 5 s sooner in client time", async () => {
    // getServerTime answers at once with the server's clock: client + 5 s.
    mocks.mutation.mockImplementation(() => Promise.resolve(Date.now() + 5 * SECOND));
    mocks.result = leases(T0 + 5 * SECOND, [T0 + 60 * SECOND, T0 + 90 * SECOND]);
    const { result } = hook({ getServerTimeMutation: getServerTime });
    await advance(0);
    expect(result.current.status).toEqual({ ok: false, retryAt: T0 + 55 * SECOND });
    expect(result.current.check(T0 + 55 * SECOND, 1)).toMatchObject({ ok: true, value: 0 });
    expect(result.current.check(T0 + 55 * SECOND - 1, 1)).toMatchObject({ ok: false, value: -1, retryAt: T0 + 55 * SECOND });
  });

  test("check reports the free slots; count 0 is always ok; status keeps its identity", () => {
    mocks.result = leases(T0, [T0 + 30 * SECOND, T0 + 90 * SECOND]);
    const { result, rerender } = hook();
    expect(result.current.check()).toEqual({ value: 0, ts: T0, config, shard: 0, ok: true, retryAt: undefined });
    expect(result.current.check(T0 + 30 * SECOND)).toMatchObject({ value: 1, ok: true });
    expect(result.current.check(T0 + 90 * SECOND)).toMatchObject({ value: 2, ok: true });
    expect(hook({ count: 0 }).result.current.status).toEqual({ ok: true });
    const first = result.current.status;
    rerender({});
    expect(result.current.status).toBe(first);
  });

  test("a count other than 0 or 1 is an InvalidRateLimit naming count", () => {
    mocks.result = leases(T0, []);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    let error: unknown;
    try {
      hook({ count: 2 });
    } catch (e) {
      error = e;
    }
    expect(isInvalidRateLimitError(error) && error.data.field).toBe("count");
  });
});
