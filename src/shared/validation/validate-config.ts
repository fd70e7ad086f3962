// Checks of a config's shape (its kind, its fields, each field's type) and the types of a
// request's options. Convex's validator names no field ("Expected one of object, object,
// object"), so the client checks them first and throws the `InvalidRateLimit` error that does,
// with the right kind or field suggested for a near miss; the component checks configs again
// (`checkConfig`), since its functions' argument validator takes any kind's fields. The numbers'
// bounds are validateConfig's (./validate.ts).
import type { GenericValidator } from "convex/values";
import { invalid, namingLimit, validateCalendarSpec, validateConcurrencyConfig, validateConfig } from "./validate.js";
import { fixedWindowValidator, KINDS, slidingWindowValidator, tokenBucketValidator, type RateLimitConfig } from "../shapes/validators.js";
import { calendarValidator, type CalendarConfig } from "../shapes/calendar-validators.js";
import { calendarOf, nominalLength } from "../core/calendar.js";
import { concurrencyValidator, type ConcurrencyConfig, type LimitConfig } from "../shapes/concurrency-validators.js";
import { math } from "../core/math.js";

/** Each kind's fields and their validators, from the config validator itself. */
const FIELDS: Record<RateLimitConfig["kind"], Record<string, GenericValidator>> = {
  "token bucket": tokenBucketValidator.fields,
  "fixed window": fixedWindowValidator.fields,
  "sliding window": slidingWindowValidator.fields,
};

/**
 * LIMIT_KINDS lists every kind a limit's config may name, from the validators themselves: the rate
 * limits' ({@link KINDS}), then a concurrency limit's. Errors list these, so a kind added to a
 * validator is named in them with nothing else to edit.
 */
export const LIMIT_KINDS: readonly LimitConfig["kind"][] = [...KINDS, calendarValidator.fields.kind.value, concurrencyValidator.fields.kind.value];

/**
 * Names other rate limiters give to a field, and the field that means the same here (a token
 * bucket's burst is its capacity).
 */
const SYNONYMS: Record<string, string> = {
  burst: "capacity",
  limit: "rate",
  window: "period",
  interval: "period",
  duration: "period",
};

/**
 * validateLimits checks every config given to the `RateLimiter` constructor: its shape (see
 * {@link validateConfigShape}), then its numbers (`validateConfig`). Throws the `InvalidRateLimit`
 * `ConvexError` naming the field, with the limit's name in the message.
 */
export function validateLimits(limits: Record<string, unknown> | undefined): void {
  for (const [name, config] of Object.entries(limits ?? {})) {
    try {
      if (isConcurrencyKind(config)) {
        validateConcurrencyShape(config);
        validateConcurrencyConfig(config);
      } else if (isCalendarKind(config)) {
        validateCalendarShape(config);
        validateCalendar(config);
      } else {
        validateConfigShape(config);
        validateConfig(config);
      }
    } catch (error) {
      throw namingLimit(error, name);
    }
  }
}

function isCalendarKind(config: unknown): config is { kind: "calendar" } {
  return typeof config === "object" && config !== null && "kind" in config && config.kind === "calendar";
}

/** What a calendar quota's config may not have, and why (see `calendarValidator`). */
const NOT_CALENDAR: Record<string, string> = {
  capacity: "a calendar quota has no capacity: nothing rolls over, each period grants its rate; leave it out",
  maxReserved: "a calendar quota never reserves ahead (a reservation would spend a period that hasn't started; with reserve it takes only what is there); leave it out",
  start: "a calendar quota's periods start where the calendar says; set anchor and timeZone instead",
};

/**
 * validateCalendarShape checks a calendar quota's fields (`kind: "calendar"`), naming the field:
 * `rate` and `period` present, no field it doesn't have (`capacity`, `maxReserved` and `start`
 * refused with their reason), and each of its type (`period` one of "day", "week" or "month").
 */
