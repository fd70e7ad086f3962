// @vitest-environment jsdom
// Covers the sign-up button (SignUpButton.tsx, the README's opening example) and the form around it (LiveSignUp.tsx) in jsdom: convex/react is mocked, fake timers drive the clock; the button counts down while the hour's sign-ups are used up and re-enables exactly when the window reopens.
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { HOUR, type GetValueReturnsWithDetails } from "convex-rate-limiter";
import { ConvexError } from "convex/values";
import { LiveSignUp } from "./LiveSignUp.js";
import { SignUpButton } from "./SignUpButton.js";

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0, 0);

const mocks = vi.hoisted(() => ({
  /** The getRateLimit result the mocked useQuery returns. */
  data: undefined as unknown,
  signUp: vi.fn(async (_args: { name: string; password: string }): Promise<string> => "userId"),
  serverTime: vi.fn(async () => Date.now()),
}));

vi.mock("convex/react", () => {
  const client = { mutation: () => mocks.serverTime() };
  return { useQuery: () => mocks.data, useConvex: () => client, useMutation: () => mocks.signUp };
});

/** The freeTrialSignUp window (100 an hour) holding `value` sign-ups in the window that began at `start`. */
function windowState(value: number, start: number): GetValueReturnsWithDetails {
  const config = { kind: "fixed window" as const, rate: 100, period: HOUR, start: T0 };
  return { value, ts: start, shard: 0, config, total: { value, capacity: 100, exact: true } };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  mocks.signUp.mockReset();
  mocks.signUp.mockResolvedValue("userId");
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const button = () => screen.getByRole("button");

test("loading: disabled", () => {
  mocks.data = undefined;
  render(<SignUpButton onClick={() => {}} />);
  expect(button().textContent).toBe("Sign up");
  expect(button()).toHaveProperty("disabled", true);
});

test("sign-ups left: enabled, and a click reaches onClick", () => {
  mocks.data = windowState(40, T0);
  const onClick = vi.fn();
  render(<SignUpButton onClick={onClick} />);
  expect(button()).toHaveProperty("disabled", false);
  fireEvent.click(button());
  expect(onClick).toHaveBeenCalledOnce();
});

test("used up: disabled with a countdown, enabled again exactly when the next window opens", async () => {
  // The window that began at T0 is used up; the next one opens at T0 + HOUR.
  mocks.data = windowState(0, T0);
  vi.setSystemTime(T0 + HOUR - 90_000);
  render(<SignUpButton onClick={() => {}} />);
  await act(async () => {}); // the clock-offset measurement settles (offset 0)
  expect(button().textContent).toBe("Sign-ups reopen in 90 s");
  expect(button()).toHaveProperty("disabled", true);
  await act(async () => {
    vi.advanceTimersByTime(30_000);
  });
  expect(button().textContent).toBe("Sign-ups reopen in 60 s");
  await act(async () => {
    vi.advanceTimersByTime(59_999);
  });
  expect(button()).toHaveProperty("disabled", true);
  await act(async () => {
    vi.advanceTimersByTime(1);
  });
  expect(button().textContent).toBe("Sign up");
  expect(button()).toHaveProperty("disabled", false);
});

/** Fills the form and clicks Sign up. */
async function submit(name: string, password: string) {
  fireEvent.change(screen.getByLabelText("Name"), { target: { value: name } });
  fireEvent.change(screen.getByLabelText("Password"), { target: { value: password } });
  await act(async () => {
    fireEvent.click(button());
  });
}

test("the form signs up and says so", async () => {
  mocks.data = windowState(40, T0);
  render(<LiveSignUp />);
  await submit(" ada ", "pw");
  expect(mocks.signUp).toHaveBeenCalledWith({ name: "ada", password: "pw" });
  expect(screen.getByRole("status").textContent).toBe("Signed up as ada.");
});

test("the form says why the server refused, and sends nothing without a name", async () => {
  mocks.data = windowState(40, T0);
  render(<LiveSignUp />);
  await submit("", "pw");
  expect(mocks.signUp).not.toHaveBeenCalled();
  expect(screen.getByRole("status").textContent).toBe("Choose a name and a password.");

  mocks.signUp.mockRejectedValueOnce(new ConvexError("the name ada is taken"));
  await submit("ada", "pw");
  expect(screen.getByRole("status").textContent).toBe("the name ada is taken");

  // Another visitor took the last sign-up first.
  mocks.signUp.mockRejectedValueOnce(new ConvexError({ kind: "RateLimited", name: "freeTrialSignUp", retryAfter: 1000 }));
  await submit("bob", "pw");
  expect(screen.getByRole("status").textContent).toMatch(/^Sign-ups are full/);
});
