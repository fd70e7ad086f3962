// The admin view's model (admin.ts) on explicit instants: the chart's span in whole minutes, the
// minutes filled in where none was listed, the sentence read to screen readers, a key's cells, an
// override's cells (terms in words, blocks in force or lifted), the block the admin's form sets, and
// the sentence saying whether the limit runs too hot.
import { describe, expect, it } from "vitest";
import { DAY, HOUR, MINUTE, type OverrideRecord } from "convex-rate-limiter";
import {
  adminLimits,
  blockRequest,
  busiest,
  chartSpan,
  blocksInForce,
  describeSeries,
  describeTerms,
  heatLine,
  keyCells,
  minuteLabel,
  minuteSeries,
  overrideCells,
  utcLabel,
} from "./admin.js";

const T0 = Date.UTC(2025, 0, 1, 9, 0);
const zero = { admittedTokens: 0, reservedTokens: 0, refusedTokens: 0, blocked: 0, overridden: 0 };

describe("chartSpan", () => {
  it("ends after the minute holding now and starts whole minutes earlier", () => {
    expect(chartSpan(T0 + 30_000, 10)).toEqual({ from: T0 - 9 * MINUTE, to: T0 + MINUTE });
    // At a minute's first ms that minute is the last one shown.
    expect(chartSpan(T0, 1)).toEqual({ from: T0, to: T0 + MINUTE });
    expect(chartSpan(T0 - 1, 1)).toEqual({ from: T0 - MINUTE, to: T0 });
  });
});

describe("minuteSeries", () => {
  it("lists every minute of the span, zero where the metrics list none", () => {
    const series = minuteSeries({
      from: T0,
      to: T0 + 3 * MINUTE,
      buckets: [{ bucket: T0 + MINUTE, admitted: 5, reserved: 1, refused: 2, ...zero }],
    });
    expect(series).toEqual([
      { bucket: T0, admitted: 0, reserved: 0, refused: 0 },
      { bucket: T0 + MINUTE, admitted: 5, reserved: 1, refused: 2 },
      { bucket: T0 + 2 * MINUTE, admitted: 0, reserved: 0, refused: 0 },
    ]);
    expect(busiest(series)).toBe(8);
    expect(busiest([])).toBe(0);
  });
});

describe("describeSeries", () => {
  it("sums the outcomes over the span, in UTC clock times", () => {
    const series = minuteSeries({
      from: T0,
      to: T0 + 2 * MINUTE,
      buckets: [
        { bucket: T0, admitted: 5, reserved: 0, refused: 2, ...zero },
        { bucket: T0 + MINUTE, admitted: 1, reserved: 3, refused: 0, ...zero },
      ],
    });
    expect(describeSeries(series)).toBe("From 09:00 to 09:02 UTC: 6 requests admitted, 3 reserved and 2 refused; at most 7 in one minute.");
    expect(describeSeries(minuteSeries({ from: T0, to: T0 + MINUTE, buckets: [] }))).toBe("No requests from 09:00 to 09:01 UTC.");
    expect(describeSeries([])).toBe("No minutes to show.");
    expect(minuteLabel(T0 + 65 * MINUTE)).toBe("10:05");
  });
});

describe("keyCells", () => {
  it("writes the tokens now of the capacity, and when the key is full again", () => {
    const key = { key: "key-a", value: 2.5, capacity: 5, fullIn: 30_000, idle: false, rows: 1, pending: 0 };
    expect(keyCells(key)).toEqual({ key: "key-a", tokens: "2.5 of 5", full: "in 30 s" });
    expect(keyCells({ ...key, key: undefined, value: 5, fullIn: 0 })).toEqual({ key: "(global)", tokens: "5 of 5", full: "full" });
  });

  it("says until when a key is blocked: its tokens read full, yet every request of it is refused", () => {
    const key = { key: "key-b", value: 5, capacity: 5, fullIn: 0, idle: false, rows: 1, pending: 0 };
    expect(keyCells(key, { until: T0 + 5 * MINUTE, now: T0 })).toEqual({
      key: "key-b",
      tokens: "5 of 5",
      full: "full",
      blocked: "blocked until 09:05:00 UTC",
    });
  });
});

