// @vitest-environment jsdom
// Covers the admin view's overrides (AdminView.tsx) in jsdom, on fixed listings and instants: each
// override's row (target, terms or block, note, set at), paging, the metrics totals' overridden
// and blocked counts, the block form and remove buttons calling their mutations with the
// arguments admin.ts takes, and saying what the server answered and of which limit, and the mark
// on a blocked key's row in the Keys table.
import { act, cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, expect, test, vi } from "vitest";
import { HOUR, MINUTE, type KeyStatus, type MetricsResult, type OverrideRecord } from "convex-rate-limiter";
import { ConvexError } from "convex/values";
import { AdminView, PAGE_SIZE, type AdminViewProps, type OverridePages, type Pages } from "./AdminView.js";

afterEach(cleanup);

const T0 = Date.UTC(2025, 0, 1, 9, 0);
const LIMITS = [
  { name: "apiKeyRequests", metrics: true },
  { name: "llmRequests", metrics: false },
];

/** A listing that is all there: its one page, nothing more to load. */
function done<T>(results: readonly T[]): Pages<T> {
  return { results, status: "Exhausted", loadMore: vi.fn() };
}

const BLOCK: OverrideRecord = { target: { key: "key-b" }, override: { blockedUntil: T0 + 5 * MINUTE }, note: "abuse", updatedAt: T0 };
const PRO: OverrideRecord = {
  target: { tier: "pro" },
  override: { config: { kind: "token bucket", rate: 200, period: HOUR, maxReserved: 0 } },
  note: "pro plan: 10x",
  updatedAt: T0 - MINUTE,
};

/** The view's props: a limit with two overrides at T0 + 1 min, no keys and no metrics, but for `over`. */
function props(over: Partial<AdminViewProps> = {}): AdminViewProps {
  return {
    limits: LIMITS,
    name: "llmRequests",
    onName: () => {},
    keys: done<KeyStatus>([]),
    overrides: done([BLOCK, PRO]),
    now: T0 + MINUTE,
    onBlock: async () => {},
    onRemove: async () => {},
    metrics: undefined,
    ...over,
  };
}

function show(over: Partial<AdminViewProps> = {}) {
  const onBlock = vi.fn<AdminViewProps["onBlock"]>(async () => {});
  const onRemove = vi.fn<AdminViewProps["onRemove"]>(async () => {});
  const view = render(<AdminView {...props({ onBlock, onRemove, ...over })} />);
  return { onBlock, onRemove, view };
}

/** The override table's rows, each as its cells' text. */
function rows(): string[][] {
  const table = screen.getByTestId("admin-overrides");
  return within(table)
    .getAllByRole("row")
    .slice(1)
    .map((row) => within(row).getAllByRole("cell").map((cell) => cell.textContent ?? ""));
}

test("lists each override: its target, its terms or block, its note and when it was set", () => {
  show();
  expect(rows()).toEqual([
    ["key key-b", "blocked until 09:05:00 UTC", "abuse", "09:00:00 UTC", "Remove"],
    ["tier pro", "token bucket: 200 per 60 min, bursts of 200, no reservations", "pro plan: 10x", "08:59:00 UTC", "Remove"],
  ]);
  expect(screen.getByTestId("admin-overrides").querySelector("tbody tr")?.getAttribute("data-blocking")).toBe("true");
});

test("a block past its instant reads as lifted", () => {
  show({ now: T0 + 5 * MINUTE });
  expect(rows()[0]?.[1]).toBe("blocked until 09:05:00 UTC (lifted)");
});

test("says when there are none, waits for the first page, and loads more a page at a time", () => {
  const { view } = show({ overrides: done([]) });
  expect(screen.getByTestId("admin-no-overrides").textContent).toMatch(/^No overrides: every key and tier of llmRequests/);

  const loading: OverridePages = { results: [], status: "LoadingFirstPage", loadMore: vi.fn() };
  view.rerender(<AdminView {...props({ overrides: loading })} />);
  expect(screen.queryByTestId("admin-no-overrides")).toBeNull();
  expect(screen.queryByTestId("admin-overrides")).toBeNull();

  const more: OverridePages = { results: [BLOCK], status: "CanLoadMore", loadMore: vi.fn() };
  view.rerender(<AdminView {...props({ overrides: more })} />);
  fireEvent.click(screen.getByRole("button", { name: "Load more overrides" }));
  expect(more.loadMore).toHaveBeenCalledWith(PAGE_SIZE);
});

