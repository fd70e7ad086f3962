import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { makeTest, components } from "./setup.js";
import { RateLimiter, MINUTE, isRateLimitError } from "../src/client/index.js";

beforeEach(() => { vi.useFakeTimers(); vi.setSystemTime(1_700_000_000_000); });
afterEach(() => vi.useRealTimers());

test("smoke", async () => {
  const t = makeTest();
  const rl = new RateLimiter(components.rateLimiter, {
    send: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
  });
  await t.run(async (ctx) => {
    for (let i = 0; i < 3; i++) expect((await rl.limit(ctx, "send", { key: "u" })).ok).toBe(true);
    const r = await rl.limit(ctx, "send", { key: "u" });
    expect(r).toEqual({ ok: false, retryAfter: 6000, shards: [0] });
    try { await rl.limit(ctx, "send", { key: "u", throws: true }); expect.unreachable(); }
    catch (e) { expect(isRateLimitError(e)).toBe(true); console.log((e as any).data); }
    try { await rl.limit(ctx, "send", { key: "u", count: -1 }); expect.unreachable(); }
    catch (e) { console.log((e as any).data); }
    console.log(await rl.getValue(ctx, "send", { key: "u" }));
  });
});
