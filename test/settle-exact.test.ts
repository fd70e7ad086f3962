// settle over an exact sliding window's pending takes (src/shared/flow/settle.ts), pure with explicit instants: the log of takes survives settling, so each token comes back exactly a window after its own take.
import { expect, test } from "vitest";
import { evaluate } from "../src/shared/kinds/algebra.js";
import { resolvePhase, shardParams } from "../src/shared/shards/layout.js";
import { settle } from "../src/shared/flow/settle.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const T0 = 1_000_000;
const MINUTE = 60_000;
const exact: RateLimitConfig = { kind: "sliding window", rate: 3, period: MINUTE, applyUpdates: "asynchronously" };
const phaseOf = (c: RateLimitConfig) => resolvePhase(c, "n", undefined);

test("two takes pending (T0 and T0 + 10), settled at T0 + 20: 1 left; the first token back at T0 + 1 min, the second 10 ms later, not before", () => {
  const [state] = settle([], [{ shard: 0, count: 1, ts: T0, config: exact }, { shard: 0, count: 1, ts: T0 + 10 }], exact, phaseOf, T0 + 20);
  const p = shardParams(exact, phaseOf(exact), 0);
  const at = (t: number) => evaluate(state!, p, t).value;
  expect([at(T0 + 20), at(T0 + MINUTE - 1), at(T0 + MINUTE), at(T0 + MINUTE + 9), at(T0 + MINUTE + 10)]).toEqual([1, 1, 2, 2, 3]);
});
