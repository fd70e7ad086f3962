// Limits as data: an override of one key's or one tier's limit, stored by the component and
// changed at runtime, and which config is in force for a request. Pure: the clock comes in as an
// argument. See docs/reference.md ("Overrides").
import { v, type Infer } from "convex/values";
import { literals } from "convex-helpers/validators";
import type { KeyFlow, KeyRead, RowQuery } from "./rows.js";
import { invalid } from "./validate.js";
import { math } from "./math.js";
import { configValidator, type DecidedBy, type RateLimitConfig } from "./validators.js";

/**
 * An override of a limit for one target: `config`, the limit's terms for that target instead of
 * the named config's, or `blockedUntil`, every request refused until that instant (UTC ms), a deny
 * list entry or a manual lockout. An override's config takes the named config's layout and
 * behaviour: `shards`, `applyUpdates`, `dryRun` and `metrics` always come from the named config
 * (see {@link mergeOverride}).
 */
export const overrideValidator = v.union(v.object({ config: configValidator }), v.object({ blockedUntil: v.number() }));
export type Override = Infer<typeof overrideValidator>;

/** What an override applies to: one key of the limit (`scope: "key"`) or a tier (`scope: "tier"`). */
export const overrideScope = literals("key", "tier");
export type OverrideScope = Infer<typeof overrideScope>;

/**
 * The target of an override: `{ key }`, one key of the limit (`{}` or `{ key: undefined }` is
 * the limit without a key), or `{ tier }`, every request that names that tier (see
 * `rateLimitArgs.tier`).
 */
export const overrideTarget = v.union(v.object({ key: v.optional(v.string()) }), v.object({ tier: v.string() }));
export type OverrideTarget = Infer<typeof overrideTarget>;

/** An override as `overrides.get` and `overrides.list` return it: its target, the override, its note and when it was set (ms). */
export const overrideRecord = v.object({
  target: overrideTarget,
  override: overrideValidator,
  note: v.optional(v.string()),
  updatedAt: v.number(),
});

/** The config fields an override never changes: the named config's layout and behaviour. */
export const LAYOUT_FIELDS = ["shards", "applyUpdates", "dryRun", "metrics"] as const;

/** The scope and stored target string of an override target. */
export function scopeOf(target: OverrideTarget): { scope: OverrideScope; target?: string } {
  if ("tier" in target) return { scope: "tier", target: target.tier };
  return target.key === undefined ? { scope: "key" } : { scope: "key", target: target.key };
}

/**
 * What is in force for a request: the config its tokens are counted under, which level set it,
 * and a block, if one is in force (`until`, UTC ms, and which level set it).
 */
export type InForce = {
  config: RateLimitConfig;
  by: DecidedBy;
  block?: { until: number; by: Exclude<DecidedBy, "config"> };
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
 * given the override of its key and of its tier (either may be absent). The most specific level
 * that has an override in force decides: the key's, then the tier's, then the named config. A
 * block is in force until its instant, then ignored (the next level decides); under a block the
 * tokens are still counted under the next level's config, so they are where they would have been
 * once it lifts. A key's block over its tier's block lasts until the later of the two (once the
 * key's lifts, the tier's decides), so a refusal's `retryAfter` runs to when the request can pass.
 */
export function resolveOverride(named: RateLimitConfig, tier: Override | undefined, key: Override | undefined, now: number): InForce {
  // The hot path: no override at either level.
  if (tier === undefined && key === undefined) return { config: named, by: "config" };
  const levels: [Exclude<DecidedBy, "config">, Override | undefined][] = [
    ["key", key],
    ["tier", tier],
  ];
  let block: InForce["block"];
  for (const [by, override] of levels) {
    if (override === undefined) continue;
    if ("config" in override) {
      const config = mergeOverride(named, override.config);
      return block ? { config, by, block } : { config, by };
    }
    // Blocks in force now, one over another, lift together: when the key's lifts, the tier's decides.
    // Ending at the same instant, the key's stands (`>=`): the key outranks its tier.
    if (now < override.blockedUntil && !(block && block.until >= override.blockedUntil)) block = { until: override.blockedUntil, by };
  }
  return block ? { config: named, by: "config", block } : { config: named, by: "config" };
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

/**
 * inForce runs a flow over one key under what is in force for it (see {@link resolveOverride}).
 * It reads the tier's override first, only when the request names a tier (one indexed read), and
 * assumes the key has no override of its own; a key's override is carried on every one of its
 * rows, so the first row the flow reads tells. When a row carries one, the flow is run again under
 * it: reads already made are answered from memory (none is made twice) and the random draws are
 * replayed, so it reads the same shards. `make` builds the flow for a resolution and the key's
 * own override.
 */
export function* inForce<Id, R>(
  at: { config: RateLimitConfig; tier?: string | undefined },
  now: number,
  random: () => number,
  make: (resolved: InForce, keyOverride: Override | undefined, random: () => number) => KeyFlow<Id, R>,
): KeyFlow<Id, R> {
  const tier = at.tier === undefined ? undefined : (yield { read: "tier", tier: at.tier }).override;
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
    const flow = make(resolveOverride(at.config, tier, own, now), own, replay);
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
