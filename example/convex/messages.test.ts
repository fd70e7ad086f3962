// messages.send and its hookAPI through convex-test and register(): a token bucket of 10 a minute
// with bursts of 3, per signed-in user or per anonymous session; fake timers step the refill, set
// before each call whose instant matters (a deployment's clock moves on with its commits, so on a
// frozen clock the third call in a ms runs in the next).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { calculateRateLimit, isInvalidRateLimitError, isRateLimitError, MINUTE, SECOND } from "convex-rate-limiter";
import type { SessionId } from "convex-helpers/server/sessions";
import { ConvexError } from "convex/values";
import { api } from "./_generated/api.js";
import { errorOf, makeTest } from "./test.setup.js";

const START = Date.UTC(2025, 0, 1, 9);
/** One token of `sendMessage` (10 a minute) comes back every 6 seconds. */
const REFILL = MINUTE / 10;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => vi.useRealTimers());

const tab1 = "session-1" as SessionId;
const tab2 = "session-2" as SessionId;

type Sender = Pick<ReturnType<typeof makeTest>, "mutation" | "query">;

/** The `retryAfter` of a send the limit refuses; fails the test if the send goes through. */
async function refusedFor(t: Sender, sessionId: SessionId): Promise<number> {
  const error = await errorOf(t.mutation(api.messages.send, { sessionId, body: "hi" }));
  if (!isRateLimitError(error)) throw error;
  return error.data.retryAfter;
}

async function sendN(t: Sender, sessionId: SessionId, n: number) {
  for (let i = 0; i < n; i++) await t.mutation(api.messages.send, { sessionId, body: `message ${i}` });
}

describe("send", () => {
  // #region movingClock
  test("a burst of three, then one every six seconds", async () => {
    const t = makeTest();
    // The first at START empties the bucket by the third (in START's ms or the next): from START on
    // it refills a token every 6 s.
    await sendN(t, tab1, 3);
    vi.setSystemTime(START + SECOND);
    expect(await refusedFor(t, tab1)).toBe(REFILL - SECOND);
    vi.setSystemTime(START + REFILL - 1);
    expect(await refusedFor(t, tab1)).toBe(1);
    vi.setSystemTime(START + REFILL);
    await sendN(t, tab1, 1);
    vi.setSystemTime(START + REFILL + SECOND);
    expect(await refusedFor(t, tab1)).toBe(REFILL - SECOND);
  });
  // #endregion movingClock

  test("a sender who waits exactly retryAfter always gets through, within the bound", async () => {
    const t = makeTest();
    let sent = 0;
    while (Date.now() - START <= MINUTE) {
      try {
        await t.mutation(api.messages.send, { sessionId: tab1, body: "steady" });
        sent++;
      } catch (error) {
        if (!isRateLimitError(error)) throw error;
        vi.advanceTimersByTime(error.data.retryAfter);
        await t.mutation(api.messages.send, { sessionId: tab1, body: "after the wait" });
        sent++;
      }
      // Never more than the burst plus what refilled since the start.
      expect(sent).toBeLessThanOrEqual(3 + (10 * (Date.now() - START)) / MINUTE);
      // The sender tries again a ms later: each try at an instant of its own, so that retryAfter
      // counts from the instant the clock shows (no commit has put the deployment's ahead of it).
      vi.advanceTimersByTime(1);
    }
    // 3 in the first 3 ms, then one every 6 s from START: at 6, 12, ..., 60 s; 60.001 s ends the loop.
    expect(sent).toBe(13);
  });

  test("trying every second for a minute reaches the bound: 3 + 10", async () => {
    const t = makeTest();
    let sent = 0;
    for (let second = 0; second <= 60; second++) {
      vi.setSystemTime(START + second * 1000);
      try {
        await t.mutation(api.messages.send, { sessionId: tab1, body: "spam" });
        sent++;
      } catch (error) {
        if (!isRateLimitError(error)) throw error;
      }
      expect(sent).toBeLessThanOrEqual(3 + (10 * second) / 60);
    }
    // Sends at 0, 1, 2 s leave exactly 1/3 token; a whole one is back at 6 s, 12 s, ... 60 s.
    // (Float drift in the stored value once made the 6 s send miss by 1 ms and lose a token.)
    expect(sent).toBe(13);
  });

  test("anonymous visitors are limited per session", async () => {
    const t = makeTest();
    await sendN(t, tab1, 3);
    await refusedFor(t, tab1);
    await sendN(t, tab2, 3);
  });

  test("a signed-in user is limited across all their sessions", async () => {
    const t = makeTest();
    const alice = t.withIdentity({ subject: "alice" });
    await sendN(alice, tab1, 2);
    await sendN(alice, tab2, 1);
    await refusedFor(alice, tab2);
    // Bob, and anonymous visitors in the same tabs, have their own buckets.
    await sendN(t.withIdentity({ subject: "bob" }), tab1, 3);
    await sendN(t, tab1, 3);
  });

  test("messages record whose bucket they came from", async () => {
    const t = makeTest();
    await sendN(t, tab1, 1);
    await sendN(t.withIdentity({ subject: "alice", tokenIdentifier: "issuer|alice" }), tab1, 1);
    const authors = (await t.query(api.messages.list, {})).map((m) => m.author);
    expect(authors).toEqual(["user:issuer|alice", "session:session-1"]);
  });

  test("a session ID can't pose as a user", async () => {
    const t = makeTest();
    const alice = t.withIdentity({ subject: "alice", tokenIdentifier: "issuer|alice" });
    // An anonymous client sending Alice's identifier as its session ID drains its own bucket only.
    await sendN(t, "issuer|alice" as SessionId, 3);
    await sendN(alice, tab1, 3);
  });

  test("a malformed message is refused without taking a token", async () => {
    const t = makeTest();
    const error = await errorOf(t.mutation(api.messages.send, { sessionId: tab1, body: "" }));
    expect(error).toBeInstanceOf(ConvexError);
    expect(error).toMatchObject({ data: "a message has 1 to 1000 characters" });
    await sendN(t, tab1, 3);
  });
});