describe("blocksInForce", () => {
  it("maps each key blocked at now to the block's end: not a lifted block, a tier's override or terms", () => {
    const at = (target: OverrideRecord["target"], override: OverrideRecord["override"]): OverrideRecord => ({ target, override, updatedAt: T0 });
    const bucket = { kind: "token bucket", rate: 1, period: MINUTE } as const;
    const blocks = blocksInForce(
      [
        at({ key: "key-b" }, { blockedUntil: T0 + MINUTE }),
        at({}, { blockedUntil: T0 + 2 * MINUTE }),
        at({ key: "lifted" }, { blockedUntil: T0 }),
        at({ key: "terms" }, { config: bucket }),
        at({ tier: "key-c" }, { blockedUntil: T0 + MINUTE }),
      ],
      T0,
    );
    expect([...blocks]).toEqual([
      ["key-b", T0 + MINUTE],
      [undefined, T0 + 2 * MINUTE],
    ]);
    // A block ends at its instant: not in force from then on.
    expect(blocksInForce([at({ key: "key-b" }, { blockedUntil: T0 + MINUTE })], T0 + MINUTE).size).toBe(0);
  });
});

describe("adminLimits", () => {
  it("lists the limits with metrics first, each group in the app's order", () => {
    const bucket = { kind: "token bucket", rate: 1, period: MINUTE } as const;
    expect(adminLimits({ a: bucket, b: { ...bucket, metrics: true }, c: { ...bucket, metrics: false }, d: { ...bucket, metrics: true } })).toEqual([
      { name: "b", metrics: true },
      { name: "d", metrics: true },
      { name: "a", metrics: false },
      { name: "c", metrics: false },
    ]);
  });
});

describe("utcLabel", () => {
  it("writes the UTC clock time, with the date when it is another day than now", () => {
    expect(utcLabel(T0 + 5 * MINUTE + 7_000, T0)).toBe("09:05:07 UTC");
    // The date counts in UTC: 23:59 and 00:01 are on two days.
    expect(utcLabel(T0 + DAY, T0)).toBe("2025-01-02 09:00 UTC");
    expect(utcLabel(T0 - 10 * HOUR, T0)).toBe("2024-12-31 23:00 UTC");
  });
});

describe("describeTerms", () => {
  it.each([
    // Each kind's own words; the capacity defaults to the rate.
    [{ kind: "token bucket", rate: 200, period: HOUR }, "token bucket: 200 per 60 min, bursts of 200"],
    [{ kind: "token bucket", rate: 200, period: HOUR, capacity: 50, maxReserved: 0 }, "token bucket: 200 per 60 min, bursts of 50, no reservations"],
    [{ kind: "fixed window", rate: 5, period: MINUTE, maxReserved: 2.5 }, "fixed window: 5 per 60 s, up to 5 saved, up to 2.5 reserved"],
    [{ kind: "sliding window", rate: 10, period: 2 * DAY }, "sliding window: 10 in any 2 d"],
    [{ kind: "sliding window", rate: 10, period: MINUTE, exact: false }, "approximate sliding window: 10 in any 60 s"],
    [{ kind: "token bucket", rate: 10, period: HOUR, lockout: DAY }, "token bucket: 10 per 60 min, bursts of 10, locked out 24 h after a refusal"],
  ] as const)("%j reads %j", (config, words) => {
    expect(describeTerms(config)).toBe(words);
  });
});

describe("overrideCells", () => {
  const block: OverrideRecord = { target: { key: "key-b" }, override: { blockedUntil: T0 + 5 * MINUTE }, note: "abuse", updatedAt: T0 };
  it("writes a block in force until its instant, and lifted from that instant on", () => {
    expect(overrideCells(block, T0 + MINUTE)).toEqual({
      id: "key:key-b",
      scope: "key",
      target: "key-b",
      terms: "blocked until 09:05:00 UTC",
      note: "abuse",
      set: "09:00:00 UTC",
      blocking: true,
    });
    expect(overrideCells(block, T0 + 5 * MINUTE)).toMatchObject({ terms: "blocked until 09:05:00 UTC (lifted)", blocking: false });
  });

  it("writes a tier's terms, and the global key apart from a key named (global)", () => {
    const tier: OverrideRecord = { target: { tier: "pro" }, override: { config: { kind: "token bucket", rate: 200, period: HOUR } }, updatedAt: T0 };
    expect(overrideCells(tier, T0)).toEqual({
      id: "tier:pro",
      scope: "tier",
      target: "pro",
      terms: "token bucket: 200 per 60 min, bursts of 200",
      note: "",
      set: "09:00:00 UTC",
      blocking: false,
    });
    const global = overrideCells({ ...block, target: {} }, T0);
    expect(global).toMatchObject({ id: "key:", target: "(global)" });
    expect(overrideCells({ ...block, target: { key: "(global)" } }, T0).id).not.toBe(global.id);
  });

  it("writes a network's allow-list entry and its block", () => {
    const allow: OverrideRecord = { target: { network: "203.0.113.0/24" }, override: { allow: true }, updatedAt: T0 };
    expect(overrideCells(allow, T0)).toMatchObject({ id: "network:203.0.113.0/24", scope: "network", target: "203.0.113.0/24", terms: "allowed (never limited)", blocking: false });
    expect(overrideCells({ ...block, target: { network: "2001:db8::/32" } }, T0)).toMatchObject({ scope: "network", target: "2001:db8::/32", blocking: true });
  });
});

