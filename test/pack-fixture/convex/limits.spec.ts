// The app's own test, run inside a temporary app by test/pack.test.ts: convex-test with the installed
// component registered through convex-rate-limiter/test, under fake timers. (Named .spec.ts so the
// project's own vitest, which runs *.test.ts, leaves it alone.)
import { convexTest } from "convex-test";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import rateLimiterTest, { register } from "convex-rate-limiter/test";
import { createRequire } from "node:module";
import { api } from "./_generated/api.js";
import schema from "./schema.js";

const modules = import.meta.glob("./**/*.*s");

/** An instant of the tests' fake clock (ms). */
const T = 1_700_000_000_000;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T);
});
afterEach(() => vi.useRealTimers());

// convex-test's clock moves with commits, as a deployment's does: the first two calls in a frozen
// millisecond see it, and later ones see it a millisecond on. So each call after the first two
// sets its own instant, and the waits are asserted to the ms from there.

test("register(t): two sends a minute, then a refusal with retryAfter, per user", async () => {
  const t = convexTest(schema, modules);
  register(t);
  expect(await t.mutation(api.limits.send, { user: "ada" })).toEqual({ ok: true });
  expect(await t.mutation(api.limits.send, { user: "ada" })).toEqual({ ok: true });
  // 2 per minute refill one token every 30 s: 1 ms after the two sends, 29,999 ms to wait.
  vi.setSystemTime(T + 1);
  expect(await t.mutation(api.limits.send, { user: "ada" })).toEqual({ ok: false, retryAfter: 29_999 });
  // Another key has its own bucket.
  vi.setSystemTime(T + 2);
  expect(await t.mutation(api.limits.send, { user: "bob" })).toEqual({ ok: true });
});

test("the default export's register, and time moving on", async () => {
  const t = convexTest(schema, modules);
  rateLimiterTest.register(t, "rateLimiter");
  await t.mutation(api.limits.send, { user: "ada" });
  await t.mutation(api.limits.send, { user: "ada" });
  vi.setSystemTime(T + 1);
  expect(await t.query(api.limits.canSend, { user: "ada" })).toEqual({ ok: false, retryAfter: 29_999 });
  vi.setSystemTime(T + 30_000);
  expect(await t.query(api.limits.canSend, { user: "ada" })).toEqual({ ok: true });
  expect(await t.mutation(api.limits.send, { user: "ada" })).toEqual({ ok: true });
});

// convex.config.js itself only loads inside Convex (`component.use` needs the runtime), so this
// checks that the export resolves to the built definition, as Convex's bundler will find it.
test("convex.config.js resolves to the built component definition", () => {
  const resolved = createRequire(import.meta.url).resolve("convex-rate-limiter/convex.config.js");
  expect(resolved).toMatch(/node_modules\/convex-rate-limiter\/dist\/component\/convex\.config\.js$/);
});
