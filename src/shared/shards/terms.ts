// A limit's terms: what a row records of the config it was written under (kind, rate, period,
// capacity, shards, phase, and a calendar quota's calendar), their fingerprint, and reading them
// back. layout.ts carries rows over by them, and re-exports them.
import { phaseOf, type Params } from "../kinds/algebra.js";
import type { Calendar } from "../core/calendar.js";
import type { CalendarSpec } from "../shapes/calendar-validators.js";
import { math } from "../core/math.js";
import { validateConfig } from "../validation/validate.js";
import { kindOf, type RateLimitConfig } from "../shapes/validators.js";

/** The calendar a config's fixed windows follow (a calendar quota's), or undefined. */
export function calendarIn(config: RateLimitConfig): CalendarSpec | undefined {
  return config.kind === "fixed window" ? config.calendar : undefined;
}

/**
 * The whole limit's terms as a row records them: kind, rate, period, capacity, shard count and,
 * for the windowed kinds, the phase. Two configs that decide alike have equal terms
 * (`maxReserved`, `applyUpdates`, `dryRun` and `metrics` don't change what a row means). A calendar
 * quota's terms add its calendar as a seventh member (and its phase is 0), so terms written before
 * calendars existed read as they did.
 */
export function termsOf(kind: Params["kind"], rate: number, period: number, capacity: number, shards: number, phase: number, cal?: Calendar): string {
  const terms: unknown[] = [kind, rate, period, capacity, shards, kind === "token bucket" || kind === "exact sliding window" ? 0 : phase];
  if (cal !== undefined) terms.push([cal.period, cal.timeZone, cal.anchor]);
  return JSON.stringify(terms);
}

/**
 * termsHash returns a 53-bit fingerprint of a limit's terms (as {@link shardParams} writes them):
 * what a row stores instead of the terms themselves, which `rateLimitTerms` keeps once per limit
 * name and fingerprint. Two 32-bit FNV-1a passes with different offsets, joined; two different
 * terms of one name share a fingerprint with odds of about 2^-53.
 */
export function termsHash(terms: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ terms.length;
  for (let i = 0; i < terms.length; i++) {
    const c = terms.charCodeAt(i);
    a = math.imul(a ^ c, 0x01000193);
    b = math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return (b >>> 11) * 2 ** 32 + (a >>> 0);
}

/**
 * configTerms returns a config's terms as rows fingerprint them (see {@link termsHash}): the kind
 * of its rows (`kindOf`), rate, period, capacity, shard count and `start`'s phase (null without
 * one; a token bucket and an exact sliding window have none), as JSON. The same for every key of a limit: a key's own phase follows from them and its
 * name and key (`resolvePhase`). `maxReserved`, `applyUpdates`, `dryRun` and `metrics` don't
 * change what a row means, so they are left out.
 */
export function configTerms(config: RateLimitConfig): string {
  const kind = kindOf(config);
  const start = kind === "token bucket" || kind === "exact sliding window" || config.start === undefined || config.start === null ? null : phaseOf(config.start, config.period);
  const terms: unknown[] = [kind, config.rate, config.period, config.capacity ?? config.rate, config.shards ?? 1, start];
  const cal = calendarIn(config);
  if (cal !== undefined) terms.push([cal.period, cal.timeZone, cal.anchor]);
  return JSON.stringify(terms);
}

/** The terms {@link configHash} fingerprinted last, field by field, and their fingerprint. */
let lastHashed:
  | { kind: Params["kind"]; rate: number; period: number; capacity: number; shards: number; start: number | null; cal: CalendarSpec | undefined; hash: number }
  | undefined;

/**
 * configHash returns the fingerprint rows written under `config` carry:
 * `termsHash(configTerms(config))`. It remembers the last terms it fingerprinted, compared field
 * by field, since a hot limit asks for the same ones on every call and building the text costs
 * more than the decision.
 */
export function configHash(config: RateLimitConfig): number {
  const capacity = config.capacity ?? config.rate;
  const shards = config.shards ?? 1;
  const kind = kindOf(config);
  const start = kind === "token bucket" || kind === "exact sliding window" ? null : (config.start ?? null);
  const cal = calendarIn(config);
  const m = lastHashed;
  if (m !== undefined && m.kind === kind && m.rate === config.rate && m.period === config.period && m.capacity === capacity && m.shards === shards && m.start === start && sameCalendar(m.cal, cal)) {
    return m.hash;
  }
  const hash = termsHash(configTerms(config));
  lastHashed = { kind, rate: config.rate, period: config.period, capacity, shards, start, cal, hash };
  return hash;
}

/** Whether two calendars (or none) place windows alike. */
export function sameCalendar(a: CalendarSpec | undefined, b: CalendarSpec | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.period === b.period && a.timeZone === b.timeZone && a.anchor === b.anchor);
}

/** The config {@link configTerms} recorded as `text`, or undefined if `text` isn't such terms. */
export function termsConfig(text: string): RateLimitConfig | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || !(parsed.length === 6 || parsed.length === 7)) return undefined;
  const [kind, rate, period, capacity, shards, start, cal] = parsed as unknown[];
  const calendar = cal === undefined ? undefined : calendarTerms(cal);
  if (cal !== undefined && (calendar === undefined || kind !== "fixed window")) return undefined;
  if (!(kind === "token bucket" || kind === "fixed window" || kind === "sliding window" || kind === "exact sliding window")) return undefined;
  if (![rate, period, capacity, shards].every((x) => typeof x === "number")) return undefined;
  if (!(start === null || typeof start === "number")) return undefined;
  const common = { rate: rate as number, period: period as number, capacity: capacity as number, shards: shards as number };
  // Terms recorded as "sliding window" are the approximate window's (the only one before `exact`).
  const config: RateLimitConfig =
    kind === "token bucket"
      ? { kind, ...common }
      : kind === "exact sliding window"
        ? { kind: "sliding window", ...common, exact: true }
        : kind === "sliding window"
          ? { kind, ...common, exact: false, ...(start === null ? {} : { start }) }
          : calendar !== undefined
            ? // A calendar quota's window has no capacity of its own (it is the rate).
              { kind, rate: common.rate, period: common.period, shards: common.shards, calendar }
            : { kind, ...common, ...(start === null ? {} : { start }) };
  try {
    validateConfig(config);
  } catch {
    return undefined;
  }
  return config;
}

/** A calendar as terms record it (`[period, timeZone, anchor]`), or undefined if it isn't one. */
export function calendarTerms(cal: unknown): CalendarSpec | undefined {
  if (!Array.isArray(cal) || cal.length !== 3) return undefined;
  const [period, timeZone, anchor] = cal as unknown[];
  if (!(period === "day" || period === "week" || period === "month") || typeof timeZone !== "string" || typeof anchor !== "number") return undefined;
  return { period, timeZone, anchor };
}
