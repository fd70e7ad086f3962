// Setting, removing and checking overrides, and resetting a key that has one: what the
// component's admin functions (src/component/overrides.ts, `lib.resetRateLimit`) write. Pure: the
// clock comes in as an argument. No request ever writes an override.
import { ConvexError } from "convex/values";
import { evaluate } from "../kinds/algebra.js";
import { configHash, resolvePhase, shardParams } from "../shards/layout.js";
import { canonicalNetwork } from "../overrides/address.js";
import { LAYOUT_FIELDS, mergeOverride, resolveOverride } from "../overrides/overrides.js";
import type { Override, OverrideEntry, OverrideTarget } from "../shapes/override-validators.js";
import type { KeyRow, RowOp } from "../shapes/rows.js";
import { invalid, validateCalendarSpec, validateNameAndKey, validateTier } from "../validation/validate.js";
import { calendarWindow, checkConfig, validateCalendarShape, validateConfigShape } from "../validation/validate-config.js";
import type { InvalidRateLimitError, RateLimitConfig } from "../shapes/validators.js";
import type { CalendarConfig } from "../shapes/calendar-validators.js";
import { calendarOf } from "../core/calendar.js";
import { carry, fieldsOf, termsOp } from "../flow/writes.js";

/** MAX_NOTE_LENGTH is the longest note an override may carry (1,000 characters). */
export const MAX_NOTE_LENGTH = 1000;

/**
 * validateOverride checks an override of limit `name` (configured as `named`) for `target` before
 * anything is written: the target's key, network or tier; a config's shape and numbers as they
 * would be in force (merged with the named config's layout, which it may not set); a block's
 * instant, a finite number of ms; `{ allow: true }` only for a network; a network only on a limit
 * with `networks: true`; the note's length. Throws an `InvalidRateLimit` `ConvexError` naming the
 * field (`override.config.rate`, `override.blockedUntil`, `override.allow`, `target.tier`,
 * `target.network`, `config.networks`, `note`).
 */
export function validateOverride(name: string, target: OverrideTarget, override: OverrideEntry, named: RateLimitConfig, note?: string): void {
  validateTarget(name, target);
  checkConfig(named);
  const network = "network" in target;
  if (network && named.networks !== true) {
    throw invalid(
      "config.networks",
      named.networks,
      `limit ${JSON.stringify(name)} has no network entries: set networks: true in its config to match requests' addresses against them (one indexed read per request), then add the entry`,
    );
  }
  const given = typeof override === "object" && override !== null ? Object.keys(override).filter((k) => (override as Record<string, unknown>)[k] !== undefined) : [];
  if (!network && given.includes("allow")) {
    throw invalid("override.allow", (override as { allow?: unknown }).allow, "only a network's entry may allow (exempt its addresses); for a key or a tier, set a config");
  }
  const forms = network ? ["config", "blockedUntil", "allow"] : ["config", "blockedUntil"];
  if (!(given.length === 1 && forms.includes(given[0]!))) {
    throw invalid(
      "override",
      JSON.stringify(override),
      `must be { config } (the config in force for the target) or { blockedUntil } (an instant, UTC ms)${network ? " or { allow: true } (never limited)" : ""}`,
    );
  }
  if ("allow" in override) {
    if (override.allow !== true) throw invalid("override.allow", override.allow, "must be true (remove the entry to stop exempting the network)");
  } else if ("config" in override) {
    under("override.", () => validateConfigShape(override.config));
    for (const field of LAYOUT_FIELDS) {
      const value = override.config[field];
      if (value !== undefined) {
        throw invalid(`override.config.${field}`, value, `an override keeps the limit's own ${field}; leave it out (it follows the named config)`);
      }
    }
    under("override.", () => checkConfig(mergeOverride(named, override.config)));
  } else if (!Number.isFinite(override.blockedUntil)) {
    throw invalid("override.blockedUntil", override.blockedUntil, "must be a finite instant (UTC ms); for a block with no end, use a far one");
  }
  if (note !== undefined && note.length > MAX_NOTE_LENGTH) throw invalid("note", note, `is ${note.length} characters; at most ${MAX_NOTE_LENGTH} are allowed`);
}

/**
 * windowOverride returns an override as the component stores it: one whose config is a calendar
 * quota's carries the fixed window it runs as (see `calendarWindow`), its calendar fields checked
 * first (an error names `override.config.timeZone`, `override.config.anchor`, …); any other
 * override as it is. The rest is checked by {@link validateOverride}.
 */
export function windowOverride<O>(override: O): O {
  if (typeof override !== "object" || override === null || !("config" in override)) return override;
  const config: unknown = override.config;
  if (!(typeof config === "object" && config !== null && "kind" in config && config.kind === "calendar")) return override;
  under("override.", () => {
    validateCalendarShape(config);
    validateCalendarSpec(calendarOf(config as CalendarConfig), "config");
  });
  return { ...override, config: calendarWindow(config as CalendarConfig) };
}

