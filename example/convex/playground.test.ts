// playground.* through convex-test and register(): client-chosen configs on the "playground"
// limit, confined to "playground:" keys; fake timers make retryAfter and `at` exact, with the clock
// set before each call whose instant matters (a deployment's clock moves on with its commits).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { isInvalidRateLimitError, MINUTE, SECOND, type RateLimitConfig } from "convex-rate-limiter";
import type { SessionId } from "convex-helpers/server/sessions";
import { api } from "./_generated/api.js";
import { errorOf, makeTest } from "./test.setup.js";

const START = Date.UTC(2025, 0, 1, 9);
const twoAMinute = { kind: "token bucket", rate: 2, period: MINUTE } satisfies RateLimitConfig;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => vi.useRealTimers());

describe("request", () => {
  // #region resultInstant
  test("decides with the client's config and says when it decided", async () => {
    const t = makeTest();
    const fire = () => t.mutation(api.playground.request, { lane: "a", config: twoAMinute });
    expect(await fire()).toEqual({ ok: true, shards: [0], at: START });
    expect(await fire()).toMatchObject({ ok: true, at: START });
    // The third call in START's ms runs in the next, as on a deployment, where a call never runs
    // before a commit it can see; `at` says so, and retryAfter counts from it.
    const third = await fire();
    expect(third).toEqual({ ok: false, retryAfter: MINUTE / 2 - 1, shards: [0], at: START + 1 });
    // At an instant set apart, the same request waits exactly from there.
    vi.setSystemTime(START + SECOND);
    expect(await fire()).toEqual({ ok: false, retryAfter: MINUTE / 2 - SECOND, shards: [0], at: START + SECOND });
  });
  // #endregion resultInstant

  test("reserve and count pass through", async () => {
    const t = makeTest();
    await t.mutation(api.playground.request, { lane: "a", config: twoAMinute, count: 2 });
    const reserved = await t.mutation(api.playground.request, { lane: "a", config: twoAMinute, reserve: true });
    expect(reserved).toMatchObject({ ok: true, retryAfter: MINUTE / 2 });
  });

  test("lanes are separate, and reset empties one", async () => {
    const t = makeTest();
    await t.mutation(api.playground.request, { lane: "a", config: twoAMinute, count: 2 });
    expect(await t.mutation(api.playground.request, { lane: "b", config: twoAMinute })).toMatchObject({ ok: true });
    await t.mutation(api.playground.reset, { lane: "a", config: twoAMinute });
    expect(await t.mutation(api.playground.request, { lane: "a", config: twoAMinute, count: 2 })).toMatchObject({
      ok: true,
    });
  });

  test("a malformed config is refused with the field at fault", async () => {
    const t = makeTest();
    const error = await errorOf(
      t.mutation(api.playground.request, { config: { kind: "fixed window", rate: 0, period: MINUTE } }),
    );
    expect(isInvalidRateLimitError(error) && error.data.field).toBe("config.rate");
  });
});

describe("hookAPI with allowClientConfig", () => {
  test("reports the lane's state under the client's config", async () => {
    const t = makeTest();
    await t.mutation(api.playground.request, { lane: "a", config: twoAMinute });
    const state = await t.query(api.playground.getRateLimit, { key: "a", config: twoAMinute });
    expect(state).toMatchObject({ value: 1, ts: START, config: twoAMinute });
  });

  test("without a config, it uses the playground's default", async () => {
    const t = makeTest();
    const state = await t.query(api.playground.getRateLimit, {});
    expect(state.config).toMatchObject({ kind: "token bucket", rate: 10, period: MINUTE, capacity: 5 });
  });

  test("a client naming a real limit only sees a playground key of it", async () => {
    const t = makeTest();
    const tab = "tab" as SessionId;
    for (let i = 0; i < 3; i++) await t.mutation(api.messages.send, { sessionId: tab, body: "hi" });
    // Read 6 s on, where the drained bucket has exactly one token back (10 a minute).
    vi.setSystemTime(START + 6 * SECOND);
    expect((await t.query(api.messages.getRateLimit, { key: tab })).value).toBe(1);
    // The real bucket is "session:tab", drained; the playground reads "playground:session:tab".
    const peek = await t.query(api.playground.getRateLimit, {
      name: "sendMessage",
      key: "session:tab",
      config: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
    });
    expect(peek.value).toBe(3);
  });
});
