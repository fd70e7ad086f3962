// The Playground's form: what the inputs hold (strings, so a field can be blank or half-typed)
// and the config and request they describe, which the component itself checks.
import { KINDS, type InvalidRateLimitError, type RateLimitConfig } from "convex-rate-limiter";

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
  /** A sliding window's `exact` (checked: the default, a log per row; unchecked: the approximation). */
  exact: boolean;
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
  exact: true,
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
export type KindField = "capacity" | "maxReserved" | "reserve" | "exact";

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
  "sliding window": ["exact"],
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
  if (form.kind === "sliding window") return { kind: "sliding window", ...common, ...(form.exact ? {} : { exact: false }) };
  return form.kind === "token bucket" ? { kind: "token bucket", ...common } : { kind: form.kind, ...common };
}

/**
 * requestOf reads the request a form describes, without checking it: the component checks it
 * (see useValidation.ts), so the form refuses exactly what a deployment would.
 */
export function requestOf(form: Form): FormRequest {
  return { config: configOf(form), count: requiredNumber(form.count), reserve: applies(form.kind, "reserve") && form.reserve };
}

/** The number fields, as the form labels them, and whether each must be filled in. */
const NUMBER_FIELDS: readonly { field: keyof Form; name: string; label: string; required: boolean }[] = [
  { field: "rate", name: "config.rate", label: "Rate", required: true },
  { field: "periodSeconds", name: "config.period", label: "Period", required: true },
  { field: "capacity", name: "config.capacity", label: "Capacity", required: false },
  { field: "maxReserved", name: "config.maxReserved", label: "Max reserved", required: false },
  { field: "shards", name: "config.shards", label: "Shards", required: false },
  { field: "count", name: "count", label: "Count", required: true },
];

/**
 * formError is what the form itself refuses before the component sees the request: a required
 * number left blank, or text that is no finite number (`abc`, or `1e400`, beyond the largest
 * number there is). The component would only see NaN or Infinity there, and say so ("config.rate
 * = NaN"), which is not what was typed. Fields the kind doesn't use are not checked.
 */
export function formError(form: Form): InvalidRateLimitError | undefined {
  for (const { field, name, label, required } of NUMBER_FIELDS) {
    if ((field === "capacity" || field === "maxReserved") && !applies(form.kind, field)) continue;
    const text = String(form[field]).trim();
    const problem =
      text === ""
        ? required
          ? `${label} is required`
          : undefined
        : Number.isNaN(Number(text))
          ? `${label}: "${text}" is not a number`
          : Number.isFinite(Number(text))
            ? undefined
            : `${label}: "${text}" is too large to be a number (the largest is about 1.8e308)`;
    if (problem !== undefined) return { kind: "InvalidRateLimit", field: name, value: JSON.stringify(text), message: problem };
  }
  return undefined;
}

/**
 * countNote says what a count other than a whole number of tokens does: 0 peeks (asks, takes
 * nothing), a fraction takes that share of a token. Undefined for whole counts (and for text that
 * is no number, which formError names).
 */
export function countNote(count: string): string | undefined {
  const text = count.trim();
  const n = Number(text);
  if (text === "" || !Number.isFinite(n) || n < 0) return undefined;
  if (n === 0) return "0 is a peek: it takes nothing, and is admitted unless the limit is in debt (reserved ahead)";
  if (!Number.isInteger(n)) return `a fraction of a token: each request takes ${text} (as a budget of LLM tokens might)`;
  return undefined;
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
  "config.exact": "exact",
};

/** The config with its `shards` dropped: the limit as one whole row. */
export function wholeConfig(config: RateLimitConfig): RateLimitConfig {
  const common = {
    rate: config.rate,
    period: config.period,
    ...(config.capacity === undefined ? {} : { capacity: config.capacity }),
    ...(config.maxReserved === undefined ? {} : { maxReserved: config.maxReserved }),
  };
  if (config.kind === "sliding window" && config.exact !== false) return { kind: "sliding window", ...common };
  const exact = config.kind === "sliding window" ? { exact: false } : {};
  return config.kind === "token bucket"
    ? { kind: "token bucket", ...common }
    : { kind: config.kind, ...exact, ...common, ...(config.start === undefined ? {} : { start: config.start }) };
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
      return config.exact === false
        ? `About ${config.rate} in any ${seconds(config.period)} (a two-window estimate: under ${2 * config.rate}).`
        : `At most ${config.rate} in any ${seconds(config.period)}.`;
    default: {
      const never: never = config;
      throw new Error(`unknown kind in ${JSON.stringify(never)}`);
    }
  }
}
