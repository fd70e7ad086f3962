// Dry runs (shadow mode) on convex-test: a dry-run limit keeps its state as if enforced but always
// admits, logging each request it would have refused as one JSON line; switching it off enforces
// the same state.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, type RateLimitConfig } from "../src/client/index.js";
import { components, makeTest } from "./setup.js";

const T0 = Date.UTC(2025, 7, 1);
let logged: string[] = [];

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  logged = [];
  vi.spyOn(console, "log").mockImplementation((...parts: unknown[]) => {
    logged.push(parts.map(String).join(" "));
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const enforced: RateLimitConfig = { kind: "token bucket", rate: 3, period: MINUTE };
const shadow: RateLimitConfig = { ...enforced, dryRun: true };
const rl = new RateLimiter(components.rateLimiter, { shadow, enforced });

const dryRunLines = () =>
  logged.flatMap((line) => {
    try {
      const parsed: unknown = JSON.parse(line);
      return typeof parsed === "object" && parsed !== null && "event" in parsed && parsed.event === "rateLimit.dryRun" ? [parsed] : [];
    } catch {
      return [];
    }
  });

describe("dry run", () => {
  test("always admits, and logs each request it would have refused, with its wait", async () => {
    const t = makeTest();
    // Five requests at one instant, T0: one transaction, since convex-test's clock moves with commits.
    await t.run(async (ctx) => {
      for (let i = 0; i < 5; i++) expect(await rl.limit(ctx, "shadow", { key: "u", throws: true })).toEqual({ ok: true });
    });
    expect(dryRunLines()).toEqual([
      { event: "rateLimit.dryRun", name: "shadow", key: "u", count: 1, retryAfter: 20_000 },
      { event: "rateLimit.dryRun", name: "shadow", key: "u", count: 1, retryAfter: 20_000 },
    ]);
  });

  test("its state evolves as if enforced: switching it off refuses from where the shadow stands", async () => {
    const t = makeTest();
    // One transaction at T0, and the next deploy's call a second at T0 too (convex-test's clock
    // moves only from the third commit in a millisecond on).
    await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await rl.limit(ctx, "shadow", { key: "u" });
      const now = await rl.limit(ctx, "x", { key: "u", config: enforced });
      expect(now.ok).toBe(true); // another name: its own state
    });
    // Same name and key, now enforced: the 3 tokens the shadow took are gone.
    // The next deploy: the same name, enforced.
    const deployed = new RateLimiter(components.rateLimiter, { shadow: enforced });
    const same = await t.run((ctx) => deployed.limit(ctx, "shadow", { key: "u" }));
    expect(same).toEqual({ ok: false, retryAfter: 20_000 });
  });

  test("check answers as a dry run too, without logging", async () => {
    const t = makeTest();
    for (let i = 0; i < 3; i++) await t.run((ctx) => rl.limit(ctx, "shadow"));
    expect(await t.run((ctx) => rl.check(ctx, "shadow"))).toEqual({ ok: true });
    expect(dryRunLines()).toEqual([]);
  });

  test("an enforced limit beside it in limitAll still refuses", async () => {
    const t = makeTest();
    // Three calls in one transaction at T0, the refused one a second transaction at T0 too
    // (convex-test's clock moves only from the third commit in a millisecond on).
    await t.run(async (ctx) => {
      for (let i = 0; i < 3; i++) await rl.limitAll(ctx, [{ name: "shadow" }, { name: "enforced" }]);
    });
    const r = await t.run((ctx) => rl.limitAll(ctx, [{ name: "shadow" }, { name: "enforced" }]));
    expect(r).toEqual({ ok: false, retryAfter: 20_000, results: [{ ok: true }, { ok: false, retryAfter: 20_000 }] });
    expect(dryRunLines()).toHaveLength(1);
  });
});

describe("dry run with reserve", () => {
  test("a reservation that would wait runs now in a dry run, logged, and never throws", async () => {
    const t = makeTest();
    const budget: RateLimitConfig = { kind: "token bucket", rate: 1, period: MINUTE, maxReserved: 5, dryRun: true };
    await t.run((ctx) => rl.limit(ctx, "budget", { config: budget }));
    expect(await t.run((ctx) => rl.limit(ctx, "budget", { config: budget, reserve: true, throws: true }))).toEqual({ ok: true });
    expect(dryRunLines()).toEqual([{ event: "rateLimit.dryRun", name: "budget", count: 1, retryAfter: MINUTE }]);
  });
});