export function validateCalendarShape(config: object): asserts config is CalendarConfig {
  const known: Record<string, GenericValidator> = calendarValidator.fields;
  const names = Object.keys(known).filter((f) => f !== "kind");
  for (const [field, value] of Object.entries(config)) {
    if (value === undefined || field === "kind") continue;
    const refused = NOT_CALENDAR[field];
    if (refused !== undefined) throw invalid(`config.${field}`, value, refused);
    const validator = known[field];
    if (validator === undefined) {
      const synonym = SYNONYMS[field];
      const hint = synonym !== undefined && synonym in known ? `; did you mean ${synonym}?` : suggestion(field, names, false);
      throw invalid(`config.${field}`, value, `is not a field of a calendar config (its fields are ${names.join(", ")})${hint}`);
    }
    if (field === "period" && typeof value === "number") {
      throw invalid("config.period", value, "a calendar quota's period is \"day\", \"week\" or \"month\"; for a period of ms, use a fixed window");
    }
    if (field === "timeZone" && typeof value !== "string") throw invalid("config.timeZone", value, `must be a string, not ${article(value)}`);
    const problem = mismatch(validator, value);
    if (problem !== undefined) throw invalid(`config.${field}`, value, problem);
  }
  for (const field of names) {
    if (known[field]?.isOptional === "required" && !(field in config)) {
      throw invalid(`config.${field}`, undefined, "is missing from the calendar config");
    }
  }
}

/**
 * validateCalendar checks a calendar quota's values: `timeZone` an IANA zone the runtime knows,
 * `anchor` a whole number in its period's range (a day's hour 0–23, a week's day 0–6, a month's
 * day 1–31), then the numbers it shares with every kind (`rate`, `shards`, `lockout`; see
 * `validateConfig`), as the fixed window it runs as. Throws an `InvalidRateLimit` `ConvexError`
 * naming the field.
 */
export function validateCalendar(config: CalendarConfig): void {
  validateCalendarSpec(calendarOf(config), "config");
  validateConfig(calendarWindow(config));
}

/**
 * calendarWindow returns the fixed window a calendar quota runs as: its `rate`, the period's
 * nominal length as `period` (for estimates only), and `calendar`, where its windows start (zone
 * and anchor defaulted, see `calendarOf`), with its `shards`, `applyUpdates`, `dryRun`, `metrics`
 * and `lockout`.
 */
export function calendarWindow(config: CalendarConfig): RateLimitConfig {
  const { kind: _kind, period, timeZone: _zone, anchor: _anchor, ...rest } = config;
  return { ...rest, kind: "fixed window", period: nominalLength(period), calendar: calendarOf(config) };
}

/** windowConfig returns a rate limit's config as the algebra runs it: a calendar quota's fixed window (see {@link calendarWindow}), any other as it is. */
export function windowConfig(config: RateLimitConfig | CalendarConfig): RateLimitConfig {
  return config.kind === "calendar" ? calendarWindow(config) : config;
}

function isConcurrencyKind(config: unknown): config is { kind: "concurrency" } {
  return typeof config === "object" && config !== null && "kind" in config && config.kind === "concurrency";
}

/** Names other limiters give to a concurrency limit's fields, and the field meant here. */
const CONCURRENCY_SYNONYMS: Record<string, string> = {
  max: "capacity",
  maxInFlight: "capacity",
  limit: "capacity",
  concurrency: "capacity",
  ttl: "lease",
  timeout: "lease",
  leaseMs: "lease",
  period: "lease",
};

/**
 * validateConcurrencyShape checks a concurrency config's fields (`kind: "concurrency"`): no
 * field it doesn't have, each of its type (`capacity` and `lease` required numbers, `metrics` an
 * optional boolean). `shards` is refused with its reason: a slot count split
 * over shards would refuse on one shard while another has room, and one lease per document
 * already spreads the writes.
 */
export function validateConcurrencyShape(config: object): asserts config is ConcurrencyConfig {
  const known: Record<string, GenericValidator> = concurrencyValidator.fields;
  const names = Object.keys(known).filter((f) => f !== "kind");
  for (const [field, value] of Object.entries(config)) {
    if (value === undefined || field === "kind") continue;
    if (field === "shards") {
      throw invalid(
        "config.shards",
        value,
        "a concurrency limit can't be sharded: a shard's share of the slots would refuse while another shard has one free; leave shards out",
      );
    }
    const validator = known[field];
    if (validator === undefined) {
      const synonym = CONCURRENCY_SYNONYMS[field];
      const hint = synonym !== undefined ? `; did you mean ${synonym}?` : suggestion(field, names, false);
      throw invalid(`config.${field}`, value, `is not a field of a concurrency config (its fields are ${names.join(", ")})${hint}`);
    }
    const problem = mismatch(validator, value);
    if (problem !== undefined) throw invalid(`config.${field}`, value, problem);
  }
  for (const field of names) {
    if (known[field]?.isOptional === "required" && !(field in config)) {
      throw invalid(`config.${field}`, undefined, "is missing from the concurrency config");
    }
  }
}

