// Overrides, blocks and lockouts through the published register() helper and the typed client
// (the app is test/app/overrides.ts); fake timers drive the clock.
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, MINUTE } from "../src/client/index.js";
import type * as overrides from "./app/overrides.js";
import { convexErrorData, makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ overrides: typeof overrides }>;
const T0 = Date.UTC(2030, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

const pro = { config: { kind: "token bucket", rate: 100, period: HOUR } } as const;

describe("overrides through the client", () => {
  test("a tier's override applies to requests naming the tier; a key's own beats it", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: pro });
    for (let i = 0; i < 10; i++) expect(await t.mutation(api.overrides.take, { name: "llm", key: "free-user" })).toEqual({ ok: true });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "free-user" })).toMatchObject({ ok: false });
    for (let i = 0; i < 100; i++) expect(await t.mutation(api.overrides.take, { name: "llm", key: "pro-user", tier: "pro" })).toEqual({ ok: true });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "pro-user", tier: "pro" })).toMatchObject({ ok: false, retryAfter: 36_000 });
    const v = await t.query(api.overrides.value, { name: "llm", key: "pro-user", tier: "pro" });
    expect(v).toMatchObject({ by: "tier", config: { rate: 100 } });
    // A key's own override beats its tier's.
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "vip" }, override: { config: { kind: "token bucket", rate: 1000, period: HOUR } } });
    expect(await t.query(api.overrides.value, { name: "llm", key: "vip", tier: "pro" })).toMatchObject({ by: "key", value: 1000 });
  });

  test("a block refuses until its instant, and retrying then succeeds", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "bad" }, override: { blockedUntil: T0 + 5000 }, note: "abuse" });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "bad" })).toEqual({ ok: false, retryAfter: 5000 });
    expect(await t.query(api.overrides.value, { name: "llm", key: "bad" })).toMatchObject({ blockedUntil: T0 + 5000 });
    vi.setSystemTime(T0 + 5000);
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "bad" })).toEqual({ ok: true });
    expect(await t.query(api.overrides.get, { name: "llm", target: { key: "bad" } })).toEqual({ target: { key: "bad" }, override: { blockedUntil: T0 + 5000 }, note: "abuse", updatedAt: T0 });
  });

  test("a lockout: the take that empties the key locks it for the lockout", async () => {
    const t = makeTest();
    for (let i = 0; i < 3; i++) expect(await t.mutation(api.overrides.take, { name: "signIn", key: "a@b" })).toEqual({ ok: true });
    expect(await t.mutation(api.overrides.take, { name: "signIn", key: "a@b" })).toEqual({ ok: false, retryAfter: HOUR });
    vi.setSystemTime(T0 + 2 * MINUTE);
    expect(await t.mutation(api.overrides.take, { name: "signIn", key: "a@b" })).toEqual({ ok: false, retryAfter: HOUR - 2 * MINUTE });
    vi.setSystemTime(T0 + HOUR);
    expect(await t.mutation(api.overrides.take, { name: "signIn", key: "a@b" })).toEqual({ ok: true });
  });

  test("setting and removing an override never grants tokens", async () => {
    const t = makeTest();
    for (let i = 0; i < 10; i++) await t.mutation(api.overrides.take, { name: "llm", key: "u" });
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "u" }, override: pro });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "u" })).toMatchObject({ ok: false });
    expect(await t.mutation(api.overrides.remove, { name: "llm", target: { key: "u" } })).toBe(true);
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "u" })).toMatchObject({ ok: false });
    expect(await t.query(api.overrides.get, { name: "llm", target: { key: "u" } })).toBeNull();
  });

  test("list pages through a limit's overrides; reset and clean-up keep a key's own", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: pro });
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "a" }, override: pro });
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "b" }, override: { blockedUntil: T0 + HOUR } });
    const first = await t.query(api.overrides.list, { name: "llm", paginationOpts: { numItems: 2, cursor: null } });
    expect(first.page.map((r) => r.target)).toEqual([{ key: "a" }, { key: "b" }]);
    const second = await t.query(api.overrides.list, { name: "llm", paginationOpts: { numItems: 2, cursor: first.continueCursor } });
    expect(second.page.map((r) => r.target)).toEqual([{ tier: "pro" }]);
    await t.mutation(api.overrides.take, { name: "llm", key: "a" });
    await t.mutation(api.overrides.reset, { name: "llm", key: "a" });
    expect(await t.query(api.overrides.value, { name: "llm", key: "a" })).toMatchObject({ by: "key", value: 100 });
    await t.mutation(api.overrides.cleanup, {});
    expect(await t.query(api.overrides.value, { name: "llm", key: "a" })).toMatchObject({ by: "key", value: 100 });
  });

  test("bad input names the field and writes nothing", async () => {
    const t = makeTest();
    const error = await convexErrorData(t.mutation(api.overrides.set, { name: "llm", target: { key: "a" }, override: { config: { kind: "token bucket", rate: -1, period: HOUR } } }));
    expect(error).toMatchObject({ kind: "InvalidRateLimit", field: "override.config.rate" });
    const shards = await convexErrorData(t.mutation(api.overrides.set, { name: "llm", target: { key: "a" }, override: { config: { kind: "token bucket", rate: 1, period: HOUR, shards: 2 } } }));
    expect(shards).toMatchObject({ field: "override.config.shards" });
    expect(await t.query(api.overrides.get, { name: "llm", target: { key: "a" } })).toBeNull();
  });

  test("sharded and asynchronous limits follow a key's override", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llmSharded", target: { key: "s" }, override: { config: { kind: "token bucket", rate: 400, period: HOUR } } });
    let admitted = 0;
    for (let i = 0; i < 120; i++) if ((await t.mutation(api.overrides.take, { name: "llmSharded", key: "s" })).ok) admitted++;
    expect(admitted).toBe(120);
    await t.mutation(api.overrides.set, { name: "llmAsync", target: { tier: "pro" }, override: pro });
    admitted = 0;
    for (let i = 0; i < 30; i++) if ((await t.mutation(api.overrides.take, { name: "llmAsync", key: "p", tier: "pro" })).ok) admitted++;
    expect(admitted).toBe(30);
  });
});
