// Limits as data: an override of one key's or one tier's limit, stored by the component and
// changed at runtime, and which config is in force for a request. Pure: the clock comes in as an
// argument. See docs/reference.md ("Overrides").
import { hexOf, parseAddress } from "./address.js";
import type { KeyFlow, KeyRead, RowQuery } from "../shapes/rows.js";
import { invalid } from "../validation/validate.js";
import { math } from "../core/math.js";
import type { DecidedBy, RateLimitConfig } from "../shapes/validators.js";
import type { NetworkEntry, Override, OverrideEntry, OverrideScope, OverrideTarget } from "../shapes/override-validators.js";

/** The config fields an override never changes: the named config's layout and behaviour. */
export const LAYOUT_FIELDS = ["shards", "applyUpdates", "dryRun", "metrics", "networks"] as const;

/** The scope and stored target string of an override target. */
export function scopeOf(target: OverrideTarget): { scope: OverrideScope; target?: string } {
  if ("tier" in target) return { scope: "tier", target: target.tier };
  if ("network" in target) return { scope: "network", target: target.network };
  return target.key === undefined ? { scope: "key" } : { scope: "key", target: target.key };
}

/**
 * What is in force for a request: the config its tokens are counted under, which level set it,
 * a block, if one is in force (`until`, UTC ms, and which level set it), whether a network's
 * `{ allow: true }` exempts it (`allow`), and the network entry that applied, if one did.
 */
export type InForce = {
  config: RateLimitConfig;
  by: DecidedBy;
  block?: { until: number; by: Exclude<DecidedBy, "config"> };
  allow?: true;
  network?: string;
};

/**
 * mergeOverride returns the config an override's `config` puts in force under `named`: the
 * override's terms (kind, rate, period, capacity, maxReserved, start, exact, lockout) with the
 * named config's layout and behaviour ({@link LAYOUT_FIELDS}), so an override never moves a key's
 * rows to another shard count or mode, and follows the named config when it changes.
 */
export function mergeOverride(named: RateLimitConfig, config: RateLimitConfig): RateLimitConfig {
  const merged: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(config)) {
    if (value !== undefined && !(LAYOUT_FIELDS as readonly string[]).includes(field)) merged[field] = value;
  }
  for (const field of LAYOUT_FIELDS) if (named[field] !== undefined) merged[field] = named[field];
  return merged as RateLimitConfig;
}

/**
 * resolveOverride says what is in force at `now` for a request of a limit configured as `named`,
 * given the override of its key, of the network entry holding its address (the longest prefix)
 * and of its tier (any may be absent). The most specific level that has an override in force
 * decides: the key's, then the network's, then the tier's, then the named config. A block is in
 * force until its instant, then ignored (the next level decides); under a block the tokens are
 * still counted under the next level's config, so they are where they would have been once it
 * lifts. A block over another lasts until the later of the two (once one lifts, the next
 * decides), so a refusal's `retryAfter` runs to when the request can pass. A network's
 * `{ allow: true }` exempts the request, unless a key's block is in force over it.
 */
export function resolveOverride(
  named: RateLimitConfig,
  tier: Override | undefined,
  key: Override | undefined,
  now: number,
  network?: NetworkEntry,
): InForce {
  // The hot path: no override at any level.
  if (tier === undefined && key === undefined && network === undefined) return { config: named, by: "config" };
  const levels: [Exclude<DecidedBy, "config">, OverrideEntry | undefined][] = [
    ["key", key],
    ["network", network?.override],
    ["tier", tier],
  ];
  let block: InForce["block"];
  const withNetwork = (inForce: InForce): InForce => {
    const applied = inForce.by === "network" || inForce.block?.by === "network";
    return applied && network !== undefined ? { ...inForce, network: network.network } : inForce;
  };
  for (const [by, override] of levels) {
    if (override === undefined) continue;
    if ("allow" in override) {
      if (block) continue;
      return withNetwork({ config: named, by, allow: true });
    }
    if ("config" in override) {
      const config = mergeOverride(named, override.config);
      return withNetwork(block ? { config, by, block } : { config, by });
    }
    // Blocks in force now, one over another, lift together: when the key's lifts, the next decides.
    // Ending at the same instant, the key's stands (`>=`): the key outranks what lies under it.
    if (now < override.blockedUntil && !(block && block.until >= override.blockedUntil)) block = { until: override.blockedUntil, by };
  }
  return withNetwork(block ? { config: named, by: "config", block } : { config: named, by: "config" });
}

