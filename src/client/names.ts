// Compile-time checks of limit names. A call names a limit given to the RateLimiter constructor, or
// any other name with an inline `config`. A name that is neither makes the name argument itself
// the type error, and the error names it and the names there are. tsc prints, for example:
//
//   Argument of type '"sendMesage"' is not assignable to parameter of type '"unknown limit name
//   'sendMesage'; the names are: 'sendMessage' | 'freeTrialSignUp' (or pass a config)"'.
//
// (test/names.test.ts runs tsc on a fixture and pins that text.) For that, a call's options stay
// optional whatever the name, so tsc never stops at "Expected 3 arguments, but got 2", and the
// name's parameter type is computed from the name and from whether the options carry a `config`
// (the type parameter C, `never` when they don't).
import type { RateLimitConfig } from "../shared/shapes/validators.js";
import type { CalendarConfig } from "../shared/shapes/calendar-validators.js";
import type { ConcurrencyConfig } from "../shared/shapes/concurrency-validators.js";

/** The names of the limits in `Limits`, the RateLimiter's constructor argument. */
export type NamesOf<Limits> = keyof Limits & string;

/** RateLimits is `Limits` without its concurrency limits: what `limit`, `limitAll` and the rest take. */
export type RateLimits<Limits> = { [K in keyof Limits as Limits[K] extends ConcurrencyConfig ? never : K]: Limits[K] };

/** The names of the concurrency limits (`kind: "concurrency"`) in `Limits`. */
export type ConcurrencyNamesOf<Limits> = { [K in keyof Limits]: Limits[K] extends ConcurrencyConfig ? K : never }[keyof Limits] & string;

/**
 * RateLimitName is the name parameter of a call that only rate limits take (`limit`, `credit`,
 * …): an error naming the methods to use for a concurrency limit, else {@link LimitName} over the
 * rate limits.
 */
export type RateLimitName<Limits, Name extends string, C> = Name extends ConcurrencyNamesOf<Limits>
  ? `'${Name}' is a concurrency limit: use acquire, release and extend (or check, getValue and reset)`
  : LimitName<RateLimits<Limits>, Name, C>;

/**
 * ConcurrencyName is the name parameter of `acquire`: a concurrency limit named in the
 * constructor, else an error listing them.
 */
export type ConcurrencyName<Limits, Name extends string> = Name extends ConcurrencyNamesOf<Limits>
  ? Name
  : [ConcurrencyNamesOf<Limits>] extends [never]
    ? `'${Name}' is not a concurrency limit: this RateLimiter names none (add one with kind: "concurrency")`
    : `'${Name}' is not a concurrency limit; the concurrency limits are: ${Listed<ConcurrencyNamesOf<Limits>>}`;

/**
 * UnknownLimitName is what a call's name parameter becomes for a name that is neither given to
 * the constructor nor comes with a `config`: a string type that no name is assignable to, whose
 * text names the name and lists the names there are (the first twelve, then how many more).
 */
export type UnknownLimitName<Limits, Name extends string> = [NamesOf<Limits>] extends [never]
  ? `unknown limit name '${Name}': this RateLimiter names no limits, so pass a config`
  : [SameButCase<Limits, Name>] extends [never]
    ? `unknown limit name '${Name}'; the names are: ${Listed<NamesOf<Limits>>} (or pass a config)`
    : `unknown limit name '${Name}'; did you mean ${Listed<SameButCase<Limits, Name>>}? The names are: ${Listed<NamesOf<Limits>>} (or pass a config)`;

/** The names in `Limits` that differ from `Name` only in case (`freeTrialSignup`: `freeTrialSignUp`). */
type SameButCase<Limits, Name extends string> = {
  [K in NamesOf<Limits>]: Lowercase<K> extends Lowercase<Name> ? K : never;
}[NamesOf<Limits>];

