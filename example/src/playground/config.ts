// The Playground's form: what the inputs hold (strings, so a field can be blank or half-typed)
// and the config and request they describe, which the component itself checks.
import { KINDS, type RateLimitConfig } from "convex-rate-limiter";

export { KINDS };
/** A kind of limit, as the config's `kind` spells it. */
export type Kind = RateLimitConfig["kind"];

/** The form's fields as typed. Optional numbers are blank when unset. */
export type Form = {
  kind: Kind;
  /** Tokens per period. */
  rate: string;
  /** The period, in seconds (the config takes ms). */
  periodSeconds: string;
  /** Blank: the same as `rate`. */
  capacity: string;
  /** Blank: unlimited. Only used with `reserve`. */
  maxReserved: string;
  shards: string;
  /** Tokens each request takes. */
  count: string;
  reserve: boolean;
};

/** The form a first visit shows: 5 per 10 s with bursts of 5, one token a request. */
export const DEFAULT_FORM: Form = {
  kind: "token bucket",
  rate: "5",
  periodSeconds: "10",
  capacity: "",
  maxReserved: "",
  shards: "1",
  count: "1",
  reserve: false,
};

/** The request a form describes: numbers as typed (blank required fields are NaN), unchecked. */
export type FormRequest = { config: RateLimitConfig; count: number; reserve: boolean };

/** Parses an optional number field: blank is `undefined`, anything else must be a number. */
function optionalNumber(text: string): number | undefined {
  const trimmed = text.trim();
  return trimmed === "" ? undefined : Number(trimmed);
}

/** A required number field: blank is NaN, which validation then names. */
function requiredNumber(text: string): number {
  return optionalNumber(text) ?? Number.NaN;
}

/** The form fields only some kinds have: the others neither show nor send them. */
export type KindField = "capacity" | "maxReserved" | "reserve";

/**
 * applies says whether `field` means something for `kind`. A sliding window has no reservations
 * (`maxReserved`, `reserve`) and holds exactly its rate (its `capacity` is the rate): the
 * component refuses them, naming the field, so the form shows capacity locked to the rate, hides
 * the rest, and sends none of them.
 */
export function applies(kind: Kind, field: KindField): boolean {
  return KIND_FIELDS[kind].includes(field);
}

const KIND_FIELDS: Readonly<Record<Kind, readonly KindField[]>> = {
  "token bucket": ["capacity", "maxReserved", "reserve"],
  "fixed window": ["capacity", "maxReserved", "reserve"],
  "sliding window": [],
};

/** Builds the config a form describes; numbers are not checked here. */
export function configOf(form: Form): RateLimitConfig {
  const capacity = applies(form.kind, "capacity") ? optionalNumber(form.capacity) : undefined;
  const maxReserved = applies(form.kind, "maxReserved") ? optionalNumber(form.maxReserved) : undefined;
  const shards = optionalNumber(form.shards);
  const common = {
    rate: requiredNumber(form.rate),
    period: requiredNumber(form.periodSeconds) * 1000,
    ...(capacity === undefined ? {} : { capacity }),
    ...(maxReserved === undefined ? {} : { maxReserved }),
    ...(shards === undefined ? {} : { shards }),
  };
  return form.kind === "token bucket" ? { kind: "token bucket", ...common } : { kind: form.kind, ...common };
}

/**
 * requestOf reads the request a form describes, without checking it: the component checks it
 * (see useValidation.ts), so the form refuses exactly what a deployment would.
 */
export function requestOf(form: Form): FormRequest {
  return { config: configOf(form), count: requiredNumber(form.count), reserve: applies(form.kind, "reserve") && form.reserve };
}

/**
 * FIELD_OF names the form field an `InvalidRateLimit` error's `field` is about; errors about
 * other fields (the limit's name or key) belong to no input.
 */
export const FIELD_OF: Readonly<Record<string, keyof Form>> = {
  "config.rate": "rate",
  "config.period": "periodSeconds",
  "config.capacity": "capacity",
  "config.maxReserved": "maxReserved",
  "config.shards": "shards",
  count: "count",
  reserve: "reserve",
};

/** The config with its `shards` dropped: the limit as one whole row. */
export function wholeConfig(config: RateLimitConfig): RateLimitConfig {
  const common = {
    rate: config.rate,
    period: config.period,
    ...(config.capacity === undefined ? {} : { capacity: config.capacity }),
    ...(config.maxReserved === undefined ? {} : { maxReserved: config.maxReserved }),
  };
  return config.kind === "token bucket"
    ? { kind: "token bucket", ...common }
    : { kind: config.kind, ...common, ...(config.start === undefined ? {} : { start: config.start }) };
}

/** The most tokens the whole limit holds: `capacity`, defaulting to `rate`. */
export function capacityOf(config: RateLimitConfig): number {
  return config.capacity ?? config.rate;
}

/**
 * Describes a limit in words: "Bursts of up to 3, then one every 6 s.", "100 per window of
 * 3600 s, up to 100 saved." or "At most 10 in any 60 s."
 */
export function describePolicy(config: RateLimitConfig): string {
  const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;
  switch (config.kind) {
    case "token bucket":
      return `Bursts of up to ${capacityOf(config)}, then one every ${seconds(config.period / config.rate)}.`;
    case "fixed window":
      return `${config.rate} per window of ${seconds(config.period)}, up to ${capacityOf(config)} saved.`;
    case "sliding window":
      return `At most ${config.rate} in any ${seconds(config.period)}.`;
    default: {
      const never: never = config;
      throw new Error(`unknown kind in ${JSON.stringify(never)}`);
    }
  }
}
