// The functions `useRateLimit` needs, as `RateLimiter.hookAPI` makes them: a public query that
// reports a limit's state for the key the server chooses, and a mutation returning the server's
// clock.
import { mutationGeneric, queryGeneric, type GenericDataModel, type GenericQueryCtx } from "convex/server";
import { v } from "convex/values";
import { invalid } from "../shared/validate.js";
import { getValueReturnsWithDetails, hookQueryArgs, type GetValueReturnsWithDetails, type RateLimitConfig } from "../shared/validators.js";
import type { HookOptions, InstalledComponent } from "./types.js";

/**
 * hookAPI makes `getRateLimit` (a public query: `getValue`'s result with `total`, for limit
 * `name` under `serverConfig` and the key the server chooses; see {@link HookOptions}) and
 * `getServerTime` (a public mutation returning the server's `Date.now()`, for the hook's clock
 * offset).
 */
export function hookAPI<DataModel extends GenericDataModel>(
  component: InstalledComponent,
  name: string,
  serverConfig: RateLimitConfig,
  opts: HookOptions<DataModel> | undefined,
) {
  return {
      getRateLimit: queryGeneric({
        args: hookQueryArgs,
        returns: getValueReturnsWithDetails,
        handler: async (ctx, args): Promise<GetValueReturnsWithDetails> => {
          const allow = opts?.allowClientConfig ?? false;
          if (!allow && args.name !== undefined && args.name !== name) {
            throw invalid("name", args.name, "clients may not choose the limit; see hookAPI's allowClientConfig");
          }
          if (!allow && args.config !== undefined) {
            throw invalid("config", "(object)", "clients may not send a config; see hookAPI's allowClientConfig");
          }
          const keyOption = opts?.key;
          let key: string | undefined;
          if (typeof keyOption === "function") {
            key = await keyOption(ctx as GenericQueryCtx<DataModel>, args.key);
          } else {
            if (args.key !== undefined && args.key !== keyOption) {
              throw invalid("key", args.key, "clients may not choose the key; give hookAPI a key function");
            }
            key = keyOption;
          }
          const sampleShards = args.sampleShards ?? opts?.sampleShards ?? serverConfig.shards;
          const result = await ctx.runQuery(component.lib.getValue, {
            name: allow ? (args.name ?? name) : name,
            config: allow ? (args.config ?? serverConfig) : serverConfig,
            ...(key === undefined ? {} : { key }),
            ...(sampleShards === undefined ? {} : { sampleShards }),
            details: true,
          });
          return result as GetValueReturnsWithDetails;
        },
      }),
      getServerTime: mutationGeneric({
        args: {},
        returns: v.number(),
        handler: async () => Date.now(),
      }),
  };
}