describe("blockRequest", () => {
  it("blocks a network when the form says so", () => {
    expect(blockRequest("signInsPerAddress", { scope: "network", key: " 203.0.113.0/24 ", minutes: "60", note: "" }, T0)).toEqual({
      ok: true,
      args: { name: "signInsPerAddress", target: { network: "203.0.113.0/24" }, override: { blockedUntil: T0 + HOUR } },
    });
    expect(blockRequest("signInsPerAddress", { scope: "network", key: " ", minutes: "60", note: "" }, T0)).toEqual({
      ok: false,
      reason: "Name the network, e.g. 203.0.113.0/24.",
    });
  });

  it("allows a network, with no minutes: an allow-list entry lasts until removed", () => {
    expect(blockRequest("signInsPerAddress", { scope: "allow", key: "192.0.2.0/24", minutes: "", note: " office " }, T0)).toEqual({
      ok: true,
      args: { name: "signInsPerAddress", target: { network: "192.0.2.0/24" }, override: { allow: true }, note: "office" },
    });
  });

  it("blocks the key, trimmed, for the minutes asked from now, with the note if any", () => {
    expect(blockRequest("apiKeyRequests", { key: " key-b ", minutes: "1.5", note: " abuse " }, T0)).toEqual({
      ok: true,
      args: { name: "apiKeyRequests", target: { key: "key-b" }, override: { blockedUntil: T0 + 90_000 }, note: "abuse" },
    });
    // A blank note is no note.
    expect(blockRequest("apiKeyRequests", { key: "key-b", minutes: "5", note: "  " }, T0)).toEqual({
      ok: true,
      args: { name: "apiKeyRequests", target: { key: "key-b" }, override: { blockedUntil: T0 + 5 * MINUTE } },
    });
  });

  it.each([
    [{ key: "  ", minutes: "5", note: "" }, "Name the key to block."],
    // Blank is not 0 minutes; 0, negative and unbounded blocks are refused.
    [{ key: "key-b", minutes: "", note: "" }, 'Block for a positive number of minutes, not "".'],
    [{ key: "key-b", minutes: "0", note: "" }, 'Block for a positive number of minutes, not "0".'],
    [{ key: "key-b", minutes: "-1", note: "" }, 'Block for a positive number of minutes, not "-1".'],
    [{ key: "key-b", minutes: "Infinity", note: "" }, 'Block for a positive number of minutes, not "Infinity".'],
  ])("refuses %j", (form, reason) => {
    expect(blockRequest("apiKeyRequests", form, T0)).toEqual({ ok: false, reason });
  });
});

describe("heatLine", () => {
  const heat = { writesPerShard: 2, samples: 3, mutationMs: 25, maxWritesPerShard: 8, hot: false };
  it("says how hot the busiest minute ran beside what the rule allows", () => {
    expect(heatLine(heat)).toBe("Busiest minute: 2 writes a second per shard; the sizing rule allows 8 for 25 ms mutations.");
  });
  it("too hot: the shards the rule recommends", () => {
    const hot = { ...heat, writesPerShard: 12.5, hot: true, recommend: { applyUpdates: "transactionally" as const, shards: 2 } };
    expect(heatLine(hot)).toBe("Busiest minute: 12.5 writes a second per shard; the sizing rule allows 8 for 25 ms mutations: too hot, use shards: 2.");
  });
  it("too hot for any shards: asynchronous mode, or a shorter limited mutation", () => {
    const hot = { ...heat, writesPerShard: 1000 / 3, hot: true, recommend: { applyUpdates: "asynchronously" as const, shards: 1 } };
    expect(heatLine(hot)).toBe(
      'Busiest minute: 333.33 writes a second per shard; the sizing rule allows 8 for 25 ms mutations: too hot, use applyUpdates: "asynchronously", or a shorter limited mutation.',
    );
  });
});
