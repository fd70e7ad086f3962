// What is in force at the edges of overrides (src/shared/overrides/overrides.ts, resolveOverride), pure with explicit instants: a key's block and a network's or tier's ending at the same instant are the key's, the most specific level; a request's address is read against network entries only on a limit with networks: true and only when it has one, and a malformed address is bad input naming ip.
import { describe, expect, test } from "vitest";
import { requestFlow } from "../src/shared/flow/request.js";
import { addressHex, resolveOverride } from "../src/shared/overrides/overrides.js";
import { answerRead, runPlan, type KeyInMemory, type RowQuery } from "../src/shared/shapes/rows.js";
import { errorData } from "./error-data.js";
import type { Override } from "../src/shared/shapes/override-validators.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const T0 = 1_000_000;
const named: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000 };
const blocked = (until: number): Override => ({ blockedUntil: until });

test.each([
  // [why, key's override, network's, tier's, the block in force at T0]
  ["a key's and its tier's block ending together: the key's", blocked(T0 + 700), undefined, blocked(T0 + 700), { until: T0 + 700, by: "key" }],
  ["a key's and its network's block ending together: the key's", blocked(T0 + 700), blocked(T0 + 700), undefined, { until: T0 + 700, by: "key" }],
  ["a network's and a tier's block ending together: the network's", undefined, blocked(T0 + 700), blocked(T0 + 700), { until: T0 + 700, by: "network" }],
] as [string, Override | undefined, Override | undefined, Override | undefined, unknown][])("%s", (_why, key, network, tier, block) => {
  const entry = network === undefined ? undefined : { network: "203.0.113.0/24", override: network };
  expect(resolveOverride(named, tier, key, T0, entry).block).toStrictEqual(block);
});

describe("a request's address and the network entries", () => {
  // 203.0.113.0/24 blocked until T0 + 500.
  const key: KeyInMemory<string> = {
    rows: [],
    pending: [],
    networks: [{ start: addressHex("203.0.113.0"), end: addressHex("203.0.113.255"), network: "203.0.113.0/24", override: blocked(T0 + 500) }],
  };
  const run = (config: RateLimitConfig, ip?: string) => {
    const reads: RowQuery[] = [];
    const out = runPlan(requestFlow<string>({ name: "n", config, ...(ip === undefined ? {} : { ip }) }, T0, () => 0), (q) => (reads.push(q), answerRead(key, q)));
    return { result: out.result, networkReads: reads.filter((q) => q.read === "network").length };
  };

  test.each([
    // [why, networks, ip, result, network reads]
    ["networks: true and an address in a blocked network: refused until the block ends", true, "203.0.113.7", { ok: false, retryAfter: 500 }, 1],
    ["an address, but a limit without networks: its entries are never read", undefined, "203.0.113.7", { ok: true }, 0],
    ["networks: true, but a request without an address (a scheduled function): nothing to read", true, undefined, { ok: true }, 0],
  ] as [string, true | undefined, string | undefined, unknown, number][])("%s", (_why, networks, ip, result, networkReads) => {
    const config: RateLimitConfig = { ...named, ...(networks ? { networks } : {}) };
    expect(run(config, ip)).toStrictEqual({ result, networkReads });
  });

  test("a malformed address is bad input naming ip, whether or not the limit reads network entries", () => {
    expect(errorData(() => run(named, "203.0.113"))).toMatchObject({ kind: "InvalidRateLimit", field: "ip", value: '"203.0.113"' });
  });
});
