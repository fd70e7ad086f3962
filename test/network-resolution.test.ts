// Which override is in force with a network entry beside a key's and a tier's, pure
// (`resolveOverride` at explicit instants): a table, each row saying why; and a request's flow
// under an allow, which admits writing nothing and records its event by the network.
import { describe, expect, test } from "vitest";
import { HOUR, MINUTE } from "../src/shared/kinds/algebra.js";
import { resolveOverride } from "../src/shared/overrides/overrides.js";
import type { NetworkEntry, Override } from "../src/shared/shapes/override-validators.js";
import { requestFlow } from "../src/shared/flow/request.js";
import { answerRead, runPlan } from "../src/shared/shapes/rows.js";
import { hexOf, parseAddress } from "../src/shared/overrides/address.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const T = 1_000_000;
const named: RateLimitConfig = { kind: "token bucket", rate: 10, period: HOUR, networks: true };
const small: Override = { config: { kind: "token bucket", rate: 1, period: HOUR } };
const big: Override = { config: { kind: "token bucket", rate: 100, period: HOUR } };
const blocked = (until: number): Override => ({ blockedUntil: until });
const net = (override: NetworkEntry["override"]): NetworkEntry => ({ network: "203.0.113.0/24", override });

describe("resolution with networks", () => {
  test.each([
    // [why, key, network, tier, expected]
    ["the network's config beats the tier's", undefined, net(small), big, { by: "network", network: "203.0.113.0/24", rate: 1 }],
    ["the key's config beats the network's", big, net(small), undefined, { by: "key", rate: 100 }],
    ["the key's config beats the network's block", big, net(blocked(T + HOUR)), undefined, { by: "key", rate: 100 }],
    ["an allow exempts, whatever the tier says", undefined, net({ allow: true }), blocked(T + HOUR), { by: "network", allow: true, network: "203.0.113.0/24" }],
    ["a key's block beats the network's allow", blocked(T + MINUTE), net({ allow: true }), undefined, { by: "config", block: { until: T + MINUTE, by: "key" } }],
    ["a network's block lasts over a shorter tier block", undefined, net(blocked(T + HOUR)), blocked(T + MINUTE), { by: "config", block: { until: T + HOUR, by: "network" }, network: "203.0.113.0/24" }],
    ["a lifted network block lets the tier decide", undefined, net(blocked(T)), small, { by: "tier", rate: 1 }],
    ["a network's block over a tier's config: counted under the tier's", undefined, net(blocked(T + HOUR)), small, { by: "tier", rate: 1, block: { until: T + HOUR, by: "network" }, network: "203.0.113.0/24" }],
  ] as const)("%s", (_, key, network, tier, expected) => {
    const { config, ...rest } = resolveOverride(named, tier, key, T, network);
    const { rate, ...shape } = expected as { rate?: number };
    expect(rest).toEqual(shape);
    if (rate !== undefined) expect(config.rate).toBe(rate);
    // An override keeps the named config's `networks`, as it keeps its shards.
    expect(config.networks).toBe(true);
  });
});

describe("a request under an allow", () => {
  test("admits past the limit, writing nothing, its event by the network", () => {
    const config: RateLimitConfig = { ...named, metrics: true, rate: 1, lockout: HOUR };
    const networks = [{ start: hexOf(parseAddress("203.0.113.0", "ip").value), end: hexOf(parseAddress("203.0.113.255", "ip").value), network: "203.0.113.0/24", override: { allow: true as const } }];
    const out = runPlan(requestFlow<number>({ name: "n", key: "k", config, count: 1, ip: "203.0.113.9" }, T, () => 0), (q) => answerRead({ rows: [], pending: [], networks }, q));
    expect(out.result).toEqual({ ok: true });
    expect(out.ops).toEqual([]);
    expect(out.event).toEqual({ outcome: "admitted", count: 1, by: "network" });
    // Outside the network, the same request is decided by the limit, and takes its token.
    const outside = runPlan(requestFlow<number>({ name: "n", key: "k", config, count: 1, ip: "198.51.100.1" }, T, () => 0), (q) => answerRead({ rows: [], pending: [], networks }, q));
    expect(outside.ops.length).toBeGreaterThan(0);
    expect(outside.event).toEqual({ outcome: "admitted", count: 1 });
  });
});
