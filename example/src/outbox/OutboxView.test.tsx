// @vitest-environment jsdom
// Covers the outbox (OutboxView.tsx) in jsdom with fake timers driving the clock: each queued email counts down to its runAt, second by second, with a Cancel button that cancels that email; sent and cancelled ones say so; queueing says when the email goes, or why nothing was queued.
import { act, cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { OutboxView, timeLeft, type OutboxEmail, type QueueResult } from "./OutboxView.js";

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const emails: OutboxEmail[] = [
  { id: "e3", to: "c@example.com", subject: "third", status: "queued", runAt: T0 + 65_000 },
  { id: "e2", to: "b@example.com", subject: "second", status: "cancelled" },
  { id: "e1", to: "a@example.com", subject: "first", status: "sent", runAt: T0 - 1_000 },
];

function renderOutbox(overrides: { emails?: readonly OutboxEmail[] | undefined } = {}) {
  const props = {
    emails,
    onQueue: vi.fn<(to: string, subject: string) => Promise<QueueResult>>(async () => ({ ok: true, runAt: T0 + 30_000 })),
    onCancel: vi.fn<(id: string) => Promise<boolean>>(async () => true),
    policy: "100 in any hour",
    ...overrides,
  };
  render(<OutboxView {...props} />);
  return props;
}

test("timeLeft: whole seconds rounded up, then minutes and hours", () => {
  expect([0, -5, 1, 999, 1_000, 59_001, 65_000, 3_600_000, 7_830_000].map(timeLeft)).toEqual([
    "now",
    "now",
    "1 s",
    "1 s",
    "1 s",
    "1 min 0 s",
    "1 min 5 s",
    "1 h 0 min",
    "2 h 10 min",
  ]);
});

test("a queued email counts down to its runAt; sent and cancelled ones say so", () => {
  renderOutbox();
  const [queued, cancelled, sent] = screen.getAllByRole("listitem");
  expect(queued!.textContent).toContain("goes in 1 min 5 s");
  expect(within(queued!).getByRole("button", { name: "Cancel the email to c@example.com" })).toBeTruthy();
  expect(cancelled!.textContent).toContain("cancelled");
  expect(within(cancelled!).queryByRole("button")).toBeNull();
  expect(sent!.textContent).toContain("sent");
  act(() => vi.advanceTimersByTime(5_000));
  expect(queued!.textContent).toContain("goes in 1 min 0 s");
  act(() => vi.advanceTimersByTime(59_000));
  expect(queued!.textContent).toContain("goes in 1 s");
  act(() => vi.advanceTimersByTime(1_000));
  expect(queued!.textContent).toContain("going now");
});

test("Cancel cancels that email", async () => {
  const props = renderOutbox();
  await act(async () => {
    fireEvent.click(screen.getByRole("button", { name: "Cancel the email to c@example.com" }));
  });
  expect(props.onCancel).toHaveBeenCalledWith("e3");
});

test("queueing says when the email goes, or that nothing was queued", async () => {
  const props = renderOutbox({ emails: [] });
  expect(screen.getByText("No emails yet.")).toBeTruthy();
  const queue = screen.getByRole("button", { name: "Queue" });
  expect(queue).toHaveProperty("disabled", true);
  fireEvent.change(screen.getByLabelText("To"), { target: { value: "d@example.com" } });
  fireEvent.change(screen.getByLabelText("Subject"), { target: { value: "hi" } });
  await act(async () => {
    fireEvent.click(queue);
  });
  expect(props.onQueue).toHaveBeenCalledWith("d@example.com", "hi");
  expect(screen.getByRole("status").textContent).toBe("Queued: it goes in 30 s, after the emails queued before it.");
  props.onQueue.mockImplementationOnce(async () => ({ ok: false, retryAfter: 90_000 }));
  fireEvent.change(screen.getByLabelText("To"), { target: { value: "e@example.com" } });
  await act(async () => {
    fireEvent.click(screen.getByRole("button", { name: "Queue" }));
  });
  expect(screen.getByRole("status").textContent).toBe("The provider's line is over a day long: nothing was queued. Try again in 1 min 30 s.");
});

test("loading", () => {
  renderOutbox({ emails: undefined });
  expect(screen.getByText("Loading…")).toBeTruthy();
});
