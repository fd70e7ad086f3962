// invites.send through convex-test and register(): two limits (20 a day per user, 100 emails in
// any hour for everyone, a sliding window) taken all or nothing; fake timers check the combined
// retryAfter to the ms, set before each call whose instant matters (a deployment's clock moves on
// with its commits: on a frozen clock the third call in a ms runs in the next).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { DAY, HOUR, isInvalidRateLimitError, MINUTE, SECOND } from "convex-rate-limiter";
import { ConvexError } from "convex/values";
import { api } from "./_generated/api.js";
import { rateLimiter } from "./limits.js";
import { errorOf, makeTest } from "./test.setup.js";

const START = Date.UTC(2025, 0, 1, 9, 41);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => vi.useRealTimers());

type Test = ReturnType<typeof makeTest>;

function as(t: Test, user: string) {
  return t.withIdentity({ subject: user, tokenIdentifier: `issuer|${user}` });
}

function emails(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}@example.com`);
}

/** Tokens left in the user's allowance and in the global email budget. */
async function left(t: Test, user: string) {
  return t.run(async (ctx) => ({
    user: (await rateLimiter.getValue(ctx, "invitesPerUser", { key: `issuer|${user}` })).value,
    global: (await rateLimiter.getValue(ctx, "outboundEmails")).value,
  }));
}

describe("send", () => {
  test("takes one token per invitation from both limits", async () => {
    const t = makeTest();
    expect(await as(t, "alice").mutation(api.invites.send, { emails: emails("a", 3) })).toEqual({ ok: true });
    expect(await left(t, "alice")).toEqual({ user: 17, global: 97 });
    expect(await t.run((ctx) => ctx.db.query("invites").collect())).toHaveLength(3);
  });

  test("refused by the user's allowance, it takes nothing from the global budget", async () => {
    const t = makeTest();
    const alice = as(t, "alice");
    await alice.mutation(api.invites.send, { emails: emails("a", 20) });
    // One invitation's worth refills in a day / 20: half of it is back a day / 40 later.
    vi.setSystemTime(START + DAY / 40);
    expect(await alice.mutation(api.invites.send, { emails: ["late@example.com"] })).toEqual({
      ok: false,
      retryAfter: DAY / 40,
    });
    // Read at that instant too (one commit in its ms so far, so the next call still runs in it).
    expect(await left(t, "alice")).toEqual({ user: 0.5, global: 80 });
  });

  test("refused by the global budget, it takes nothing from the user's allowance", async () => {
    const t = makeTest();
    for (const user of ["u0", "u1", "u2", "u3", "u4"]) {
      await as(t, user).mutation(api.invites.send, { emails: emails(user, 20) });
    }
    const result = await as(t, "bob").mutation(api.invites.send, { emails: ["b@example.com"] });
    expect(result.ok).toBe(false);
    expect(await left(t, "bob")).toEqual({ user: 20, global: 0 });
  });

  test("refused by both, it waits for the later of the two, to the ms", async () => {
    const t = makeTest();
    const u0 = as(t, "u0");
    for (const user of ["u0", "u1", "u2", "u3", "u4"]) {
      await as(t, user).mutation(api.invites.send, { emails: emails(user, 20) });
    }
    // The refusal at an instant of its own: retryAfter counts from it.
    vi.setSystemTime(START + SECOND);
    const result = await u0.mutation(api.invites.send, { emails: ["again@example.com"] });
    if (result.ok) throw new Error("expected a refusal");
    const each = await t.run(async (ctx) => [
      await rateLimiter.check(ctx, "invitesPerUser", { key: "issuer|u0" }),
      await rateLimiter.check(ctx, "outboundEmails"),
    ]);
    expect(result.retryAfter).toBe(Math.max(...each.map((c) => c.retryAfter ?? 0)));

    vi.advanceTimersByTime(result.retryAfter - 1);
    expect((await u0.mutation(api.invites.send, { emails: ["again@example.com"] })).ok).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await u0.mutation(api.invites.send, { emails: ["again@example.com"] })).toEqual({ ok: true });
  });

  test("the email budget is an exact sliding window: never more than 100 in any hour", async () => {
    const t = makeTest();
    const sentAt = Date.now();
    // 100 emails, 20 a user, all in the same minute.
    for (const user of ["u0", "u1", "u2", "u3", "u4"]) {
      expect(await as(t, user).mutation(api.invites.send, { emails: emails(user, 20) })).toEqual({ ok: true });
    }
    // Whenever the hour turns, the 100 stay counted until an hour after they were sent (a fixed
    // window would let 100 more out at the turn; the approximate window some of them).
    const bob = as(t, "bob");
    vi.setSystemTime(sentAt + 59 * MINUTE);
    expect(await bob.mutation(api.invites.send, { emails: ["b@example.com"] })).toEqual({ ok: false, retryAfter: MINUTE });
    vi.setSystemTime(sentAt + HOUR - 1);
    expect(await bob.mutation(api.invites.send, { emails: ["b@example.com"] })).toEqual({ ok: false, retryAfter: 1 });
    // An hour after they were sent, all 100 slots are back at once (they were sent at once).
    vi.setSystemTime(sentAt + HOUR);
    expect(await bob.mutation(api.invites.send, { emails: ["b@example.com", "c@example.com"] })).toEqual({ ok: true });
  });

  test("a throw after the limits were taken gives every token back", async () => {
    const t = makeTest();
    const alice = as(t, "alice");
    await alice.mutation(api.invites.send, { emails: ["x@example.com"] });
    // x was invited already: the whole mutation rolls back, limits included.
    await expect(alice.mutation(api.invites.send, { emails: ["y@example.com", "x@example.com"] })).rejects.toThrow(
      "x@example.com was already invited",
    );
    expect(await left(t, "alice")).toEqual({ user: 19, global: 99 });
    expect(await t.run((ctx) => ctx.db.query("invites").collect())).toHaveLength(1);
  });

  test("more invitations than a day's allowance at once is an error, and takes nothing", async () => {
    const t = makeTest();
    const error = await errorOf(as(t, "alice").mutation(api.invites.send, { emails: emails("a", 21) }));
    expect(isInvalidRateLimitError(error) && error.data.field).toBe("count");
    expect(await left(t, "alice")).toEqual({ user: 20, global: 100 });
  });

  test("only signed-in users may invite", async () => {
    const t = makeTest();
    const error = await errorOf(t.mutation(api.invites.send, { emails: ["a@example.com"] }));
    expect(error).toBeInstanceOf(ConvexError);
    expect(error).toMatchObject({ data: "sign in to send invitations" });
  });
});
