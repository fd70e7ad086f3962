// llm.request and llm.generate through convex-test and register(): token reservations with
// scheduled work, and each user's allowance of requests, ten times larger on the pro plan (a tier
// override). Fake timers step timer by timer, so every job runs at its own instant; the tests
// check each ran no earlier than promised and that the budget was never exceeded. The clock is set
// before each call whose instant matters, or a test reads the instant the app recorded: a
// deployment's clock moves on with its commits (on a frozen clock, the third call in a ms runs in
// the next).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { calculateRateLimit, HOUR, isInvalidRateLimitError, MINUTE, SECOND, type RateLimitConfig } from "convex-rate-limiter";
import { ConvexError } from "convex/values";
import { api, internal } from "./_generated/api.js";
import type { Doc } from "./_generated/dataModel.js";
import { rateLimiter } from "./limits.js";
import { JITTER_MS } from "./llm.js";
import { limitOf, worstExcess } from "../../tools/bounds.js";
import { seededRandom as seeded } from "../../tools/random.js";
import { errorOf, makeTest } from "./test.setup.js";

const START = Date.UTC(2025, 0, 1, 9);
/** `llmTokens` from limits.ts; rate = capacity = 40k a minute, at most 200k reserved. */
const budget: RateLimitConfig = { kind: "token bucket", rate: 40_000, period: MINUTE, maxReserved: 200_000 };

type Test = ReturnType<typeof makeTest>;

/** The app as the signed-in `user`: its `tokenIdentifier` is the user's key in `llmRequests`. */
const as = (t: Test, user = "ada") => t.withIdentity({ tokenIdentifier: `test|${user}` });

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
  vi.spyOn(Math, "random").mockImplementation(seeded(42));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

/** Fires the next timer at its own instant, then waits for the scheduled functions it started. */
async function step(t: Test) {
  vi.advanceTimersToNextTimer();
  await t.finishInProgressScheduledFunctions();
}

/** Runs every timer due up to `at`, one at a time, and leaves the clock at `at`. */
async function runUntil(t: Test, at: number) {
  // A no-op timer marks `at`, so stepping stops there rather than jumping past it.
  setTimeout(() => {}, at - Date.now());
  while (Date.now() < at) await step(t);
}

async function allJobs(t: Test): Promise<Doc<"llmJobs">[]> {
  return t.run((ctx) => ctx.db.query("llmJobs").collect());
}

describe("request", () => {
  test("within the budget, the work is scheduled to run now", async () => {
    const t = makeTest();
    const result = await as(t).mutation(api.llm.request, { prompt: "hello", tokens: 30_000 });
    expect(result).toMatchObject({ ok: true, runAfter: 0 });
    await step(t);
    const [job] = await allJobs(t);
    // It ran as soon as the deployment could: the request's commit and the scheduler's own (it
    // marks the run started) put the deployment's clock into the next ms.
    expect(job).toMatchObject({ user: "test|ada", tokens: 30_000, requestedAt: START, notBefore: START, ranAt: START + 1 });
  });

  test("beyond it, the tokens are reserved and the work waits until they exist", async () => {
    const t = makeTest();
    await as(t).mutation(api.llm.request, { prompt: "first", tokens: 40_000 });
    const second = await as(t).mutation(api.llm.request, { prompt: "second", tokens: 10_000 });
    // 10k tokens refill in 15 s; jitter adds a whole number of ms, at most a second, on top.
    if (!second.ok) throw new Error("expected a reservation");
    expect(Number.isInteger(second.runAfter)).toBe(true);
    expect(second.runAfter).toBeGreaterThanOrEqual(15_000);
    expect(second.runAfter).toBeLessThanOrEqual(15_000 + JITTER_MS);
    await step(t); // the first job, now
    await step(t); // the second, at its own time
    const job = (await allJobs(t)).find((j) => j._id === second.jobId);
    expect(job?.notBefore).toBe(START + 15_000);
    expect(job?.ranAt).toBe(START + second.runAfter);
  });

  test("a full queue refuses, says when to retry, and schedules nothing", async () => {
    const t = makeTest();
    // 40k now plus 200k reserved: the queue is full.
    await as(t).mutation(api.llm.request, { prompt: "a", tokens: 40_000 });
    for (let i = 0; i < 5; i++) await as(t).mutation(api.llm.request, { prompt: "b", tokens: 40_000 });
    // 1k tokens of debt are repaid 1.5 s after the first request (at START), making room for this
    // one: asked half a second on, it waits a second more.
    vi.setSystemTime(START + 500);
    const refused = await as(t).mutation(api.llm.request, { prompt: "c", tokens: 1_000 });
    expect(refused).toEqual({ ok: false, retryAfter: 1_000 });
    expect(await allJobs(t)).toHaveLength(6);
    // The refused request spent none of the user's allowance: 20, less the 6 taken, plus the one
    // back 3 minutes after START.
    vi.setSystemTime(START + HOUR / 20);
    const allowance = await t.run((ctx) => rateLimiter.getValue(ctx, "llmRequests", { key: "test|ada" }));
    expect(allowance.value).toBe(15);
  });

  test("a request that could never fit is an error", async () => {
    const t = makeTest();
    const error = await errorOf(as(t).mutation(api.llm.request, { prompt: "huge", tokens: 240_001 }));
    expect(isInvalidRateLimitError(error) && error.data.field).toBe("count");
    expect(await allJobs(t)).toHaveLength(0);
  });

  test("signed out, it is refused with a ConvexError, and takes nothing", async () => {
    const t = makeTest();
    expect(await errorOf(t.mutation(api.llm.request, { prompt: "hi", tokens: 1_000 }))).toBeInstanceOf(ConvexError);
    expect(await allJobs(t)).toHaveLength(0);
    expect((await t.run((ctx) => rateLimiter.getValue(ctx, "llmTokens"))).value).toBe(40_000);
  });
});

