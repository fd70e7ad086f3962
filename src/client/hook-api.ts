// The functions `useRateLimit` needs, as `RateLimiter.hookAPI` makes them: a public query that
// reports a limit's state for the key the server chooses, and a mutation returning the server's
// clock.
import { mutationGeneric, queryGeneric, type GenericDataModel, type GenericQueryCtx } from "convex/server";
import { v } from "convex/values";
import { invalid } from "../shared/validation/validate.js";
import { hookQueryArgs, type HookQueryArgs, type RateLimitConfig } from "../shared/shapes/validators.js";
import { getValueReturnsWithDetails, type GetValueReturnsWithDetails } from "../shared/shapes/value-validators.js";
import { hookLeaseValue, type ConcurrencyConfig, type HookLeaseValue } from "../shared/shapes/concurrency-validators.js";
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
        refuseName(name, args, opts);
        if (!allow && args.config !== undefined) {
          throw invalid("config", "(object)", "clients may not send a config; see hookAPI's allowClientConfig");
        }
        const key = await serverKey(ctx as GenericQueryCtx<DataModel>, args, opts);
        const tier = typeof opts?.tier === "function" ? await opts.tier(ctx as GenericQueryCtx<DataModel>, key) : opts?.tier;
        const sampleShards = args.sampleShards ?? opts?.sampleShards ?? serverConfig.shards;
        const result = await ctx.runQuery(component.lib.getValue, {
          name: allow ? (args.name ?? name) : name,
          config: allow ? (args.config ?? serverConfig) : serverConfig,
          ...(key === undefined ? {} : { key }),
          ...(tier === undefined ? {} : { tier }),
          ...(sampleShards === undefined ? {} : { sampleShards }),
          details: true,
        });
        // The heat report is for the server's operators, not for every client of this public query.
        const { heat: _heat, ...shown } = result;
        return shown as GetValueReturnsWithDetails;
      },
    }),
    getServerTime: serverTime(),
  };
}

/**
 * leaseHookAPI makes the same two functions for concurrency limit `name`: `getRateLimit` returns
 * its `getValue` for the key the server chooses, with every unexpired lease's expiry (UTC ms,
 * earliest first) and the config, from which `useRateLimit` predicts when a slot frees. A client
 * may choose another name only with `allowClientConfig`, and never a config (it would be a rate
 * limit's); `sampleShards` is refused (a concurrency limit has no shards).
 */
export function leaseHookAPI<DataModel extends GenericDataModel>(
  leases: NonNullable<InstalledComponent["leases"]>,
  name: string,
  config: ConcurrencyConfig,
  opts: HookOptions<DataModel> | undefined,
) {
  return {
    getRateLimit: queryGeneric({
      args: hookQueryArgs,
      returns: hookLeaseValue,
      handler: async (ctx, args): Promise<HookLeaseValue> => {
        refuseName(name, args, opts);
        if (args.config !== undefined) throw invalid("config", "(object)", `clients may not send a config for concurrency limit "${name}"`);
        if (args.sampleShards !== undefined) throw invalid("sampleShards", args.sampleShards, "a concurrency limit has no shards");
        const key = await serverKey(ctx as GenericQueryCtx<DataModel>, args, opts);
        const value = await ctx.runQuery(leases.getValue, {
          name: (opts?.allowClientConfig ?? false) ? (args.name ?? name) : name,
          config,
          ...(key === undefined ? {} : { key }),
          expiries: true,
        });
        return { ...value, expiries: value.expiries ?? [], config };
      },
    }),
    getServerTime: serverTime(),
  };
}

/** Refuses a client's `name` other than `name`, unless `allowClientConfig`. */
function refuseName(name: string, args: HookQueryArgs, opts: { allowClientConfig?: boolean } | undefined): void {
  if (!(opts?.allowClientConfig ?? false) && args.name !== undefined && args.name !== name) {
    throw invalid("name", args.name, "clients may not choose the limit; see hookAPI's allowClientConfig");
  }
}

/**
 * The key the server chooses from what the client sent: `opts.key`'s function of it, or the
 * fixed key (a client's other key is refused).
 */
async function serverKey<DataModel extends GenericDataModel>(
  ctx: GenericQueryCtx<DataModel>,
  args: HookQueryArgs,
  opts: HookOptions<DataModel> | undefined,
): Promise<string | undefined> {
  const keyOption = opts?.key;
  if (typeof keyOption === "function") return await keyOption(ctx, args.key);
  if (args.key !== undefined && args.key !== keyOption) {
    throw invalid("key", args.key, "clients may not choose the key; give hookAPI a key function");
  }
  return keyOption;
}

/** The public mutation returning the server's `Date.now()` (ms), for the hook's clock offset. */
function serverTime() {
  return mutationGeneric({
    args: {},
    returns: v.number(),
    handler: async () => Date.now(),
  });
}

/** What `hookAPI` makes: for a concurrency limit (`Lease` true), or for a rate limit. */
export type HookAPIOf<DataModel extends GenericDataModel, Lease extends boolean> = Lease extends true
  ? ReturnType<typeof leaseHookAPI<DataModel>>
  : ReturnType<typeof hookAPI<DataModel>>;
