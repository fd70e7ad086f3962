// Fails closed, on convex-test with fake timers: an error inside the limiter propagates and aborts the caller's mutation (undoing what it took), and corrupt stored state gives an InvalidRateLimit error, never an ok.
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { isInvalidRateLimitError, MINUTE, RateLimiter, type RateLimitConfig } from "../src/client/index.js";
import { convexErrorData, inspectable, makeInspectableTest } from "./setup.js";

const api = inspectable.rateLimiter;
const rateLimiter = new RateLimiter(api, {
  good: { kind: "token bucket", rate: 10, period: MINUTE },
});
const broken = { kind: "token bucket", rate: Number.NaN, period: MINUTE } as RateLimitConfig;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2025, 0, 1));
});
afterEach(() => vi.useRealTimers());

test("an error inside the limiter aborts the caller's mutation, undoing what it already took", async () => {
  const t = makeInspectableTest();
  const data = await convexErrorData(
    t.run(async (ctx) => {
      expect((await rateLimiter.limit(ctx, "good", { count: 10 })).ok).toBe(true);
      await rateLimiter.limit(ctx, "bad", { config: broken }); // throws
    }),
  );
  expect(data).toMatchObject({ kind: "InvalidRateLimit", field: "config.rate", value: "NaN" });
  // The 10 tokens taken before the error came back with the aborted transaction.
  expect(await t.run((ctx) => rateLimiter.check(ctx, "good", { count: 10 }))).toMatchObject({ ok: true });
  expect(await t.run((ctx) => ctx.runQuery(api.inspect.rows, {}))).toEqual([]);
});

test("a caller that catches the error gets no decision, and its other work stands", async () => {
  const t = makeInspectableTest();
  const outcome = await t.run(async (ctx) => {
    await rateLimiter.limit(ctx, "good", { count: 10 });
    try {
      return { decided: await rateLimiter.limit(ctx, "bad", { config: broken }) };
    } catch (error) {
      return { caught: isInvalidRateLimitError(error) ? error.data.field : String(error) };
    }
  });
  expect(outcome).toEqual({ caught: "config.rate" });
  expect(await t.run((ctx) => rateLimiter.check(ctx, "good"))).toMatchObject({ ok: false });
});

test.each([
  // [why, corrupt value, corrupt ts]
  ["a NaN value", Number.NaN, Date.UTC(2025, 0, 1)],
  ["a NaN ts, drained", 0, Number.NaN],
  ["an infinitely negative value", -Infinity, Date.UTC(2025, 0, 1)],
])("corrupt state (%s) is an InvalidRateLimit error, never an ok", async (_why, value, ts) => {
  const t = makeInspectableTest();
  await t.run((ctx) => rateLimiter.limit(ctx, "good"));
  await t.run((ctx) => ctx.runMutation(api.inspect.corrupt, { value, ts }));
  vi.advanceTimersByTime(MINUTE);
  for (const call of [
    () => t.run((ctx) => rateLimiter.limit(ctx, "good")),
    () => t.run((ctx) => rateLimiter.check(ctx, "good")),
  ]) {
    // A stored row that isn't a finite value and time is refused as corrupt, naming `state`.
    expect(await convexErrorData(call())).toMatchObject({
      kind: "InvalidRateLimit",
      field: "state",
      value: String(Number.isFinite(value) ? ts : value),
      message: expect.stringContaining("is corrupt; reset the key"),
    });
  }
});