/** Fills the block form and sends it. */
async function block(key: string, minutes: string, note: string) {
  fireEvent.change(screen.getByRole("textbox", { name: "Block key" }), { target: { value: key } });
  fireEvent.change(screen.getByRole("spinbutton", { name: "Block for (minutes)" }), { target: { value: minutes } });
  fireEvent.change(screen.getByRole("textbox", { name: "Note" }), { target: { value: note } });
  await act(async () => {
    fireEvent.click(screen.getByRole("button", { name: "Block" }));
  });
}

test("the form blocks a key for the minutes asked from now, says until when, and clears", async () => {
  const { onBlock } = show({ name: "apiKeyRequests" });
  await block(" key-c ", "10", "too many calls");
  expect(onBlock).toHaveBeenCalledExactlyOnceWith({
    name: "apiKeyRequests",
    target: { key: "key-c" },
    override: { blockedUntil: T0 + 11 * MINUTE },
    note: "too many calls",
  });
  expect(screen.getByRole("status").textContent).toBe("Blocked key-c of apiKeyRequests until 09:11:00 UTC.");
  expect(screen.getByRole("textbox", { name: "Block key" })).toHaveProperty("value", "");
  expect(screen.getByRole("spinbutton", { name: "Block for (minutes)" })).toHaveProperty("value", "5");
});

test("the form blocks a network when asked, and allows one", async () => {
  const { onBlock } = show({ name: "signInsPerAddress" });
  fireEvent.change(screen.getByRole("combobox", { name: "What to block" }), { target: { value: "network" } });
  fireEvent.change(screen.getByRole("textbox", { name: "Block network" }), { target: { value: " 203.0.113.0/24 " } });
  await act(async () => {
    fireEvent.click(screen.getByRole("button", { name: "Block" }));
  });
  expect(onBlock).toHaveBeenCalledExactlyOnceWith({ name: "signInsPerAddress", target: { network: "203.0.113.0/24" }, override: { blockedUntil: T0 + 6 * MINUTE } });
  expect(screen.getByRole("status").textContent).toBe("Blocked network 203.0.113.0/24 of signInsPerAddress until 09:06:00 UTC.");
  expect(screen.getByRole("textbox", { name: "Block network" })).toHaveProperty("value", "");

  // An allow-list entry: no minutes, and the button says what it does.
  fireEvent.change(screen.getByRole("combobox", { name: "What to block" }), { target: { value: "allow" } });
  fireEvent.change(screen.getByRole("textbox", { name: "Allow network" }), { target: { value: "192.0.2.0/24" } });
  expect(screen.getByRole("spinbutton", { name: "Block for (minutes)" })).toHaveProperty("disabled", true);
  await act(async () => {
    fireEvent.click(screen.getByRole("button", { name: "Allow" }));
  });
  expect(onBlock).toHaveBeenLastCalledWith({ name: "signInsPerAddress", target: { network: "192.0.2.0/24" }, override: { allow: true } });
  expect(screen.getByRole("status").textContent).toBe("Allowed network 192.0.2.0/24 of signInsPerAddress: never limited.");
});

test("the form sends nothing without a key or minutes, and shows the server's refusal, keeping what was typed", async () => {
  const { onBlock } = show();
  await block("", "5", "");
  expect(screen.getByRole("status").textContent).toBe("Name the key to block.");
  await block("key-c", "0", "");
  expect(screen.getByRole("status").textContent).toBe('Block for a positive number of minutes, not "0".');
  expect(onBlock).not.toHaveBeenCalled();

  // admin.ts refuses a caller who isn't an admin with a string, and bad input with InvalidRateLimit data.
  onBlock.mockRejectedValueOnce(new ConvexError("only admins may see or change rate limits"));
  await block("key-c", "5", "");
  expect(screen.getByRole("status").textContent).toBe("only admins may see or change rate limits");
  const invalid = { kind: "InvalidRateLimit", field: "note", value: "…", message: "note = …: at most 1,000 characters" };
  onBlock.mockRejectedValueOnce(new ConvexError(invalid));
  await block("key-c", "5", "x".repeat(1001));
  expect(screen.getByRole("status").textContent).toBe("note = …: at most 1,000 characters");
  expect(screen.getByRole("textbox", { name: "Block key" })).toHaveProperty("value", "key-c");
});

