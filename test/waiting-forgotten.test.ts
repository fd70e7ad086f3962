// Runs forgotten by a reset or clearAll, through register() and the client: their jobs still run, and cancelRun of one cancels its job and credits nothing (the reset already made the key full), so a cancel after a reset never admits more than the limit.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { SECOND } from "../src/client/index.js";
import { rateLimiter, schema, sendRef } from "./app/waiting.js";
import { components, makeTest } from "./setup.js";

const T0 = Date.UTC(2030, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

type T = ReturnType<typeof makeTest>;

/** Moves the clock to `T0 + ms`, so the next call's instant is exactly that (on convex-test's moving clock). */
function at(ms: number) {
  vi.setSystemTime(T0 + ms);
}

/** Runs every scheduled job, then lists the sends that ran. */
async function drain(t: T) {
  await t.finishAllScheduledFunctions(vi.runAllTimers);
  return t.run(async (ctx) => (await ctx.db.query("sent").collect()).map((s) => s.to));
}

// emails: a token bucket of 2 a minute (one every 30 s).
const limit = (t: T, count = 1) => t.run((ctx) => rateLimiter.limit(ctx, "emails", { count }));
const queue = (t: T) => t.run((ctx) => rateLimiter.runWhenAllowed(ctx, "emails", {}, sendRef, { to: "queued" }));
const cancel = (t: T, id: string) => t.run((ctx) => rateLimiter.cancelRun(ctx, id));

describe("a run a reset forgot", () => {
  test("cancelRun after reset cancels the job and credits nothing: no more than the limit is admitted", async () => {
    const t = makeTest(schema);
    expect(await limit(t, 2)).toEqual({ ok: true });
    at(10);
    const queued = await queue(t);
    expect(queued).toMatchObject({ ok: true, runAt: T0 + 30 * SECOND });
    at(1000);
    await t.run((ctx) => rateLimiter.reset(ctx, "emails"));
    at(2000);
    expect(await limit(t, 2)).toEqual({ ok: true });
    at(3000);
    expect(await cancel(t, (queued as { id: string }).id)).toEqual({ cancelled: true, credited: 0 });
    at(3001);
    // Nothing came back: the bucket the reset filled was emptied at 2000, and 1 s refills 1/30 of a token.
    expect((await limit(t)).ok).toBe(false);
    // A second cancel changes nothing; the job never runs.
    expect(await cancel(t, (queued as { id: string }).id)).toEqual({ cancelled: false, state: "canceled" });
    expect(await drain(t)).toEqual([]);
  });

  test("without a cancel, the queued work still runs after a reset", async () => {
    const t = makeTest(schema);
    expect(await limit(t, 2)).toEqual({ ok: true });
    at(10);
    expect(await queue(t)).toMatchObject({ ok: true, runAt: T0 + 30 * SECOND });
    at(1000);
    await t.run((ctx) => rateLimiter.reset(ctx, "emails"));
    expect(await drain(t)).toEqual(["queued"]);
  });
});

describe("a run clearAll forgot", () => {
  test("cancelRun of its still pending job cancels it, crediting nothing", async () => {
    const t = makeTest(schema);
    expect(await limit(t, 2)).toEqual({ ok: true });
    at(10);
    const queued = await queue(t);
    expect(queued).toMatchObject({ ok: true, runAt: T0 + 30 * SECOND });
    at(1000);
    await t.run((ctx) => ctx.runMutation(components.rateLimiter.lib.clearAll, {}));
    at(2000);
    expect(await limit(t, 2)).toEqual({ ok: true });
    at(3000);
    expect(await cancel(t, (queued as { id: string }).id)).toEqual({ cancelled: true, credited: 0 });
    at(3001);
    expect((await limit(t)).ok).toBe(false);
    expect(await drain(t)).toEqual([]);
  });
});
