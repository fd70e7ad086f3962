// Compile-time guarantees of limitAll and checkAll, checked by tsc under `vitest --typecheck`: a request names a limit given to the constructor, or carries an inline config.
import type { GenericMutationCtx, GenericDataModel, GenericQueryCtx } from "convex/server";
import { describe, expectTypeOf, test } from "vitest";
import { MINUTE, RateLimiter, type LimitAllResult } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";

declare const mutationCtx: GenericMutationCtx<GenericDataModel>;
declare const queryCtx: GenericQueryCtx<GenericDataModel>;
declare const component: ComponentApi;

const rl = new RateLimiter(component, {
  perUser: { kind: "token bucket", rate: 60, period: MINUTE, capacity: 2 },
  perTeam: { kind: "fixed window", rate: 3, period: MINUTE, start: 0 },
});

describe("limitAll's requests name a known limit or carry a config", () => {
  test("named limits, and an unknown name with an inline config, compile", () => {
    expectTypeOf(rl.limitAll(mutationCtx, [{ name: "perUser", key: "u" }, { name: "perTeam" }])).resolves.toEqualTypeOf<LimitAllResult>();
    expectTypeOf(rl.limitAll(mutationCtx, [{ name: "perUsr", config: { kind: "token bucket", rate: 1, period: MINUTE } }])).resolves.toEqualTypeOf<LimitAllResult>();
  });

  test("a name the RateLimiter doesn't know needs a config", () => {
    // @ts-expect-error "perUsr" is not a named limit and has no config
    void rl.limitAll(mutationCtx, [{ name: "perUsr" }]);
    // @ts-expect-error the same in checkAll
    void rl.checkAll(queryCtx, [{ name: "perUsr" }]);
  });
});