/**
 * LimitName is the type of a call's name parameter: `Name` itself when it names a limit in
 * `Limits` or comes with an inline config (`C`, `never` when there is none), else
 * {@link UnknownLimitName}. Distributes over a union of names: each must pass.
 */
export type LimitName<Limits, Name extends string, C> = Name extends keyof Limits
  ? Name
  : [C] extends [never]
    ? UnknownLimitName<Limits, Name>
    : Name;

/**
 * ConfigOption is the `config` option a call takes for `Name`: none for a limit named in the
 * constructor (its config comes from there; passing one is an error that says so), and `C`, the
 * inline config, for any other name. `C` is inferred from it.
 */
export type ConfigOption<Limits, Name extends string, C> = Name extends keyof Limits
  ? { config?: NamedLimitConfig<Name> }
  : {
      /** The config of a limit that wasn't named in the `RateLimiter` constructor. */
      config: C;
    };

/**
 * CheckedRequests checks the requests of `limitAll`/`checkAll` (`R`, inferred from the array) one
 * by one with {@link CheckedRequest}.
 */
export type CheckedRequests<Limits, R extends readonly unknown[]> = { [I in keyof R]: CheckedRequest<Limits, R[I]> };

/**
 * CheckedRequest is the type one request `R` of `limitAll`/`checkAll` must have: a `name` checked
 * as {@link LimitName} checks it (an inline `config` for a name not given to the constructor, none
 * for one that was), an optional `key` (string), `count` (number) and `tier` (string), and nothing else.
 */
export type CheckedRequest<Limits, R> = R extends { name: infer Name extends string }
  ? Name extends keyof Limits
    ? { name: Name; config?: NamedLimitConfig<Name> } & RequestFields & NoOtherFields<R>
    : R extends { config: unknown }
      ? { name: Name; config: RateLimitConfig | CalendarConfig } & RequestFields & NoOtherFields<R>
      : // The names beside the error: editors offer them, and tsc adds "Did you mean" for a near miss.
        { name: UnknownLimitName<Limits, Name> | (keyof Limits & string); config?: RateLimitConfig | CalendarConfig } & RequestFields & NoOtherFields<R>
  : // Not reached (requests have names); it also lets tsc infer R, which it infers through the branches.
    R;

type RequestFields = { key?: string; count?: number; tier?: string };

/** An error for each field of `R` a request doesn't have (an object literal's extra fields would otherwise pass). */
type NoOtherFields<R> = {
  [K in Exclude<keyof R, "name" | "config" | keyof RequestFields>]?: `'${K & string}' is not an option of a request`;
};

/** The type of `config` for a limit named in the constructor: an error, since its config comes from there. */
type NamedLimitConfig<Name extends string> = `'${Name}' is named in the RateLimiter, which gives its config`;

/** A union's members, as `'a' | 'b'`: the first twelve, then how many more. */
type Listed<U extends string> = TupleOf<U> extends infer T extends readonly string[] ? JoinFirst<T, "", []> : never;

type JoinFirst<T extends readonly string[], Text extends string, Seen extends unknown[]> = T extends readonly [
  infer Head extends string,
  ...infer Tail extends readonly string[],
]
  ? Seen["length"] extends 12
    ? `${Text} and ${T["length"]} more`
    : JoinFirst<Tail, Text extends "" ? `'${Head}'` : `${Text} | '${Head}'`, [...Seen, Head]>
  : Text;

/**
 * A union's members as a tuple, in the compiler's order of the union: for the keys of one object
 * literal, their order in the source. (Intersecting functions makes overloads, and inferring from
 * overloads takes the last, so `LastOf` picks one member at a time.)
 */
type TupleOf<U, Acc extends unknown[] = []> = [U] extends [never]
  ? Acc
  : LastOf<U> extends infer L
    ? TupleOf<Exclude<U, L>, [L, ...Acc]>
    : never;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type LastOf<U> = UnionToIntersection<U extends unknown ? () => U : never> extends () => infer L ? L : never;
