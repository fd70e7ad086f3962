// The shapes of overrides, blocks and network entries as they are set, stored and listed, as
// validators (the types are inferred from them), and the network intervals the store keeps. What
// is in force for a request is decided in overrides/overrides.ts; these are only the shapes.
import { v, type Infer } from "convex/values";
import { literals } from "convex-helpers/validators";
import { configValidator } from "./validators.js";

/**
 * An override of a limit for one target: `config`, the limit's terms for that target instead of
 * the named config's, or `blockedUntil`, every request refused until that instant (UTC ms), a deny
 * list entry or a manual lockout. An override's config takes the named config's layout and
 * behaviour: `shards`, `applyUpdates`, `dryRun` and `metrics` always come from the named config
 * (see `mergeOverride`, overrides/overrides.ts).
 */
export const overrideValidator = v.union(v.object({ config: configValidator }), v.object({ blockedUntil: v.number() }));
export type Override = Infer<typeof overrideValidator>;

/**
 * An override as set and stored for any target: an {@link Override}, or, for a network only,
 * `{ allow: true }`, which exempts the network's requests: never limited (admitted, taking no
 * tokens), and counted as admitted in metrics.
 */
export const overrideEntryValidator = v.union(...overrideValidator.members, v.object({ allow: v.literal(true) }));
export type OverrideEntry = Infer<typeof overrideEntryValidator>;

/**
 * What an override applies to: one key of the limit (`scope: "key"`), every address in a network
 * (`"network"`), or a tier (`"tier"`).
 */
export const overrideScope = literals("key", "network", "tier");
export type OverrideScope = Infer<typeof overrideScope>;

/**
 * The target of an override: `{ key }`, one key of the limit (`{}` or `{ key: undefined }` is
 * the limit without a key), `{ network }`, every request whose address is in that CIDR network
 * (`"203.0.113.0/24"`, `"2001:db8::/32"`; a limit with `networks: true`), or `{ tier }`, every
 * request that names that tier (see `rateLimitArgs.tier`).
 */
export const overrideTarget = v.union(v.object({ key: v.optional(v.string()) }), v.object({ network: v.string() }), v.object({ tier: v.string() }));
export type OverrideTarget = Infer<typeof overrideTarget>;

/** An override as `overrides.get` and `overrides.list` return it: its target, the override, its note and when it was set (ms). */
export const overrideRecord = v.object({
  target: overrideTarget,
  override: overrideEntryValidator,
  note: v.optional(v.string()),
  updatedAt: v.number(),
});

/**
 * The network entry that holds a request's address, as the store finds it: the entry's network
 * (canonical CIDR) and its override.
 */
export type NetworkEntry = { network: string; override: OverrideEntry };

/**
 * An interval of addresses (`start` to `end`, inclusive, as `hexOf` (overrides/address.ts) writes them) all held
 * most specifically by the same network entry, `network` (canonical CIDR).
 */
export type NetworkInterval = { start: string; end: string; network: string };