describe("hookAPI: getRateLimit and getServerTime", () => {
  test("reports the sender's bucket, so the client can predict the next send", async () => {
    const t = makeTest();
    await sendN(t, tab1, 3); // empty from START's ms on (see the first test)
    // Read at a whole refill later: exactly one token back.
    vi.setSystemTime(START + REFILL);
    const state = await t.query(api.messages.getRateLimit, { key: tab1 });
    expect(state).toMatchObject({ value: 1, ts: START + REFILL, shard: 0 });
    expect(state.config).toMatchObject({ kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 });
    // What the hook computes from it, a second on, agrees with the server's refusal then.
    await sendN(t, tab1, 1);
    const reading = await t.query(api.messages.getRateLimit, { key: tab1 });
    vi.setSystemTime(START + REFILL + SECOND);
    const predicted = calculateRateLimit({ value: reading.value, ts: reading.ts }, reading.config, START + REFILL + SECOND, 1);
    expect(predicted.retryAfter).toBe(REFILL - SECOND);
    expect(await refusedFor(t, tab1)).toBe(predicted.retryAfter);
  });

  test("a signed-in user sees their own bucket whatever key the client sends", async () => {
    const t = makeTest();
    const alice = t.withIdentity({ subject: "alice" });
    await sendN(alice, tab1, 2); // 1 left at START
    // Read a whole refill later, where her bucket holds exactly 2 (the sends' commits put the
    // deployment's clock a ms past START already).
    vi.setSystemTime(START + REFILL);
    expect((await alice.query(api.messages.getRateLimit, { key: tab2 })).value).toBe(2);
    expect((await alice.query(api.messages.getRateLimit, {})).value).toBe(2);
    // The anonymous session tab2 is untouched (full: a missing row reads as capacity).
    expect((await t.query(api.messages.getRateLimit, { key: tab2 })).value).toBe(3);
  });

  test("refuses clients that send a name or a config, or no session when anonymous", async () => {
    const t = makeTest();
    const byName = await errorOf(t.query(api.messages.getRateLimit, { key: tab1, name: "failedLogins" }));
    expect(isInvalidRateLimitError(byName) && byName.data.field).toBe("name");
    const byConfig = await errorOf(
      t.query(api.messages.getRateLimit, { key: tab1, config: { kind: "token bucket", rate: 1000, period: 1 } }),
    );
    expect(isInvalidRateLimitError(byConfig) && byConfig.data.field).toBe("config");
    const anonymous = await errorOf(t.query(api.messages.getRateLimit, {}));
    expect(anonymous).toBeInstanceOf(ConvexError);
    expect(anonymous).toMatchObject({ data: "sign in, or send a session ID" });
  });

  test("getServerTime returns the server's clock", async () => {
    const t = makeTest();
    vi.setSystemTime(START + 1234);
    expect(await t.mutation(api.messages.getServerTime, {})).toBe(START + 1234);
  });
});