/**
 * validateConfigShape checks what Convex's config validator checks, naming the field: an object
 * with a `kind` that is one of {@link KINDS} (a concurrency limit's is refused as such), no fields
 * that kind doesn't have, and each field of its type. Throws an `InvalidRateLimit` `ConvexError`; a near-miss kind, field or value (a
 * different case, a hyphen, a typo, another limiter's name for it) is suggested.
 */
export function validateConfigShape(config: unknown): asserts config is RateLimitConfig {
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw invalid("config", config, "must be an object such as { kind: \"token bucket\", rate: 10, period: MINUTE }");
  }
  const fields = config as Record<string, unknown>;
  const kind = fields.kind;
  if (kind === undefined) throw invalid("config.kind", kind, `is missing: a config's kind is ${listed(LIMIT_KINDS, "or")}`);
  if (!isKind(kind)) {
    if (kind === "calendar") {
      // Sent to the component as it is: the RateLimiter runs it as a fixed window.
      throw invalid(
        "config.kind",
        kind,
        "is a calendar quota's kind, which the RateLimiter runs as a fixed window with `calendar` (see calendarWindow); name it in a RateLimiter or pass it to one",
      );
    }
    if (typeof kind === "string" && (LIMIT_KINDS as readonly string[]).includes(kind)) {
      // A concurrency limit's config where a rate limit's is needed (inline, or sent to the component).
      throw invalid(
        "config.kind",
        kind,
        `is a concurrency limit's kind, but a rate limit's config is needed here (its kind ${listed(KINDS, "or")}); a concurrency limit is named in the RateLimiter and taken with acquire`,
      );
    }
    throw invalid("config.kind", kind, `is not a kind of limit (the kinds are ${listed(LIMIT_KINDS, "and")})${suggestion(kind, LIMIT_KINDS, true)}`);
  }
  const known = FIELDS[kind];
  for (const field of Object.keys(fields)) {
    const value = fields[field];
    // Convex drops fields whose value is undefined, as if they weren't there.
    if (value === undefined || field === "kind") continue;
    const validator = known[field];
    if (validator === undefined) {
      // A fixed window's `calendar` is a calendar quota's, set by calendarWindow: not offered.
      const names = Object.keys(known).filter((f) => f !== "kind" && f !== "calendar");
      const synonym = SYNONYMS[field];
      const hint = synonym !== undefined && synonym in known ? `; did you mean ${synonym}?` : suggestion(field, names, false);
      throw invalid(`config.${field}`, value, `is not a field of a ${kind} config (its fields are ${names.join(", ")})${hint}`);
    }
    if (kind === "token bucket" && field === "start" && value !== null) {
      throw invalid("config.start", value, "a token bucket has no start (its tokens refill continuously); leave it out");
    }
    checkField(`config.${field}`, validator, value);
  }
}

/**
 * checkField checks a config field's value against its validator, naming it by `path`; an
 * object's fields (a fixed window's `calendar`, which a quota's `calendarWindow` sets and untyped
 * code can send) each by its own path, so a later check never reads a field of a non-object.
 */
