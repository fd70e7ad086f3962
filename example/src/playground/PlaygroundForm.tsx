// The Playground's inputs: the limit's config and the request to fire. Controlled; the parent
// owns the form and re-decides (or re-simulates) whenever it changes.
import { useId, type ChangeEvent } from "react";
import { KINDS, type Form, type Kind, type Parsed } from "./config.js";

/** Which form field an `InvalidRateLimit` error's `field` is about. */
const FIELD_OF: Record<string, keyof Form> = {
  "config.rate": "rate",
  "config.period": "periodSeconds",
  "config.capacity": "capacity",
  "config.maxReserved": "maxReserved",
  "config.shards": "shards",
  count: "count",
};

function isKind(value: string): value is Kind {
  return (KINDS as readonly string[]).includes(value);
}

type NumberField = Exclude<keyof Form, "kind" | "reserve">;

export function PlaygroundForm({
  form,
  parsed,
  onChange,
}: {
  form: Form;
  parsed: Parsed;
  onChange: (form: Form) => void;
}) {
  const id = useId();
  const errorId = `${id}-error`;
  const badField = parsed.ok ? undefined : FIELD_OF[parsed.field];

  const numberInput = (field: NumberField, label: string, hint: string, min: number, placeholder?: string) => (
    <label className="field" htmlFor={`${id}-${field}`}>
      <span className="field-label">{label}</span>
      <input
        id={`${id}-${field}`}
        name={field}
        type="number"
        inputMode="decimal"
        min={min}
        step="any"
        value={form[field]}
        placeholder={placeholder}
        aria-invalid={badField === field}
        aria-describedby={badField === field ? errorId : `${id}-${field}-hint`}
        onChange={(e: ChangeEvent<HTMLInputElement>) => onChange({ ...form, [field]: e.target.value })}
      />
      <span className="field-hint" id={`${id}-${field}-hint`}>
        {hint}
      </span>
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
          <span className="field-hint">
            {form.kind === "token bucket" ? "refills continuously" : "refills at each window boundary"}
          </span>
        </label>
        {numberInput("rate", "Rate", "tokens per period", 0)}
        {numberInput("periodSeconds", "Period (s)", "seconds", 0.001)}
        {numberInput("capacity", "Capacity", "most tokens held; blank = rate", 0, "= rate")}
        {numberInput("shards", "Shards", "rows the limit is spread over", 1)}
        {numberInput("maxReserved", "Max reserved", "deepest debt; blank = unlimited", 0, "unlimited")}
      </fieldset>
      <fieldset>
        <legend>Request</legend>
        {numberInput("count", "Count", "tokens per request", 0)}
        <label className="field field-check" htmlFor={`${id}-reserve`}>
          <input
            id={`${id}-reserve`}
            name="reserve"
            type="checkbox"
            checked={form.reserve}
            onChange={(e) => onChange({ ...form, reserve: e.target.checked })}
          />
          <span className="field-label">Reserve</span>
          <span className="field-hint">take tokens ahead; the work runs later</span>
        </label>
      </fieldset>
      {!parsed.ok && (
        <p className="form-error" id={errorId} role="alert">
          {parsed.message}
        </p>
      )}
    </form>
  );
}
