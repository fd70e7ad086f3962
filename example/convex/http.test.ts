// POST /api/echo through convex-test's t.fetch, with fake timers: status, rate-limit headers and
// bodies as a key spends its 5 requests a minute, is refused, and gets a token back 12 s later.
// Each request gets an instant of its own, set before it: a request is two transactions here,
// and a deployment's clock moves on with its commits (on a frozen clock, to the next ms).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { QUOTA_EXCEEDED_PROBLEM_TYPE } from "convex-rate-limiter";
import { API_KEY_HEADER } from "./http.js";
import { makeTest } from "./test.setup.js";

const START = Date.UTC(2025, 0, 1, 9);
/** `apiKeyRequests` from limits.ts: 5 a minute, so one token every 12 s. */
const POLICY = '"apiKeyRequests";q=5;w=60';

type Test = ReturnType<typeof makeTest>;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => {
  vi.useRealTimers();
});

/** POSTs `body` to /api/echo with `apiKey`, or without a key when it is null. */
function echo(t: Test, apiKey: string | null, body = "hi") {
  const headers: Record<string, string> = apiKey === null ? {} : { [API_KEY_HEADER]: apiKey };
  return t.fetch("/api/echo", { method: "POST", headers, body });
}

/** The rate-limit header fields of `response`, as an object. */
function rateLimitFields(response: Response) {
  return {
    policy: response.headers.get("RateLimit-Policy"),
    limit: response.headers.get("RateLimit"),
    retryAfter: response.headers.get("Retry-After"),
  };
}

describe("POST /api/echo", () => {
  test("answers with the body and the key's remaining requests", async () => {
    const t = makeTest();
    const response = await echo(t, "key-a", "hello");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/json");
    expect(await response.json()).toEqual({ echo: "hello" });
    // 4 left; the one taken refills in 12 s.
    expect(rateLimitFields(response)).toEqual({ policy: POLICY, limit: '"apiKeyRequests";r=4;t=12', retryAfter: null });
  });

  test("the sixth request in a minute gets a 429 with Retry-After and a problem body", async () => {
    const t = makeTest();
    const limits = [];
    // A request every 12 ms: 5 a minute gives back a thousandth of a token in that time.
    for (let i = 0; i < 5; i++) {
      vi.setSystemTime(START + 12 * i);
      const response = await echo(t, "key-a");
      expect(response.status).toBe(200);
      limits.push(response.headers.get("RateLimit"));
    }
    // r counts down; t is the time to refill all that was taken (12 s a token), in whole seconds
    // rounded up: 5 - 3.001 tokens take 23.988 s.
    expect(limits).toEqual([
      '"apiKeyRequests";r=4;t=12',
      '"apiKeyRequests";r=3;t=24',
      '"apiKeyRequests";r=2;t=36',
      '"apiKeyRequests";r=1;t=48',
      '"apiKeyRequests";r=0;t=60',
    ]);

    // 60 ms after the first: 0.005 of a token back, so a whole one in 11.94 s (12 in Retry-After).
    const refusedAt = START + 60;
    vi.setSystemTime(refusedAt);
    const refused = await echo(t, "key-a");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Content-Type")).toBe("application/problem+json");
    expect(rateLimitFields(refused)).toEqual({ policy: POLICY, limit: '"apiKeyRequests";r=0;t=60', retryAfter: "12" });
    expect(await refused.json()).toEqual({
      type: QUOTA_EXCEEDED_PROBLEM_TYPE,
      title: "Request cannot be satisfied as assigned quota has been exceeded",
      status: 429,
      detail: 'Rate limit "apiKeyRequests" exceeded: retry after 12 s.',
      retryAfter: 11_940,
      "violated-policies": ["apiKeyRequests"],
    });

    // Another key has its own limit.
    const other = await echo(t, "key-b");
    expect(other.status).toBe(200);
    expect(other.headers.get("RateLimit")).toBe('"apiKeyRequests";r=4;t=12');

    // A millisecond early is still refused, with a second to wait (rounded up); on time succeeds.
    vi.setSystemTime(refusedAt + 11_940 - 1);
    const early = await echo(t, "key-a");
    expect(early.status).toBe(429);
    expect(early.headers.get("Retry-After")).toBe("1");
    vi.setSystemTime(refusedAt + 11_940);
    const again = await echo(t, "key-a");
    expect(again.status).toBe(200);
    expect(again.headers.get("RateLimit")).toBe('"apiKeyRequests";r=0;t=60');
  });

  test("without an API key: 401, and no rate-limit headers", async () => {
    const t = makeTest();
    const response = await echo(t, null);
    expect(response.status).toBe(401);
    expect(response.headers.get("RateLimit")).toBeNull();
  });
});

describe("the dry-run burst limit", () => {
  test("refuses no one, and logs each request it would have refused", async () => {
    const t = makeTest();
    const logged: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((...parts: unknown[]) => {
      logged.push(parts.map(String).join(" "));
    });
    try {
      // Three requests a ms apart: the burst limit holds 2 and gives back one every 5 s (0.0002 a
      // ms), so it would refuse the third, 4,998 ms short of a token.
      for (let i = 0; i < 3; i++) {
        vi.setSystemTime(START + i);
        expect((await echo(t, "key-dry")).status).toBe(200);
      }
      const lines = logged.filter((line) => line.includes('"rateLimit.dryRun"')).map((line) => JSON.parse(line) as unknown);
      expect(lines).toEqual([{ event: "rateLimit.dryRun", name: "apiKeyBurst", key: "key-dry", count: 1, retryAfter: 4_998 }]);
    } finally {
      spy.mockRestore();
    }
  });
});