/** Checks an override's target: a key as `limit` takes it, a CIDR network, or a non-empty tier. */
export function validateTarget(name: string, target: OverrideTarget): void {
  const fields = typeof target === "object" && target !== null ? Object.keys(target).filter((k) => (target as Record<string, unknown>)[k] !== undefined) : ["?"];
  if (!(fields.length === 0 || (fields.length === 1 && (fields[0] === "key" || fields[0] === "tier" || fields[0] === "network")))) {
    throw invalid("target", JSON.stringify(target), "must be { key } (one key; {} for the limit without a key), { network } (a CIDR network) or { tier }");
  }
  // Checked here, not by Convex's validator, so the error names the field (its own names none).
  for (const field of ["key", "tier"] as const) {
    const value: unknown = (target as Record<string, unknown>)[field];
    if (value !== undefined && typeof value !== "string") throw invalid(`target.${field}`, value, "must be a string");
  }
  // A tier or network given as undefined (an unset variable) would reach Convex as {}, the limit
  // without a key: refused, so an override meant for a tier never lands on the global key.
  for (const field of ["tier", "network"] as const) {
    if (field in target && (target as Record<string, unknown>)[field] === undefined) {
      throw invalid(`target.${field}`, undefined, "must be a string; for the limit without a key, the target is {}");
    }
  }
  if ("network" in target) {
    validateNameAndKey(name, undefined);
    canonicalNetwork(target.network, "target.network");
  } else if ("tier" in target) {
    validateNameAndKey(name, undefined);
    under("target.", () => validateTier(target.tier));
  } else validateNameAndKey(name, target.key);
}

/** Runs `check`, naming the field of any `InvalidRateLimit` error it throws with `prefix`. */
function under(prefix: string, check: () => void): void {
  try {
    check();
  } catch (error) {
    const data: unknown = error instanceof ConvexError ? error.data : undefined;
    if (!isInvalid(data)) throw error;
    throw new ConvexError<InvalidRateLimitError>({ ...data, field: `${prefix}${data.field}`, message: `${prefix}${data.message}` });
  }
}

function isInvalid(data: unknown): data is InvalidRateLimitError {
  return typeof data === "object" && data !== null && "kind" in data && data.kind === "InvalidRateLimit" && "field" in data;
}

/**
 * keyOverrideOps returns the writes that give a key its own override (`override`), or take it
 * away (undefined): every row of the key gets it (`o`), leaving its state as it is, so the next
 * request carries the state over to what is then in force, the config-change rule (which never
 * grants). A key without rows gets them, full under what the override puts in force, which takes
 * the limit's `config` (without it, an `InvalidRateLimit` error names `config`); taking an
 * override away needs none.
 */
export function keyOverrideOps<Id>(
  rows: readonly KeyRow<Id>[],
  at: { name: string; key?: string | undefined; config?: RateLimitConfig | undefined },
  override: Override | undefined,
  now: number,
): RowOp<Id>[] {
  if (rows.length > 0) return rows.map((r) => (override === undefined ? { op: "override", id: r.id, shard: r.shard } : { op: "override", id: r.id, shard: r.shard, o: override }));
  if (override === undefined) return [];
  const { config } = at;
  if (config === undefined) throw invalid("config", undefined, "giving a key without rows its own override takes the limit's config, to write its rows full");
  return fullRows<Id>({ ...at, config }, override, now);
}

/**
 * resetOps returns the writes that reset a key: every row deleted, so it starts full. A key with
 * its own override keeps it: it gets full rows carrying it, which takes the limit's `config`
 * (without it, an `InvalidRateLimit` error names `config`).
 */
export function resetOps<Id>(
  rows: readonly KeyRow<Id>[],
  at: { name: string; key?: string | undefined; config?: RateLimitConfig | undefined },
  now: number,
): RowOp<Id>[] {
  const deletes: RowOp<Id>[] = rows.map((r) => ({ op: "delete", id: r.id, shard: r.shard }));
  const own = rows.find((r) => r.o !== undefined)?.o;
  if (own === undefined) return deletes;
  const { config } = at;
  if (config === undefined) {
    throw invalid("config", undefined, "resetting a key with its own override takes the limit's config, to write its rows full (RateLimiter.reset passes it)");
  }
  checkConfig(config);
  return [...deletes, ...fullRows<Id>({ ...at, config }, own, now)];
}

/** Every shard row of a key with no rows, full at `now` under what its own override puts in force, carrying it. */
function fullRows<Id>(at: { name: string; key?: string | undefined; config: RateLimitConfig }, own: Override, now: number): RowOp<Id>[] {
  const { config } = resolveOverride(at.config, undefined, own, now);
  const phase = resolvePhase(config, at.name, at.key);
  const hash = configHash(config);
  const ops: RowOp<Id>[] = [termsOp<Id>(config)];
  for (let shard = 0; shard < (config.shards ?? 1); shard++) {
    const full = evaluate(null, shardParams(config, phase, shard), now);
    ops.push({ op: "insert", shard, fields: carry(fieldsOf(full, config, hash), null, own, -Infinity, now) });
  }
  return ops;
}
