// The verdict a flow returns (src/shared/flow/request.ts, src/shared/flow/limit-all.ts), as tables with
// explicit instants: whether a call throws, where (the component or the caller), which writes and
// metric events it keeps, and how stale a snapshot it stands on. The component and the client only
// execute it, so these rows are the whole rule.
import { describe, expect, test } from "vitest";
import { limitAllOutcome, mergeRequests } from "../src/shared/flow/limit-all.js";
import { raiseOf, requestFlow, type RequestOutcome } from "../src/shared/flow/request.js";
import { answerRead, runPlan, type KeyRow } from "../src/shared/shapes/rows.js";
import { configTerms, termsHash } from "../src/shared/shards/layout.js";
import type { RateLimitArgs, RateLimitConfig } from "../src/shared/shapes/validators.js";
import type { LimitAllArgs } from "../src/shared/shapes/limit-all-validators.js";

const T0 = 1_000_000;
const TB = "token bucket" as const;
const plain: RateLimitConfig = { kind: TB, rate: 2, period: 2000 };
const counted: RateLimitConfig = { ...plain, metrics: true };
const reserving: RateLimitConfig = { ...counted, maxReserved: 4 };

/** Decides `args` at T0 over a key whose one row holds `value` tokens at T0. */
function decide(args: RateLimitArgs, value: number | null): RequestOutcome<string> {
  const rows: KeyRow<string>[] = value === null ? [] : [{ id: "r", shard: 0, value, ts: T0, shards: 1, kind: TB }];
  return runPlan(requestFlow<string>(args, T0, () => 0), (q) => answerRead({ rows, pending: [] }, q));
}

describe("requestFlow: an outcome has only the fields it sets", () => {
  test.each([
    // [why, args, tokens in the row, the field the outcome has none of]
    ["no metrics: no event", {}, 2, "event"],
    ["no throws: no raise", {}, 2, "raise"],
    ["refused without throws: no raise", {}, 0, "raise"],
    ["transactional, refused: no shed", {}, 0, "shed"],
  ] as [string, Partial<RateLimitArgs>, number, string][])("%s", (_why, args, value, field) => {
    expect(field in decide({ name: "n", config: plain, ...args }, value)).toBe(false);
  });
  test("admitted now: the result is exactly { ok: true }, no retryAfter key", () => {
    expect(decide({ name: "n", config: plain }, 2).result).toStrictEqual({ ok: true });
  });
});

describe("raiseOf: when and where a call throws RateLimited", () => {
  const refused = { ok: false as const, retryAfter: 1000 };
  const reserved = { ok: true as const, retryAfter: 1000 };
  test.each([
    // [why, throws, raiseInCaller, result, writes, event, expected]
    ["no throws: never", false, true, refused, false, true, undefined],
    ["admitted now: never, even with throws", true, true, { ok: true as const }, true, true, undefined],
    ["refused, throws, no event: the component throws", true, true, refused, false, false, false],
    ["refused with an event, the caller throws it: the event is kept", true, true, refused, false, true, true],
    ["refused with an event, the caller didn't offer: the component throws", true, false, refused, false, true, false],
    ["reserved (writes) with an event: the component throws, rolling the reservation back", true, true, reserved, true, true, false],
    ["reserved, nothing written, with an event: the component throws (the caller throws only a refusal)", true, true, reserved, false, true, false],
  ] as const)("%s", (_why, throws, raiseInCaller, result, writes, event, expected) => {
    const raise = raiseOf({ name: "n", throws, raiseInCaller }, result, writes, event);
    if (expected === undefined) expect(raise).toBeUndefined();
    else expect(raise).toEqual({ error: { kind: "RateLimited", name: "n", retryAfter: 1000 }, inCaller: expected });
  });
});

describe("requestFlow's verdict", () => {
  test("a refusal with throws writes nothing and records its event", () => {
    const out = decide({ name: "n", config: counted, throws: true, raiseInCaller: true }, 0);
    expect(out.ops).toEqual([]);
    expect(out.event).toEqual({ outcome: "refused", count: 1 });
    expect(out.raise).toEqual({ error: { kind: "RateLimited", name: "n", retryAfter: 1000 }, inCaller: true });
  });

  test("a reservation with throws is thrown by the component and writes nothing", () => {
    const out = decide({ name: "n", config: reserving, count: 2, reserve: true, throws: true, raiseInCaller: true }, 0);
    expect(out.result).toEqual({ ok: true, retryAfter: 2000 });
    expect(out.ops).toEqual([]);
    expect(out.raise?.inCaller).toBe(false);
  });

  test("a peek records no event; a limit without metrics records none", () => {
    expect(decide({ name: "n", config: counted, count: 0 }, 2).event).toBeUndefined();
    expect(decide({ name: "n", config: plain }, 2).event).toBeUndefined();
    expect(decide({ name: "n", config: counted }, 2).event).toEqual({ outcome: "admitted", count: 1 });
  });

  test("a dry run admits what it would refuse, records the would-be refusal and throws nothing", () => {
    const out = decide({ name: "n", config: { ...counted, dryRun: true }, throws: true }, 0);
    expect(out.result).toEqual({ ok: true });
    expect(out.raise).toBeUndefined();
    expect(out.event).toEqual({ outcome: "refused", count: 1 });
    expect(out.wouldRefuse).toEqual({ retryAfter: 1000 });
  });

  test.each([
    // [why, tokens at T0, count, stands on a stale snapshot]
    ["8 of 8: 7 left, above a quarter of capacity", 8, 1, true],
    ["3 of 8: 2 left, exactly a quarter", 3, 1, true],
    ["2 of 8: 1 left, into the margin", 2, 1, false],
    ["refused", 0, 1, false],
  ] as const)("asynchronous: %s", (_why, value, count, stands) => {
    const out = decide({ name: "n", config: { ...plain, rate: 8, period: 8000, applyUpdates: "asynchronously" }, count }, value);
    expect(out.safeOnStale).toBe(stands);
  });
});

