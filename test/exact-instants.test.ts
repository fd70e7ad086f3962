// What a user sees at the exact instant a block or a lease ends, through register() and the client: a key's and its tier's blocks ending together are the key's; a lease at its expiry is freed by clean-up and not by release; each beside the instant 1 ms before.
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter } from "../src/client/index.js";
import type * as overrides from "./app/overrides.js";
import { components, makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ overrides: typeof overrides }>;
const T0 = Date.UTC(2030, 0, 1);
const LEASE = 5 * MINUTE;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

const rateLimiter = new RateLimiter(components.rateLimiter, {
  jobs: { kind: "concurrency", capacity: 2, lease: LEASE },
});

describe("a key's block and its tier's block", () => {
  // Each row: the key's block's end and the tier's (ms after T0), and what getValue must name.
  const rows: [key: number, tier: number, by: "key" | "tier", why: string][] = [
    [5000, 5000, "key", "ending at the same instant: the key's, as everywhere else the key outranks its tier"],
    [6000, 5000, "key", "the key's ends later: it decides until then"],
    [5000, 6000, "tier", "the tier's ends later: once the key's lifts the tier's still refuses, so it is the one in force to the end"],
  ];
  test.each(rows)("key's until T0 + %i, tier's until T0 + %i: blockedBy %s (%s)", async (key, tier, by) => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "k" }, override: { blockedUntil: T0 + key } });
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: { blockedUntil: T0 + tier } });
    // An explicit instant: convex-test's clock moves with commits.
    vi.setSystemTime(T0 + 1000);
    const until = T0 + Math.max(key, tier);
    expect(await t.query(api.overrides.value, { name: "llm", key: "k", tier: "pro" })).toMatchObject({ blockedUntil: until, blockedBy: by });
    vi.setSystemTime(T0 + 2000);
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "k", tier: "pro" })).toEqual({ ok: false, retryAfter: until - (T0 + 2000) });
  });
});

describe("a lease at its exact expiry", () => {
  // A lease counts while expiresAt > now: at expiresAt its slot is free already.
  test("release 1 ms before the expiry frees a slot; at the expiry it frees nothing (the slot freed itself)", async () => {
    const t = makeTest();
    const [a, b] = await t.run(async (ctx) => [await rateLimiter.acquire(ctx, "jobs", { key: "u" }), await rateLimiter.acquire(ctx, "jobs", { key: "u" })]);
    if (!a?.ok || !b?.ok) throw new Error("both acquires were admitted");
    expect([a.expiresAt, b.expiresAt]).toEqual([T0 + LEASE, T0 + LEASE]);
    vi.setSystemTime(T0 + LEASE - 1);
    expect(await t.run((ctx) => rateLimiter.release(ctx, a.lease))).toEqual({ released: true });
    vi.setSystemTime(T0 + LEASE);
    expect(await t.run((ctx) => rateLimiter.release(ctx, b.lease))).toEqual({ released: false });
    expect(await t.run((ctx) => rateLimiter.getValue(ctx, "jobs", { key: "u" }))).toMatchObject({ inFlight: 0, ts: T0 + LEASE });
  });

  test("clean-up 1 ms before the expiry deletes nothing; at the expiry it deletes the lease", async () => {
    const t = makeTest();
    const a = await t.run((ctx) => rateLimiter.acquire(ctx, "jobs", { key: "u" }));
    expect(a).toMatchObject({ ok: true, expiresAt: T0 + LEASE });
    const deleteExpired = () => t.run((ctx) => ctx.runMutation(components.rateLimiter.leases.deleteExpired, {}));
    vi.setSystemTime(T0 + LEASE - 1);
    expect(await deleteExpired()).toEqual({ deleted: 0, done: true });
    expect(await t.run((ctx) => rateLimiter.getValue(ctx, "jobs", { key: "u" }))).toMatchObject({ inFlight: 1, ts: T0 + LEASE - 1 });
    vi.setSystemTime(T0 + LEASE);
    expect(await deleteExpired()).toEqual({ deleted: 1, done: true });
    // Deleted, so a release finds nothing to free, and nothing is left to delete.
    if (!a.ok) throw new Error("the acquire was admitted");
    expect(await t.run((ctx) => rateLimiter.release(ctx, a.lease))).toEqual({ released: false });
    expect(await deleteExpired()).toEqual({ deleted: 0, done: true });
  });
});
