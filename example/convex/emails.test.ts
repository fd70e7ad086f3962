// emails.queue, cancel and outbox through convex-test and register(), with the scheduler run timer
// by timer under fake timers: the provider's 100 in any hour (an exact sliding window) makes the
// 101st email wait until the first leaves the hour, in order; a queued email can be cancelled,
// once, by its sender only, and its place goes back to the limit.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR } from "convex-rate-limiter";
import type { SessionId } from "convex-helpers/server/sessions";
import { api } from "./_generated/api.js";
import { makeTest } from "./test.setup.js";

const START = Date.UTC(2025, 0, 1, 9);
const me = "session-me" as SessionId;
const other = "session-other" as SessionId;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => vi.useRealTimers());

type T = ReturnType<typeof makeTest>;

/** Queues `n` emails from `sessionId`, each a call of its own, and returns their results. */
async function queueN(t: T, sessionId: SessionId, n: number) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await t.mutation(api.emails.queue, { sessionId, to: `friend${i}@example.com`, subject: `hello ${i}` }));
  return out;
}

/** Runs the jobs due at the next instant that has any (every timer due then fires together). */
async function runNext(t: T): Promise<number> {
  vi.advanceTimersToNextTimer();
  await t.finishInProgressScheduledFunctions();
  return Date.now();
}

describe("emails", () => {
  test("100 go at once; the 101st waits until the first leaves the hour, and goes then", async () => {
    const t = makeTest();
    const first = await queueN(t, me, 100);
    // The clock moves with each commit: note when the first email was decided.
    const firstAt = first[0]!.ok ? first[0]!.runAt : NaN;
    expect(firstAt).toBe(START);
    expect(first.every((r) => r.ok && r.runAt <= START + 100)).toBe(true);
    const [late] = await queueN(t, me, 1);
    expect(late).toMatchObject({ ok: true, runAt: START + HOUR });
    // The ones due now go out.
    while (Date.now() < START + 100 && (await t.query(api.emails.outbox, { sessionId: me })).some((e) => e.status === "queued" && e.runAt! <= START + 100)) await runNext(t);
    const outbox = await t.query(api.emails.outbox, { sessionId: me });
    expect(outbox[0]).toMatchObject({ to: "friend0@example.com", status: "queued", runAt: START + HOUR });
    expect(outbox.slice(1).every((e) => e.status === "sent")).toBe(true);
    // At its instant, it goes.
    let now = Date.now();
    while (now < START + HOUR) now = await runNext(t);
    expect(now).toBe(START + HOUR);
    expect((await t.query(api.emails.outbox, { sessionId: me }))[0]).toMatchObject({ status: "sent", sentAt: START + HOUR });
  });

  test("a queued email can be cancelled once, by its sender, until it goes; its place goes back", async () => {
    const t = makeTest();
    await queueN(t, me, 100);
    const [a, b] = await queueN(t, me, 2);
    if (!a!.ok || !b!.ok) throw new Error("expected both queued");
    expect(await t.mutation(api.emails.cancel, { sessionId: other, emailId: a!.emailId })).toBe(false);
    expect(await t.mutation(api.emails.cancel, { sessionId: me, emailId: a!.emailId })).toBe(true);
    expect(await t.mutation(api.emails.cancel, { sessionId: me, emailId: a!.emailId })).toBe(false);
    const outbox = await t.query(api.emails.outbox, { sessionId: me });
    expect(outbox.find((e) => e._id === a!.emailId)).toMatchObject({ status: "cancelled" });
    // The next email takes the place back, after the one queued before it.
    const [c] = await queueN(t, me, 1);
    expect(c).toMatchObject({ ok: true, runAt: b!.runAt });
    // Once it went, it can't be cancelled.
    while ((await t.query(api.emails.outbox, { sessionId: me })).find((e) => e._id === b!.emailId)!.status === "queued") await runNext(t);
    expect(await t.mutation(api.emails.cancel, { sessionId: me, emailId: b!.emailId })).toBe(false);
  });

  test("a bad address is refused, and nothing is queued", async () => {
    const t = makeTest();
    await expect(t.mutation(api.emails.queue, { sessionId: me, to: "not an address", subject: "x" })).rejects.toThrow(/address/);
    expect(await t.query(api.emails.outbox, { sessionId: me })).toEqual([]);
  });
});