describe("limitAllOutcome: all or nothing, and what each limit records", () => {
  function all(args: Omit<LimitAllArgs, "requests">, values: (number | null)[], configs: RateLimitConfig[]) {
    const { merged, of } = mergeRequests({ requests: configs.map((config, i) => ({ name: `l${i}`, config })), ...args });
    const outcomes = merged.map((r, i) => decide({ ...r, throws: false }, values[i]!));
    return limitAllOutcome(args, merged, outcomes, of);
  }

  test("all admit: every write and every event", () => {
    const out = all({}, [2, 2], [counted, plain]);
    expect(out.result.ok).toBe(true);
    expect(out.writes.map((w) => w.ops.filter((o) => o.op !== "terms").length)).toEqual([1, 1]);
    expect(out.events.map((e) => [e.request.name, e.event.outcome])).toEqual([["l0", "admitted"]]);
  });

  test("one refuses: no writes; the refusal is recorded, the would-be admission isn't", () => {
    const out = all({}, [2, 0, 0], [counted, counted, plain]);
    expect(out.result.ok).toBe(false);
    expect(out.writes).toEqual([]);
    expect(out.events.map((e) => [e.request.name, e.event.outcome])).toEqual([["l1", "refused"]]);
  });

  test("throws: the error names every limit that refused; the caller throws it when that keeps an event", () => {
    const out = all({ throws: true, raiseInCaller: true }, [0, 2, 0], [counted, plain, plain]);
    expect(out.raise).toEqual({
      error: { kind: "RateLimited", name: "l0", retryAfter: 1000, names: ["l0", "l2"] },
      inCaller: true,
    });
    expect(all({ throws: true }, [0, 2], [counted, plain]).raise?.inCaller).toBe(false);
    expect(all({ throws: true, raiseInCaller: true }, [0, 2], [plain, plain]).raise?.inCaller).toBe(false);
  });

  test("throws on a reservation: nothing written, and the component throws (rolling the reservation back)", () => {
    const out = all({ throws: true, raiseInCaller: true, reserve: true }, [0, 2], [reserving, plain]);
    expect(out.result).toMatchObject({ ok: true, retryAfter: 1000 });
    expect(out.writes).toEqual([]);
    expect(out.events.map((e) => [e.request.name, e.event.outcome])).toEqual([["l0", "reserved"]]);
    expect(out.raise).toEqual({ error: { kind: "RateLimited", name: "l0", retryAfter: 1000, names: ["l0"] }, inCaller: false });
  });

  test("throws, all admitted now: nothing to throw, every write kept", () => {
    const out = all({ throws: true, raiseInCaller: true }, [2, 2], [counted, plain]);
    expect(out.raise).toBeUndefined();
    expect(out.writes.map((w) => w.ops.filter((o) => o.op !== "terms").length)).toEqual([1, 1]);
  });

  test("a dry run that would refuse is listed for the log", () => {
    const out = all({}, [0, 2], [{ ...plain, dryRun: true }, plain]);
    expect(out.result.ok).toBe(true);
    expect(out.wouldRefuse.map((w) => [w.request.name, w.retryAfter])).toEqual([["l0", 1000]]);
  });
});

describe("details: what a sharded decision reports from the shards it read", () => {
  const DAY = 86_400_000;
  const sharded: RateLimitConfig = { kind: TB, rate: 40, period: DAY, shards: 4 };
  const h = termsHash(configTerms(sharded));
  // Four full shards of 10; a comfortable shard serves alone, so the decision reads one row.
  const rows: KeyRow<string>[] = [0, 1, 2, 3].map((shard) => ({ id: `r${shard}`, shard, value: 10, ts: T0, h }));
  const decideSharded = (args: Omit<RateLimitArgs, "name" | "config">) =>
    runPlan(requestFlow<string>({ name: "n", config: sharded, ...args }, T0, () => 0.3), (q) => answerRead({ rows, pending: [] }, q));

  test.each([
    // [why, count, expected details]
    ["one read shard after the take, scaled to the whole limit: not exact", 1, { shards: [1], remaining: 36, resetAfter: DAY / 10, exact: false }],
    ["a peek reads every shard: exact, full, nothing to wait for", 0, { shards: [0, 1, 2, 3], remaining: 40, resetAfter: 0, exact: true }],
  ] as const)("%s", (_why, count, expected) => {
    const out = decideSharded({ count, details: true });
    expect(out.result.ok).toBe(true);
    expect(out.result.details).toEqual({ capacity: 40, ...expected });
  });
});

describe("safeOnStale: only an admission that keeps the margin stands on a stale snapshot", () => {
  const hot: RateLimitConfig = { kind: TB, rate: 10, period: 86_400_000, applyUpdates: "asynchronously" };
  test.each([
    // [why, tokens held, count, expected]
    ["an admission leaving half the capacity stands", 10, 5, true],
    ["an admission leaving less than the margin doesn't", 3, 2, false],
    ["a refusal doesn't, though the shard still holds half its capacity", 5, 8, false],
  ] as const)("%s", (_why, value, count, expected) => {
    const out = decide({ name: "n", config: hot, count }, value);
    expect(out.result.ok).toBe(count <= value);
    expect(out.safeOnStale).toBe(expected);
  });
});