describe("a stream of requests larger than the budget", () => {
  test("every job runs no earlier than promised, and the budget is never exceeded", async () => {
    const t = makeTest();
    const sizes = seeded(7);
    const accepted: { jobId: Doc<"llmJobs">["_id"]; tokens: number }[] = [];
    let refused = 0;
    // One request every 2 s for 2 minutes, 2k to 30k tokens each: ~8× the budget.
    for (let i = 0; i < 60; i++) {
      await runUntil(t, START + i * 2_000);
      const tokens = 2_000 + Math.floor(sizes() * 28_000);
      // Six users, ten requests each: well within each one's allowance, so only the budget refuses.
      const result = await as(t, `user${i % 6}`).mutation(api.llm.request, { prompt: `#${i}`, tokens });
      if (result.ok) accepted.push({ jobId: result.jobId, tokens });
      else refused++;
    }
    while (vi.getTimerCount() > 0) await step(t);

    const jobs = await allJobs(t);
    // The stream exercised every branch: run now, reserved for later, refused.
    expect(jobs.some((j) => j.notBefore === j.requestedAt)).toBe(true);
    expect(jobs.some((j) => j.notBefore > j.requestedAt)).toBe(true);
    expect(refused).toBeGreaterThan(0);
    expect(jobs).toHaveLength(accepted.length);

    for (const job of jobs) {
      // Ran, at or after its promised instant, and within the jitter of it (not batched later).
      expect(job.ranAt).toBeDefined();
      expect(job.ranAt).toBeGreaterThanOrEqual(job.notBefore);
      expect(job.ranAt).toBeLessThanOrEqual(job.notBefore + JITTER_MS);
    }
    // The promised instants respect the bucket exactly (1 ms for rounding retryAfter up)...
    const promised = jobs.map((j) => ({ at: j.notBefore, count: j.tokens }));
    expect(worstExcess(promised, limitOf(budget), 1)).toBeLessThanOrEqual(0);
    // ...and the actual runs, which jitter may delay and bunch by up to JITTER_MS, within that.
    const runs = jobs.map((j) => ({ at: j.ranAt ?? NaN, count: j.tokens }));
    expect(worstExcess(runs, limitOf(budget), JITTER_MS + 1)).toBeLessThanOrEqual(0);

    // The scheduled runs took nothing: the limit's state is what the accepted requests alone make,
    // each at the instant the app recorded (the deployment's, which commits may put past the fake
    // clock's).
    const requestedAt = new Map(jobs.map((j) => [j._id, j.requestedAt]));
    let model: { value: number; ts: number } | null = null;
    for (const { jobId, tokens } of accepted) {
      const next = calculateRateLimit(model, budget, requestedAt.get(jobId) ?? NaN, tokens);
      model = { value: next.value, ts: next.ts };
    }
    // getValue evaluates the limit at the query's time; bring the replay to the same instant.
    const { state, now } = await t.run(async (ctx) => ({ state: await rateLimiter.getValue(ctx, "llmTokens"), now: Date.now() }));
    const replayed = calculateRateLimit(model, budget, now, 0);
    expect(state.ts).toBe(replayed.ts);
    expect(state.value).toBeCloseTo(replayed.value, 6);
  });
});