test("each row's Remove takes that override away, a key's or a tier's", async () => {
  const { onRemove } = show();
  await act(async () => {
    fireEvent.click(screen.getByRole("button", { name: "Remove the override of tier pro" }));
  });
  expect(onRemove).toHaveBeenCalledExactlyOnceWith({ name: "llmRequests", target: { tier: "pro" } });
  expect(screen.getByRole("status").textContent).toBe("Removed the override of tier pro of llmRequests.");
  onRemove.mockRejectedValueOnce(new Error("connection lost"));
  await act(async () => {
    fireEvent.click(screen.getByRole("button", { name: "Remove the override of key key-b" }));
  });
  expect(onRemove).toHaveBeenLastCalledWith({ name: "llmRequests", target: { key: "key-b" } });
  expect(screen.getByRole("status").textContent).toBe("connection lost");
});

test("the metrics totals count the requests decided under an override and refused by a block", () => {
  const counts = { admitted: 8, admittedTokens: 8, reserved: 0, reservedTokens: 0, refused: 3, refusedTokens: 3, overridden: 2, blocked: 1 };
  const buckets = [{ bucket: T0, ...counts }];
  const metrics: MetricsResult = { from: T0, to: T0 + 10 * MINUTE, buckets, total: counts, top: [], unfolded: 0, complete: true };
  show({ name: "apiKeyRequests", metrics });
  expect(screen.getByTestId("admin-totals").textContent).toBe(
    "8 admitted, 0 reserved, 3 refused in the last 10 minutes; 2 decided under an override, 1 refused by a block or lockout.",
  );
});

test("the heat sentence: shown when the metrics carry heat, marked when too hot", () => {
  const counts = { admitted: 900, admittedTokens: 900, reserved: 0, reservedTokens: 0, refused: 0, refusedTokens: 0, overridden: 0, blocked: 0 };
  const base: MetricsResult = { from: T0, to: T0 + 10 * MINUTE, buckets: [{ bucket: T0, ...counts }], total: counts, top: [], unfolded: 0, complete: true };
  const { view } = show({ name: "apiKeyRequests", metrics: base });
  expect(screen.queryByTestId("admin-heat")).toBeNull();
  const heat = { writesPerShard: 15, samples: 1, mutationMs: 25, maxWritesPerShard: 8, hot: true, recommend: { applyUpdates: "transactionally" as const, shards: 2 } };
  view.rerender(<AdminView {...props({ name: "apiKeyRequests", metrics: { ...base, heat } })} />);
  const line = screen.getByTestId("admin-heat");
  expect(line.textContent).toBe("Busiest minute: 15 writes a second per shard; the sizing rule allows 8 for 25 ms mutations: too hot, use shards: 2.");
  expect(line.className).toContain("admin-hot");
});

test("the Keys table marks a key blocked now, whose tokens may read full, and no other", () => {
  const status = (key: string | undefined, value: number): KeyStatus => ({
    ...(key === undefined ? {} : { key }),
    value,
    capacity: 5,
    fullIn: value === 5 ? 0 : 12_000,
    idle: false,
    rows: 1,
    pending: 0,
  });
  const keys = done([status(undefined, 5), status("key-a", 4), status("key-b", 5)]);
  const blockAll: OverrideRecord = { target: {}, override: { blockedUntil: T0 + 2 * MINUTE }, updatedAt: T0 };
  const { view } = show({ keys, overrides: done([BLOCK, PRO]) });
  const keyRows = () =>
    within(screen.getByTestId("admin-keys"))
      .getAllByRole("row")
      .slice(1)
      .map((row) => [row.textContent ?? "", row.getAttribute("data-blocked")]);
  expect(keyRows()).toEqual([
    ["(global)5 of 5full", "false"],
    ["key-a4 of 5in 12 s", "false"],
    ["key-b blocked until 09:05:00 UTC5 of 5full", "true"],
  ]);
  // A block of the global key marks "(global)"; a block past its instant marks nothing.
  view.rerender(<AdminView {...props({ keys, overrides: done([BLOCK, blockAll]), now: T0 + 3 * MINUTE })} />);
  expect(keyRows().map(([, blocked]) => blocked)).toEqual(["false", "false", "true"]);
  view.rerender(<AdminView {...props({ keys, overrides: done([BLOCK, blockAll]), now: T0 + MINUTE })} />);
  expect(keyRows()[0]).toEqual(["(global) blocked until 09:02:00 UTC5 of 5full", "true"]);
  view.rerender(<AdminView {...props({ keys, overrides: done([BLOCK]), now: T0 + 5 * MINUTE })} />);
  expect(keyRows().map(([, blocked]) => blocked)).toEqual(["false", "false", "false"]);
});
