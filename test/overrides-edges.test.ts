// What is in force at the edges of overrides (src/shared/overrides/overrides.ts, resolveOverride), pure with explicit instants: a key's block and a network's or tier's ending at the same instant are the key's, the most specific level.
import { expect, test } from "vitest";
import { resolveOverride } from "../src/shared/overrides/overrides.js";
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
