// @vitest-environment jsdom
// Covers the live admin view's overrides (LiveAdmin.tsx) in jsdom: convex/react is mocked (each
// query and mutation answered by its function name), fake timers fix the clock; the overrides come
// from admin.listRateLimitOverrides for the chosen limit, a block and a remove go through
// useMutation to admin.setRateLimitOverride and admin.removeRateLimitOverride, and a refused query
// shows why.
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { MINUTE, type OverrideRecord } from "convex-rate-limiter";
import { ConvexError } from "convex/values";
import type { FunctionReference } from "convex/server";
import { LiveAdmin } from "./LiveAdmin.js";

const T0 = Date.UTC(2025, 0, 1, 9, 0);

const mocks = vi.hoisted(() => ({
  /** The paginated queries asked: function name and arguments. */
  listed: [] as { name: string; args: unknown }[],
  overrides: [] as unknown[],
  /** Thrown by every query when set, as useQuery throws a server's error. */
  refusal: undefined as unknown,
  mutations: {} as Record<string, (args: unknown) => Promise<unknown>>,
}));

vi.mock("convex/react", async () => {
  const { getFunctionName } = await import("convex/server");
  const name = (f: unknown) => getFunctionName(f as FunctionReference<"query">);
  return {
    usePaginatedQuery: (f: unknown, args: unknown) => {
      if (mocks.refusal !== undefined) throw mocks.refusal;
      mocks.listed.push({ name: name(f), args });
      const results = name(f) === "admin:listRateLimitOverrides" ? mocks.overrides : [];
      return { results, status: "Exhausted", isLoading: false, loadMore: () => {} };
    },
    useQuery: () => undefined,
    useMutation: (f: unknown) => (args: unknown) => mocks.mutations[name(f)]!(args),
  };
});

const setOverride = vi.fn(async (_args: unknown) => null);
const removeOverride = vi.fn(async (_args: unknown) => true);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0);
  mocks.listed = [];
  mocks.refusal = undefined;
  const block: OverrideRecord = { target: { key: "key-b" }, override: { blockedUntil: T0 + 5 * MINUTE }, note: "abuse", updatedAt: T0 };
  mocks.overrides = [block];
  setOverride.mockClear();
  removeOverride.mockClear();
  mocks.mutations = { "admin:setRateLimitOverride": setOverride, "admin:removeRateLimitOverride": removeOverride };
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

test("lists the chosen limit's overrides from admin.listRateLimitOverrides", () => {
  render(<LiveAdmin />);
  const limit = (screen.getByTestId("admin-limit") as HTMLSelectElement).value;
  expect(mocks.listed).toContainEqual({ name: "admin:listRateLimitOverrides", args: { name: limit } });
  expect(screen.getByTestId("admin-overrides").querySelector("tbody tr")?.textContent).toBe(
    "key key-bblocked until 09:05:00 UTCabuse09:00:00 UTCRemove",
  );
  expect(screen.getByRole("form", { name: "Block a key" })).toBeTruthy();
  fireEvent.change(screen.getByTestId("admin-limit"), { target: { value: "llmRequests" } });
  expect(mocks.listed.at(-1)).toEqual({ name: "admin:listRateLimitOverrides", args: { name: "llmRequests" } });
});

test("blocks a key from this browser's clock, and removes an override, through the app's mutations", async () => {
  render(<LiveAdmin />);
  const limit = (screen.getByTestId("admin-limit") as HTMLSelectElement).value;
  fireEvent.change(screen.getByRole("textbox", { name: "Block key" }), { target: { value: "key-c" } });
  fireEvent.change(screen.getByRole("spinbutton", { name: "Block for (minutes)" }), { target: { value: "2" } });
  await act(async () => {
    fireEvent.click(screen.getByRole("button", { name: "Block" }));
  });
  expect(setOverride).toHaveBeenCalledExactlyOnceWith({ name: limit, target: { key: "key-c" }, override: { blockedUntil: T0 + 2 * MINUTE } });
  expect(screen.getByRole("status").textContent).toBe(`Blocked key-c of ${limit} until 09:02:00 UTC.`);

  await act(async () => {
    fireEvent.click(screen.getByRole("button", { name: "Remove the override of key key-b" }));
  });
  expect(removeOverride).toHaveBeenCalledExactlyOnceWith({ name: limit, target: { key: "key-b" } });
});

test("a caller who isn't an admin is told why, with no view to use", () => {
  mocks.refusal = new ConvexError("only admins may see or change rate limits");
  // React reports the error the boundary caught; the boundary's rendering is what counts here.
  const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
  render(<LiveAdmin />);
  quiet.mockRestore();
  expect(screen.getByRole("status").textContent).toMatch(/^The admin queries refused: .*only admins may see or change rate limits/);
  expect(screen.queryByRole("form", { name: "Block a key" })).toBeNull();
});
