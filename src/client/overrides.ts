// The override methods of RateLimiter (limits as data): set, read, list and remove a limit's
// override for one key or one tier, from the app's own server code. RateLimiter extends this class.
import type { PaginationOptions, PaginationResult } from "convex/server";
import type { FunctionReturnType } from "convex/server";
import type { ComponentApi } from "../component/_generated/component.js";
import type { LimitConfig } from "../shared/shapes/concurrency-validators.js";
import type { OverrideEntry, OverrideTarget } from "../shared/shapes/override-validators.js";
import { validateOverride, windowOverride } from "../shared/admin/override-writes.js";
import { validateOptionTypes } from "../shared/validation/validate-config.js";
import type { RateLimitConfig } from "../shared/shapes/validators.js";
import type { CalendarConfig } from "../shared/shapes/calendar-validators.js";
import type { NamesOf, RateLimits } from "./names.js";
import { configFor, generated } from "./resolve.js";
import type { InstalledComponent, RunMutationCtx, RunQueryCtx } from "./types.js";

/** The config fields an override leaves to the named config: its layout and behaviour. */
type LayoutField = "shards" | "applyUpdates" | "dryRun" | "metrics" | "networks";

/**
 * OverrideConfig is a config an override puts in force: any kind's config, without the fields it
 * takes from the named config (`shards`, `applyUpdates`, `dryRun`, `metrics`, `networks`); a
 * calendar quota's is a {@link CalendarOverrideConfig}.
 */
export type OverrideConfig = RateLimitConfig extends infer C ? (C extends RateLimitConfig ? Omit<C, LayoutField> : never) : never;

/**
 * CalendarOverrideConfig is a calendar quota an override puts in force: each customer's own
 * cycle (`{ kind: "calendar", rate: 1000, period: "month", anchor: 17, timeZone: "Europe/Paris" }`
 * for a customer billed on the 17th in Paris), without the fields it takes from the named config.
 */
export type CalendarOverrideConfig = Omit<CalendarConfig, LayoutField>;

/**
 * An override of a limit for one target: `{ config }`, the config in force for it instead of the
 * named one (see {@link OverrideConfig}); `{ blockedUntil }`, every request refused until that
 * instant (UTC ms; `retryAfter` runs to it), a deny-list entry or a manual lockout; or, for a
 * network only, `{ allow: true }`, an allow-list entry: its requests are never limited (admitted,
 * taking no tokens) and count as admitted in metrics.
 */
export type Override = { config: OverrideConfig | CalendarOverrideConfig } | { blockedUntil: number } | { allow: true };

/** An override as `getOverride` and `listOverrides` return it. */
export type OverrideRecord = FunctionReturnType<ComponentApi["overrides"]["list"]>["page"][number];

export type { OverrideTarget };

/**
 * OverrideMethods are `RateLimiter`'s methods for limits as data: overrides of a named limit for
 * one key, one network or one tier, set and removed at runtime without a deploy. Resolution: the
 * most specific wins, a key's own override, then its network's (the longest prefix holding the
 * address), then its tier's, then the named config; see docs/reference.md ("Overrides").
 */
export class OverrideMethods<Limits extends Record<string, LimitConfig>> {
  /**
   * @param component The installed component: `components.rateLimiter`.
   * @param limits The named limits and their configs.
   */
  constructor(
    public component: InstalledComponent,
    public limits?: Limits,
  ) {}

  /**
   * setOverride puts `override` in force for limit `name`'s `target`, replacing the one it had:
   * `{ key }` (one key; `{}` is the limit without a key), `{ network }` (every request whose
   * address is in that CIDR network, `"203.0.113.0/24"` or `"2001:db8::/32"`; the limit's config
   * must have `networks: true`) or `{ tier }` (every request that names that tier in its `tier`
   * option). `override` is `{ config }`, the config in force instead of the named one (its shards,
   * mode, dry run, metrics and networks stay the named config's), `{ blockedUntil }`, every
   * request refused until that instant (UTC ms), or, for a network, `{ allow: true }`, never
   * limited. `note` (optional, at most 1,000 characters) is kept for whoever lists the overrides.
   *
   * It changes no tokens: the key's state is carried over to the new config by its next request,
   * by the rule that a config change never grants tokens. Cost: none on requests of a limit
   * without overrides; a key's own override rides on its rows (no extra read); a tier's costs
   * requests that name a tier one indexed read; a limit with `networks: true` pays one indexed
   * read per request with an address, whatever the number of entries (setting or removing a
   * network's entry reads the limit's whole list, off the hot path). Call it from your own server code (a mutation
   * behind your admin check): a component's functions are never reachable from clients. Bad input
   * is an `InvalidRateLimit` `ConvexError` naming the field, and writes nothing.
   */
  async setOverride<Name extends NamesOf<RateLimits<Limits>>>(
    ctx: RunMutationCtx,
    name: Name,
    target: OverrideTarget,
    override: Override,
    options: { note?: string } = {},
  ): Promise<void> {
    validateOptionTypes(options);
    const config = configFor(this.limits, name, undefined);
    // A calendar quota's override is stored as the fixed window it runs as.
    const stored = windowOverride(override as OverrideEntry);
    // Checked here first, so a field Convex's validator would reject unnamed is named (`override.config.capasity`).
    validateOverride(name, target, stored, config, options.note);
    await ctx.runMutation(generated(this.component.overrides).set, {
      name,
      target,
      override: stored as never,
      config,
      ...(options.note === undefined ? {} : { note: options.note }),
    });
  }

  /** getOverride returns limit `name`'s override for `target` (with its note and when it was set, ms), or null. */
  async getOverride<Name extends NamesOf<RateLimits<Limits>>>(ctx: RunQueryCtx, name: Name, target: OverrideTarget): Promise<OverrideRecord | null> {
    return await ctx.runQuery(generated(this.component.overrides).get, { name, target });
  }

  /**
   * removeOverride takes limit `name`'s override for `target` away: the next level decides again
   * (a key falls back to its tier's override, a tier to the named config), and the key's state is
   * carried over to it without granting tokens. Returns whether there was one.
   */
  async removeOverride<Name extends NamesOf<RateLimits<Limits>>>(ctx: RunMutationCtx, name: Name, target: OverrideTarget): Promise<boolean> {
    return await ctx.runMutation(generated(this.component.overrides).remove, { name, target, config: configFor(this.limits, name, undefined) });
  }

  /**
   * listOverrides returns limit `name`'s overrides a page at a time: pass `paginationOpts`
   * (`{ numItems, cursor }`, as `usePaginatedQuery` does). Keys' overrides come first, in key
   * order, then networks', then tiers'; `scope` lists only `"key"`, `"network"` or `"tier"` ones.
   */
  async listOverrides<Name extends NamesOf<RateLimits<Limits>>>(
    ctx: RunQueryCtx,
    name: Name,
    options: { paginationOpts: PaginationOptions; scope?: "key" | "network" | "tier" },
  ): Promise<PaginationResult<OverrideRecord>> {
    return await ctx.runQuery(generated(this.component.overrides).list, {
      name,
      paginationOpts: options.paginationOpts,
      ...(options.scope === undefined ? {} : { scope: options.scope }),
    });
  }
}
