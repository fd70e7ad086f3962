// @vitest-environment jsdom
// Covers the README's SendButton (SendButton.tsx) in jsdom: convex/react and the session hooks are mocked, fake timers drive the clock; the button disables itself, counts down, and re-enables exactly when a token is back.
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { SendButton } from "./SendButton.js";
import type { GetValueReturnsWithDetails } from "convex-rate-limiter";

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);

const mocks = vi.hoisted(() => ({
  /** The getRateLimit result the mocked useQuery returns. */
  data: undefined as unknown,
  send: vi.fn(async (_args: { body: string }) => "messageId"),
  serverTime: vi.fn(async () => Date.now()),
}));

vi.mock("convex/react", () => {
  const client = { mutation: () => mocks.serverTime() };
  return { useQuery: () => mocks.data, useConvex: () => client };
});
vi.mock("convex-helpers/react/sessions", () => ({
  useSessionId: () => ["session-1"],
  useSessionMutation: () => mocks.send,
}));

/** The sendMessage limit (10/min, capacity 3) holding `value` tokens at `ts`. */
function limitState(value: number, ts: number): GetValueReturnsWithDetails {
  const config = { kind: "token bucket" as const, rate: 10, period: 60_000, capacity: 3 };
  return { value, ts, shard: 0, config, total: { value, capacity: 3, exact: true } };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  mocks.send.mockClear();
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

test("loading: the button says so and is disabled", () => {
  mocks.data = undefined;
  render(<SendButton body="hi" onSent={() => {}} />);
  expect(screen.getByRole("button").textContent).toBe("Loading…");
  expect(screen.getByRole("button")).toHaveProperty("disabled", true);
});

test("with tokens left: Send is enabled and sends the body", async () => {
  mocks.data = limitState(2, T0);
  const onSent = vi.fn();
  render(<SendButton body="hi" onSent={onSent} />);
  const button = screen.getByRole("button");
  expect(button.textContent).toBe("Send");
  expect(button).toHaveProperty("disabled", false);
  await act(async () => {
    fireEvent.click(button);
  });
  expect(mocks.send).toHaveBeenCalledWith({ body: "hi" });
  expect(onSent).toHaveBeenCalledOnce();
});

test("out of tokens: disabled with a countdown, enabled again exactly when a token is back", async () => {
  // Empty at T0: one token every 6 s.
  mocks.data = limitState(0, T0);
  render(<SendButton body="hi" onSent={() => {}} />);
  await act(async () => {}); // the clock-offset measurement settles (offset 0)
  const button = () => screen.getByRole("button");
  expect(button().textContent).toBe("Send again in 6 s");
  expect(button()).toHaveProperty("disabled", true);
  await act(async () => {
    vi.advanceTimersByTime(3_000);
  });
  expect(button().textContent).toBe("Send again in 3 s");
  await act(async () => {
    vi.advanceTimersByTime(2_999);
  });
  expect(button()).toHaveProperty("disabled", true);
  await act(async () => {
    vi.advanceTimersByTime(1);
  });
  expect(button().textContent).toBe("Send");
  expect(button()).toHaveProperty("disabled", false);
});

test("an empty body can't be sent", () => {
  mocks.data = limitState(3, T0);
  render(<SendButton body="" onSent={() => {}} />);
  expect(screen.getByRole("button")).toHaveProperty("disabled", true);
});