/**
 * blockedWait returns the wait (whole ms) of a request at `now` (ms) while a block or lockout
 * lasts until `until` (UTC ms): refused until the later of its end and `tokens`, the wait the
 * request's tokens need (undefined when they are there now), since once the block lifts the
 * tokens decide. Undefined when no block is in force at `now` (the tokens decide alone). The
 * server's verdict (`requestFlow`) and `useRateLimit`'s prediction both decide with it.
 */
export function blockedWait(until: number, now: number, tokens: number | undefined): number | undefined {
  if (!(until > now)) return undefined;
  const wait = math.ceil(until - now);
  return tokens === undefined ? wait : math.max(wait, tokens);
}

/** The override a read's rows carry (every row of a key carries the same), if any. */
function carriedOverride<Id>(read: KeyRead<Id>): Override | undefined {
  let found: Override | undefined;
  for (const row of read.rows) {
    if (row.o === undefined) continue;
    // Every row found, not only the first: rows carrying different overrides are corrupt.
    if (found !== undefined && row.o !== found && !sameOverride(row.o, found)) throw corrupt(row.o);
    found = row.o;
  }
  return found;
}

/** The error for a key whose rows carry different overrides (`o`): corrupt state, never decided on. */
function corrupt(o: Override | undefined) {
  return invalid("override", JSON.stringify(o), "the key's rows carry different overrides; set the key's override again to repair them");
}

/** Whether two overrides are the same (both absent, or equal field by field). */
export function sameOverride(a: Override | undefined, b: Override | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** `value` with its objects' keys sorted, for comparing overrides whatever their field order. */
function canonical(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, x]) => [k, canonical(x)]),
  );
}

/** The address a request is matched by, as the network intervals store it (an `InvalidRateLimit` error naming `ip` if malformed). */
export function addressHex(ip: string): string {
  return hexOf(parseAddress(ip, "ip").value);
}

/**
 * inForce runs a flow over one key under what is in force for it (see {@link resolveOverride}).
 * It reads the tier's override first, only when the request names a tier (one indexed read), then
 * the network entry holding the request's address, only for a limit with `networks: true` and a
 * request with an address (one indexed read, whatever the list's size), and assumes the key has no override of its own; a key's override is carried on every one of its
 * rows, so the first row the flow reads tells. When a row carries one, the flow is run again under
 * it: reads already made are answered from memory (none is made twice) and the random draws are
 * replayed, so it reads the same shards. `make` builds the flow for a resolution and the key's
 * own override.
 */
export function* inForce<Id, R>(
  at: { config: RateLimitConfig; tier?: string | undefined; ip?: string | undefined },
  now: number,
  random: () => number,
  make: (resolved: InForce, keyOverride: Override | undefined, random: () => number) => KeyFlow<Id, R>,
): KeyFlow<Id, R> {
  // A malformed address is bad input whether or not the limit reads its network entries.
  const address = at.ip === undefined ? undefined : addressHex(at.ip);
  const tier = at.tier === undefined ? undefined : (yield { read: "tier", tier: at.tier }).override;
  // Only a limit that opted in reads its network entries, and only for a request with an address.
  const network = at.config.networks === true && address !== undefined ? (yield { read: "network", address }).entry : undefined;
  const draws: number[] = [];
  // The reads made so far, in order; looked up only on a run again (off the hot path).
  const made: [RowQuery, KeyRead<Id>][] = [];
  let answered: Map<string, KeyRead<Id>> | undefined;
  let own: Override | undefined;
  for (;;) {
    let drawn = 0;
    const replay = () => {
      if (drawn === draws.length) draws.push(random());
      return draws[drawn++]!;
    };
    const flow = make(resolveOverride(at.config, tier, own, now, network), own, replay);
    let step = flow.next();
    let found: Override | undefined;
    while (!step.done) {
      let read = answered?.get(JSON.stringify(step.value));
      if (read === undefined) {
        read = yield step.value;
        made.push([step.value, read]);
      }
      found = carriedOverride(read);
      if (found !== undefined && !sameOverride(found, own)) break;
      step = flow.next(read);
    }
    if (step.done) return step.value;
    // A key's rows carry one override, all the same: a second one is corrupt state, never decided on.
    if (own !== undefined) throw corrupt(found);
    answered = new Map(made.map(([q, r]) => [JSON.stringify(q), r]));
    own = found;
  }
}
