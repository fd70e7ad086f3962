// @vitest-environment jsdom
// Covers the Playground form (PlaygroundForm.tsx) in jsdom: the kind selector offers every kind,
// each kind shows only its fields (a sliding window: capacity locked to the rate, no max reserved,
// no reserve), and a component error is shown under the field it names.
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_FORM, KINDS, requestOf, type Form } from "./config.js";
import { PlaygroundForm } from "./PlaygroundForm.js";
import type { Validation } from "./useValidation.js";

afterEach(cleanup);

function show(form: Form, validation?: Validation) {
  const onChange = vi.fn<(form: Form) => void>();
  const { container } = render(
    <PlaygroundForm form={form} validation={validation ?? { state: "checking", request: requestOf(form) }} onChange={onChange} />,
  );
  const input = (name: string) => container.querySelector<HTMLInputElement>(`input[name="${name}"]`);
  const kind = container.querySelector<HTMLSelectElement>('select[name="kind"]');
  if (kind === null) throw new Error("no kind selector");
  return { onChange, input, kind };
}

describe("PlaygroundForm", () => {
  it("offers every kind, sliding window included", () => {
    const { kind } = show(DEFAULT_FORM);
    const options = [...kind.querySelectorAll("option")].map((o) => o.value);
    expect(options).toEqual([...KINDS]);
    expect(options).toContain("sliding window");
  });

  it("switches the kind, keeping the other fields as typed", () => {
    const { onChange, kind } = show({ ...DEFAULT_FORM, capacity: "3" });
    fireEvent.change(kind, { target: { value: "sliding window" } });
    expect(onChange).toHaveBeenCalledWith({ ...DEFAULT_FORM, capacity: "3", kind: "sliding window" });
  });

  it.each([["token bucket"], ["fixed window"]] as const)("a %s shows capacity, max reserved and reserve", (kind) => {
    const { input } = show({ ...DEFAULT_FORM, kind, capacity: "3" });
    expect(input("capacity")?.disabled).toBe(false);
    expect(input("capacity")?.value).toBe("3");
    expect(input("maxReserved")).not.toBeNull();
    expect(input("reserve")).not.toBeNull();
  });

  it("a sliding window shows its capacity locked to the rate, and no reservations", () => {
    // Values typed under another kind stay in the form, unseen and unsent.
    const form: Form = { ...DEFAULT_FORM, kind: "sliding window", rate: "7", capacity: "3", maxReserved: "2", reserve: true };
    const { input } = show(form);
    expect(input("capacity")?.disabled).toBe(true);
    expect(input("capacity")?.value).toBe("7");
    expect(screen.getByText("always the rate: at most that many in any period")).toBeTruthy();
    expect(input("maxReserved")).toBeNull();
    expect(input("reserve")).toBeNull();
    expect(screen.getByTestId("no-reserve").textContent).toMatch(/can't take tokens ahead/);
    expect(screen.getByText("counts the last period, as it slides")).toBeTruthy();
    for (const name of ["rate", "periodSeconds", "shards", "count"]) expect(input(name)?.disabled).toBe(false);
  });

  it("a sliding window has an Exact box, checked by default; unchecking it sends exact: false", () => {
    const form: Form = { ...DEFAULT_FORM, kind: "sliding window" };
    const { input, onChange } = show(form);
    expect(input("exact")?.checked).toBe(true);
    expect(screen.getByText("never more than the rate in any period")).toBeTruthy();
    fireEvent.click(input("exact")!);
    expect(onChange).toHaveBeenCalledWith({ ...form, exact: false });
    expect(requestOf({ ...form, exact: false }).config).toMatchObject({ kind: "sliding window", exact: false });
  });

  it.each([["token bucket"], ["fixed window"]] as const)("a %s has no Exact box", (kind) => {
    const { input } = show({ ...DEFAULT_FORM, kind });
    expect(input("exact")).toBeNull();
  });

  it("shows a component error under the field it names, the reserve box included", () => {
    const form: Form = { ...DEFAULT_FORM, reserve: true };
    const error = { kind: "InvalidRateLimit", field: "reserve", value: "true", message: "reserve = true: not here" } as const;
    const { input } = show(form, { state: "invalid", request: requestOf(form), error });
    const shown = screen.getByRole("alert");
    expect(shown.textContent).toBe("reserve = true: not here");
    expect(shown.getAttribute("data-testid")).toBe("error-reserve");
    expect(input("reserve")?.getAttribute("aria-invalid")).toBe("true");
    expect(input("reserve")?.getAttribute("aria-describedby")).toBe(shown.id);
  });
});
