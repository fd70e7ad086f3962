// HTTP header fields of a calendar quota, as a pure function of results with explicit instants: RateLimit-Policy's w is the current period's length (23, 24 or 25 hours for a day in New York; a month's own length), t runs to resetsAt, Retry-After to it; from the config or a RateLimiter naming it, or an override's config in force.
import { describe, expect, test } from "vitest";
import { calendarWindow, RateLimiter, rateLimitHeaders, type CalendarConfig, type RateLimitReturnsWithDetails } from "../src/client/index.js";
import { components } from "./setup.js";

const iso = (s: string) => Date.parse(s);
const day: CalendarConfig = { kind: "calendar", rate: 100, period: "day", timeZone: "America/New_York" };

/** A result with details of a calendar quota at `now`: `remaining` tokens, the period ending at `resetsAt`. */
function result(now: number, resetsAt: number, remaining: number, ok = true): RateLimitReturnsWithDetails & { resetsAt: number } {
  const details = { shards: [0], remaining, capacity: 100, resetAfter: remaining >= 100 ? 0 : resetsAt - now, exact: true };
  return ok ? { ok: true, details, resetsAt } : { ok: false, retryAfter: resetsAt - now, details, resetsAt };
}

describe("rateLimitHeaders for a calendar quota", () => {
  test.each([
    ["an ordinary day: 24 hours", "2026-01-15T12:00:00Z", "2026-01-16T05:00:00Z", 86_400, 61_200],
    ["March's change: 23 hours", "2026-03-08T12:00:00Z", "2026-03-09T04:00:00Z", 82_800, 57_600],
    ["November's change: 25 hours", "2026-11-01T12:00:00Z", "2026-11-02T05:00:00Z", 90_000, 61_200],
  ])("%s", (_why, now, resetsAt, w, t) => {
    const headers = rateLimitHeaders("daily", result(iso(now), iso(resetsAt), 40), day);
    expect(headers).toEqual({ "RateLimit-Policy": `"daily";q=100;w=${w}`, RateLimit: `"daily";r=40;t=${t}` });
  });

  test("refused: Retry-After and t run to resetsAt; a month's w is its own length (February 2026: 28 days)", () => {
    const month: CalendarConfig = { kind: "calendar", rate: 100, period: "month" };
    const now = iso("2026-02-10T00:00:00Z");
    const end = iso("2026-03-01T00:00:00Z");
    expect(rateLimitHeaders("monthly", result(now, end, 0, false), month)).toEqual({
      "RateLimit-Policy": `"monthly";q=100;w=${28 * 86_400}`,
      RateLimit: `"monthly";r=0;t=${(end - now) / 1000}`,
      "Retry-After": String((end - now) / 1000),
    });
  });

  test("from a RateLimiter that names it, and from an override's config in force", () => {
    const rateLimiter = new RateLimiter(components.rateLimiter, { daily: day });
    const r = result(iso("2026-03-08T12:00:00Z"), iso("2026-03-09T04:00:00Z"), 40);
    expect(rateLimitHeaders("daily", r, rateLimiter)["RateLimit-Policy"]).toBe(`"daily";q=100;w=82800`);
    // A customer's own cycle in force (the component reports it as the fixed window it runs as).
    const own = calendarWindow({ kind: "calendar", rate: 500, period: "month", anchor: 17, timeZone: "Europe/Paris" });
    const overridden = { ...r, resetsAt: iso("2026-03-16T23:00:00Z"), details: { ...r.details, capacity: 500, config: own } };
    // 17 February to 17 March in Paris: 28 days.
    expect(rateLimitHeaders("daily", overridden, rateLimiter)["RateLimit-Policy"]).toBe(`"daily";q=500;w=${28 * 86_400}`);
  });
});
