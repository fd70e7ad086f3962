// The Playground form's validation: each request the form describes is checked by the rate
// limiter component itself (`RateLimiter.check`, run in the page; see offline/lane.ts), so the form
// refuses exactly what a deployment would, naming the same field with the same message.
import type { InvalidRateLimitError, RateLimitReturnsWithDetails } from "convex-rate-limiter";
import { useEffect, useState } from "react";
import type { Verdict } from "../offline/lane.js";
import type { FormRequest } from "./config.js";

/** Where the check of the form's current request stands. */
export type Validation =
  | { state: "checking"; request: FormRequest }
  /** Valid; `result` is what the component would decide now, when the checker knows the limit's state. */
  | { state: "ok"; request: FormRequest; result: RateLimitReturnsWithDetails | undefined }
  | { state: "invalid"; request: FormRequest; error: InvalidRateLimitError }
  /** The check itself failed (not the request): the form can't be trusted until it is fixed. */
  | { state: "failed"; request: FormRequest; message: string };

/** Checks a request with the component; see `Lane.check`. */
export type Checker = (request: FormRequest) => Promise<Verdict>;

/**
 * useValidation checks `request` whenever it changes (by value) with `check`, and returns the
 * verdict for the request as it is now: "checking" until the answer for this very request is in.
 * `version` re-checks the same request when the state it is checked against has changed. A
 * `formError` (see config.ts's formError: a blank or unreadable number) is the verdict at once,
 * and the component isn't asked.
 */
export function useValidation(
  request: FormRequest,
  check: Checker | undefined,
  version?: unknown,
  formError?: InvalidRateLimitError,
): Validation {
  const key = JSON.stringify(request);
  const [answer, setAnswer] = useState<{ key: string; validation: Validation } | undefined>(undefined);
  const refused = formError !== undefined;
  useEffect(() => {
    if (check === undefined || refused) return;
    let current = true;
    check(request).then(
      (verdict) => {
        if (!current) return;
        const validation: Validation = verdict.ok
          ? { state: "ok", request, result: verdict.result }
          : { state: "invalid", request, error: verdict.error };
        setAnswer({ key, validation });
      },
      (error: unknown) => {
        if (!current) return;
        const message = error instanceof Error ? error.message : String(error);
        setAnswer({ key, validation: { state: "failed", request, message } });
      },
    );
    return () => {
      current = false;
    };
    // `key` stands for `request`'s value, so an equal request made anew isn't checked again.
  }, [key, check, version, refused]);
  if (formError !== undefined) return { state: "invalid", request, error: formError };
  if (answer === undefined || answer.key !== key) return { state: "checking", request };
  // A re-check of the same request keeps the previous answer meanwhile: validity doesn't depend on
  // the state, only the decision does.
  return answer.validation;
}