function checkField(path: string, validator: GenericValidator, value: unknown): void {
  if (validator.kind !== "object") {
    const problem = mismatch(validator, value);
    if (problem !== undefined) throw invalid(path, value, problem);
    return;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid(path, value, `must be an object, not ${article(value)}`);
  const fields: Record<string, GenericValidator> = validator.fields;
  const names = Object.keys(fields);
  const given = value as Record<string, unknown>;
  for (const [field, inner] of Object.entries(given)) {
    if (inner === undefined) continue;
    const fieldValidator = fields[field];
    if (fieldValidator === undefined) throw invalid(`${path}.${field}`, inner, `is not a field of ${path} (its fields are ${names.join(", ")})${suggestion(field, names, false)}`);
    checkField(`${path}.${field}`, fieldValidator, inner);
  }
  for (const field of names) {
    if (fields[field]!.isOptional === "required" && given[field] === undefined) throw invalid(`${path}.${field}`, undefined, `is missing from ${path}`);
  }
}

/**
 * checkConfig checks a config a component function was given: its shape (each kind's own fields,
 * {@link validateConfigShape}; the functions' argument validator takes any kind's fields, see
 * `configArgValidator`), then its numbers (`validateConfig`). Throws an `InvalidRateLimit`
 * `ConvexError` naming the field.
 */
export function checkConfig(config: RateLimitConfig): void {
  validateConfigShape(config);
  validateConfig(config);
}

/**
 * The types of the options a call takes, where Convex's validator would be the first to check
 * them. A `key` may also be a function: `hookAPI`'s, which the server calls.
 */
const OPTION_TYPES: Record<string, readonly string[]> = {
  key: ["string", "function"],
  count: ["number"],
  reserve: ["boolean"],
  throws: ["boolean"],
  details: ["boolean"],
  exact: ["boolean"],
  sampleShards: ["number"],
  tier: ["string", "function"],
  ip: ["string"],
  note: ["string"],
  topKeys: ["number"],
  from: ["number"],
  to: ["number"],
  allowClientConfig: ["boolean"],
  maxWait: ["number"],
  wait: ["boolean"],
};

/**
 * validateOptionTypes checks the types of a call's options (`count` a number, `key` a string, …)
 * and, when there is one, the shape of its inline `config`, before Convex's validators see them.
 * Throws an `InvalidRateLimit` `ConvexError` naming the option: `count = "2": must be a number,
 * not a string`.
 */
export function validateOptionTypes(options: object | undefined): void {
  if (options === undefined) return;
  for (const [option, value] of Object.entries(options)) {
    const types = OPTION_TYPES[option];
    if (types === undefined || value === undefined) continue;
    const type = typeof value;
    if (!types.includes(type)) throw invalid(option, value, `must be a ${types[0]}, not ${article(value)}`);
  }
  if ("config" in options && options.config !== undefined) {
    if (isCalendarKind(options.config)) validateCalendarShape(options.config);
    else validateConfigShape(options.config);
  }
}

/** What is wrong with `value` for `validator` (a config field's), or undefined when nothing is. */
function mismatch(validator: GenericValidator, value: unknown): string | undefined {
  switch (validator.kind) {
    case "float64":
      return typeof value === "number" ? undefined : `must be a number, not ${article(value)}`;
    case "boolean":
      return typeof value === "boolean" ? undefined : `must be true or false, not ${article(value)}`;
    case "string":
      return typeof value === "string" ? undefined : `must be a string, not ${article(value)}`;
    case "null":
      return value === null ? undefined : "must be left out";
    case "literal":
    case "union": {
      const allowed = literalsOf(validator);
      if (allowed.includes(value)) return undefined;
      const strings = allowed.filter((a): a is string => typeof a === "string");
      return `must be ${listed(strings, "or")}${suggestion(value, strings, true)}`;
    }
    default:
      return undefined;
  }
}

/** The literal values a literal validator, or a union of them, accepts. */
function literalsOf(validator: GenericValidator): unknown[] {
  if (validator.kind === "literal") return [validator.value];
  if (validator.kind === "union") return validator.members.flatMap(literalsOf);
  return [];
}

function isKind(kind: unknown): kind is RateLimitConfig["kind"] {
  return (KINDS as readonly unknown[]).includes(kind);
}

/** `"a", "b" or "c"`. */
function listed(values: readonly string[], conjunction: "and" | "or"): string {
  const quoted = values.map((v) => JSON.stringify(v));
  return quoted.length <= 1 ? quoted.join("") : `${quoted.slice(0, -1).join(", ")} ${conjunction} ${quoted[quoted.length - 1]}`;
}

/** `a string`, `an object`, `null`: what a value is, for a message. */
function article(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * `; did you mean "x"?` (`x` unquoted for a field's name) when `value` is a near miss of exactly
 * one of `options`: the same words in another case or spelling (`token-bucket`, `tokenBucket`,
 * `Token Bucket`), one of the words alone (`sliding`), or at most two letters off (`token
 * bukcet`, `capcity`). Otherwise "".
 */
function suggestion(value: unknown, options: readonly string[], quoted: boolean): string {
  if (typeof value !== "string" || value === "") return "";
  const v = words(value);
  const near = (o: string) => {
    const w = words(o);
    // The same words up to spaces (so equal ones too), or one word of several (a one-word option's only word is itself).
    if (v.replace(/ /g, "") === w.replace(/ /g, "")) return true;
    if (w.split(" ").includes(v)) return true;
    return v.length >= 4 && distance(v, w) <= 2;
  };
  const found = options.filter(near);
  const [only] = found;
  if (found.length !== 1 || only === undefined) return "";
  return `; did you mean ${quoted ? JSON.stringify(only) : only}?`;
}

/** A name as lowercase words: `tokenBucket`, `token-bucket` and `Token_Bucket` are `token bucket`. */
function words(s: string): string {
  return s
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .join(" ");
}

/** The Levenshtein distance between `a` and `b`. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
