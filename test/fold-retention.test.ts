// The metrics fold through the component (convex-test) with its default retention: a folded minute is kept for 7 days, then the fold deletes it.
// The first test of this file is the first in it to load the component's modules (lazily, through convex-test), so a
// change to a constant of src/shared/metrics/metrics-fold.ts (DEFAULT_RETAIN_MS) is seen by it: keep it first.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, type LimitConfig } from "../src/client/index.js";
import { components, makeTest } from "./setup.js";

const DAY = 24 * 60 * MINUTE;
/** A whole minute, so T0's bucket starts at T0. */
const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);
const limits = { chat: { kind: "token bucket", rate: 3, period: MINUTE, metrics: true } } satisfies Record<string, LimitConfig>;
const rl = new RateLimiter(components.rateLimiter, limits);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the fold's default retention (7 days)", () => {
  test("keeps a minute folded 6 days ago, and deletes it 8 days on", async () => {
    const t = makeTest();
    await t.run((ctx) => rl.limit(ctx, "chat", { key: "k" }));
    const minute = () => t.run((ctx) => rl.metrics(ctx, "chat", { from: T0, to: T0 + MINUTE }));
    vi.setSystemTime(T0 + 6 * DAY);
    expect(await t.run((ctx) => rl.foldMetrics(ctx))).toEqual({ folded: 1, pruned: 0, done: true });
    const kept = await minute();
    expect(kept.buckets.map((b) => [b.bucket, b.admitted])).toEqual([[T0, 1]]);
    expect(kept.unfolded).toBe(0);
    vi.setSystemTime(T0 + 8 * DAY);
    expect(await t.run((ctx) => rl.foldMetrics(ctx))).toEqual({ folded: 0, pruned: 1, done: true });
    expect((await minute()).buckets).toEqual([]);
  });
});