describe("settle", () => {
  test("an estimate reserved up front: the unused part goes back to the budget, once", async () => {
    const t = makeTest();
    const first = await as(t).mutation(api.llm.request, { prompt: "estimate", tokens: 30_000 });
    if (!first.ok) throw new Error("expected the reservation");
    // Read with a query, which commits nothing: it runs at the instant of the mutation before it.
    const left = async () => (await t.query((ctx) => rateLimiter.getValue(ctx, "llmTokens"))).value;
    expect(await left()).toBe(10_000);
    // 3 s on (2k tokens back), the model used 12k of the 30k estimated: 18k come back.
    vi.setSystemTime(START + 3 * SECOND);
    expect(await t.mutation(internal.llm.settle, { jobId: first.jobId, used: 12_000 })).toBe(18_000);
    expect(await left()).toBe(30_000);
    // Settling again, 3 s later (2k more back), gives nothing more back.
    vi.setSystemTime(START + 6 * SECOND);
    expect(await t.mutation(internal.llm.settle, { jobId: first.jobId, used: 0 })).toBe(0);
    expect(await left()).toBe(32_000);
  });
});

describe("each user's allowance: 20 requests an hour, ten times that on the pro plan", () => {
  /** One request of `llm.request` as `user`, small enough that the budget never refuses it. */
  const ask = (t: Test, user: string) => as(t, user).mutation(api.llm.request, { prompt: "p", tokens: 100 });
  /**
   * How many of `n` requests made at once `user` is allowed: one transaction of nested requests,
   * so they share one instant (separate calls would run a ms apart once two have committed).
   */
  const burst = (t: Test, user: string, n: number) =>
    as(t, user).run(async (ctx) => {
      let ok = 0;
      for (let i = 0; i < n; i++) if ((await ctx.runMutation(api.llm.request, { prompt: "p", tokens: 100 })).ok) ok++;
      return ok;
    });
  const admin = (t: Test) => t.withIdentity({ email: "admin@example.com" });
  const setPlan = (t: Test, user: string, plan: "free" | "pro") => admin(t).mutation(api.admin.setPlan, { user: `test|${user}`, plan });
  /** A fresh app with the plans' overrides in force (admin.seedPlanOverrides) and bob on the pro plan. */
  async function withPlans() {
    const t = makeTest();
    await t.mutation(internal.admin.seedPlanOverrides, {});
    await setPlan(t, "bob", "pro");
    return t;
  }

  test("a free user gets the named 20, then waits for one to come back (3 minutes)", async () => {
    const t = await withPlans();
    expect(await burst(t, "ada", 20)).toBe(20);
    expect(await ask(t, "ada")).toEqual({ ok: false, retryAfter: HOUR / 20 });
  });

  test("a pro user gets ten times that, then waits a tenth as long (18 s)", async () => {
    const t = await withPlans();
    expect(await burst(t, "bob", 200)).toBe(200);
    expect(await ask(t, "bob")).toEqual({ ok: false, retryAfter: HOUR / 200 });
    // Its allowance is the tier's: the admin's reading says which override decided.
    const value = await admin(t).query(api.admin.rateLimitValue, { name: "llmRequests", key: "test|bob", tier: "pro" });
    expect(value).toMatchObject({ by: "tier", config: { rate: 200, capacity: 200 } });
  });

  test("without the tier's override, a pro user gets the named allowance", async () => {
    const t = makeTest();
    await setPlan(t, "bob", "pro");
    expect(await burst(t, "bob", 21)).toBe(20);
  });

  test("upgrading grants no tokens: the allowance refills from what was left, at the pro rate", async () => {
    const t = await withPlans();
    const drained = START + SECOND;
    vi.setSystemTime(drained);
    expect(await burst(t, "ada", 20)).toBe(20);
    await setPlan(t, "ada", "pro");
    // Still none left at the upgrade; half a pro refill later, half a request is back, and the
    // wait for the rest is the pro rate's (the free rate's would be 20 times as long).
    vi.setSystemTime(drained + HOUR / 400);
    expect(await ask(t, "ada")).toEqual({ ok: false, retryAfter: HOUR / 400 });
    vi.setSystemTime(drained + HOUR / 200);
    expect((await ask(t, "ada")).ok).toBe(true);
    expect((await ask(t, "ada")).ok).toBe(false);
  });

  test("downgrading grants no tokens either: what was left, at most the free capacity", async () => {
    const t = await withPlans();
    // Bob uses 195 of his 200, then goes back to free: 5 left, not the free plan's 20.
    expect(await burst(t, "bob", 195)).toBe(195);
    await setPlan(t, "bob", "free");
    expect(await burst(t, "bob", 6)).toBe(5);
    // Carol uses 10 of 200: 190 left, clamped to the free capacity of 20 on her next request.
    await setPlan(t, "carol", "pro");
    expect(await burst(t, "carol", 10)).toBe(10);
    await setPlan(t, "carol", "free");
    expect(await burst(t, "carol", 21)).toBe(20);
  });
});
