// The Playground's inputs: the limit's config and the request to fire. Controlled; the parent
// owns the form and checks each request it describes with the component (useValidation.ts). An
// error is shown under the field the component names, in the component's own words.
import { useId, type ChangeEvent, type ReactNode } from "react";
import { applies, countNote, FIELD_OF, KINDS, type Form, type Kind } from "./config.js";
import type { Validation } from "./useValidation.js";

function isKind(value: string): value is Kind {
  return (KINDS as readonly string[]).includes(value);
}

type NumberField = Exclude<keyof Form, "kind" | "reserve" | "exact">;

/** What each kind does with its tokens, under the kind selector. */
const KIND_HINTS: Readonly<Record<Kind, string>> = {
  "token bucket": "refills continuously",
  "fixed window": "refills at each window boundary",
  "sliding window": "counts the last period, as it slides",
};

export function PlaygroundForm({
  form,
  validation,
  onChange,
}: {
  form: Form;
  validation: Validation;
  onChange: (form: Form) => void;
}) {
  const id = useId();
  const error = validation.state === "invalid" ? validation.error : undefined;
  const badField = error === undefined ? undefined : FIELD_OF[error.field];
  const errorId = (field: keyof Form | "form") => `${id}-${field}-error`;

  /** The field's error, where the component put it, or its hint. */
  const note = (field: keyof Form, hint: ReactNode) =>
    badField === field && error !== undefined ? (
      <span className="field-error" id={errorId(field)} role="alert" data-testid={`error-${field}`} data-field={error.field}>
        {error.message}
      </span>
    ) : (
      <span className="field-hint" id={`${id}-${field}-hint`}>
        {hint}
      </span>
    );

  /**
   * A number input; `locked` shows that value instead, read-only (a field the kind fixes). Typed as
   * text, so what was typed is what is checked: a number input reads `1e400` (too large) or `abc`
   * as blank.
   */
  const numberInput = (field: NumberField, label: string, hint: ReactNode, placeholder?: string, locked?: string) => (
    <label className="field" htmlFor={`${id}-${field}`}>
      <span className="field-label">{label}</span>
      <input
        id={`${id}-${field}`}
        name={field}
        type="text"
        inputMode="decimal"
        autoComplete="off"
        spellCheck={false}
        value={locked ?? form[field]}
        disabled={locked !== undefined}
        placeholder={placeholder}
        aria-invalid={badField === field}
        aria-describedby={badField === field ? errorId(field) : `${id}-${field}-hint`}
        onChange={(e: ChangeEvent<HTMLInputElement>) => onChange({ ...form, [field]: e.target.value })}
      />
      {note(field, hint)}
    </label>
  );

  return (
    <form className="playground-form" onSubmit={(e) => e.preventDefault()} noValidate>
      <fieldset>
        <legend>Limit</legend>
        <label className="field" htmlFor={`${id}-kind`}>
          <span className="field-label">Kind</span>
          <select
            id={`${id}-kind`}
            name="kind"
            value={form.kind}
            onChange={(e) => {
              const kind = e.target.value;
              if (isKind(kind)) onChange({ ...form, kind });
            }}
          >
            {KINDS.map((kind) => (
              <option key={kind} value={kind}>
                {kind}
              </option>
            ))}
          </select>
          <span className="field-hint">{KIND_HINTS[form.kind]}</span>
        </label>
        {numberInput("rate", "Rate", "tokens per period")}
        {numberInput("periodSeconds", "Period (s)", "seconds")}
        {applies(form.kind, "capacity")
          ? numberInput("capacity", "Capacity", "most tokens held; blank = rate", "= rate")
          : numberInput("capacity", "Capacity", "always the rate: at most that many in any period", "= rate", form.rate)}
        {numberInput("shards", "Shards", "rows the limit is spread over")}
        {applies(form.kind, "maxReserved") &&
          numberInput("maxReserved", "Max reserved", "deepest debt; blank = unlimited", "unlimited")}
        {applies(form.kind, "exact") && (
          <label className="field field-check" htmlFor={`${id}-exact`}>
            <input
              id={`${id}-exact`}
              name="exact"
              type="checkbox"
              checked={form.exact}
              aria-invalid={badField === "exact"}
              aria-describedby={badField === "exact" ? errorId("exact") : `${id}-exact-hint`}
              onChange={(e) => onChange({ ...form, exact: e.target.checked })}
            />
            <span className="field-label">Exact</span>
            {note("exact", form.exact ? "never more than the rate in any period" : "two counting windows: cheaper, under twice the rate")}
          </label>
        )}
      </fieldset>
      <fieldset>
        <legend>Request</legend>
        {numberInput(
          "count",
          "Count",
          countNote(form.count) === undefined ? (
            "tokens per request"
          ) : (
            <span data-testid="count-note">{countNote(form.count)}</span>
          ),
        )}
        {applies(form.kind, "reserve") ? (
          <label className="field field-check" htmlFor={`${id}-reserve`}>
            <input
              id={`${id}-reserve`}
              name="reserve"
              type="checkbox"
              checked={form.reserve}
              aria-invalid={badField === "reserve"}
              aria-describedby={badField === "reserve" ? errorId("reserve") : `${id}-reserve-hint`}
              onChange={(e) => onChange({ ...form, reserve: e.target.checked })}
            />
            <span className="field-label">Reserve</span>
            {note("reserve", "take tokens ahead; the work runs later")}
          </label>
        ) : (
          <p className="field-hint" data-testid="no-reserve">
            No reservations: a sliding window can&apos;t take tokens ahead.
          </p>
        )}
      </fieldset>
      {error !== undefined && badField === undefined && (
        <p className="form-error" id={errorId("form")} role="alert" data-field={error.field}>
          {error.message}
        </p>
      )}
      {validation.state === "failed" && (
        <p className="form-error" role="alert">
          The request could not be checked: {validation.message}
        </p>
      )}
    </form>
  );
}
