// waitFlow's and runAtFlow's edges, pure with explicit instants: the messages of a bad maxWait and count, a bad tier refused before anything is read, the key's phase (a fixed window without start), a tier's block, refusals that write nothing, and an outcome's optional fields absent when unset.
import { describe, expect, test } from "vitest";
import { checkWait, MAX_MAX_WAIT, runAtFlow, validateMaxWait, waitFlow, type WaitArgs, type WaitOutcome } from "../src/shared/flow/wait.js";
import { answerRead, runPlan, type KeyInMemory, type KeyRead, type KeyRow, type RowQuery } from "../src/shared/shapes/rows.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { resolvePhase } from "../src/shared/shards/layout.js";
import { errorData } from "./error-data.js";

const T0 = 1_000_000;
const plain: RateLimitConfig = { kind: "token bucket", rate: 2, period: 2000 };
// A fixed window without `start`: each name and key gets its own phase.
const phased: RateLimitConfig = { kind: "fixed window", rate: 1, period: 1000 };

/** Runs a flow over a key held in memory, recording the reads it makes. */
function drive<R>(flow: Generator<RowQuery, R, KeyRead<string>>, key: Partial<KeyInMemory<string>> = {}) {
  const reads: RowQuery[] = [];
  const result = runPlan(flow, (q) => {
    reads.push(q);
    return answerRead({ rows: [], pending: [], ...key }, q);
  });
  return { reads, result };
}
const waitFor = (args: WaitArgs, key: Partial<KeyInMemory<string>> = {}, queuedUntil?: number): WaitOutcome<string> =>
  drive(waitFlow<string>(args, T0, () => 0, queuedUntil), key).result;

/** The key as the store would hold it after a first wait's writes: the row it inserted and the terms it recorded. */
function after(outcome: WaitOutcome<string>): Partial<KeyInMemory<string>> {
  const rows: KeyRow<string>[] = [];
  const known = new Map<number, string>();
  for (const op of outcome.ops) {
    if (op.op === "insert") rows.push({ id: "r", shard: op.shard, ...op.fields } as KeyRow<string>);
    else if (op.op === "terms") known.set(op.hash, op.terms);
    else throw new Error(`unexpected write ${JSON.stringify(op)}`);
  }
  expect(rows).toHaveLength(1);
  return { rows, known };
}

/** The start of the window after the one holding `at`, for a window of 1000 ms at `phase`. */
const nextWindow = (at: number, phase: number) => at - ((((at - phase) % 1000) + 1000) % 1000) + 1000;

describe("bad input, before anything is read", () => {
  test.each([
    ["a negative maxWait", -1, "maxWait = -1: must be a finite number of ms from 0 to 2592000000"],
    ["a maxWait past 30 days", MAX_MAX_WAIT + 1, "maxWait = 2592000001: must be a finite number of ms from 0 to 2592000000"],
    ["an infinite maxWait", Infinity, "maxWait = Infinity: must be a finite number of ms from 0 to 2592000000"],
  ])("%s names maxWait and its bounds", (_why, maxWait, message) => {
    expect(errorData(() => validateMaxWait(maxWait, MAX_MAX_WAIT))).toStrictEqual({ kind: "InvalidRateLimit", field: "maxWait", value: String(maxWait), message });
  });

  test("the bounds are inclusive: 0 and 30 days are accepted", () => {
    expect(() => validateMaxWait(0, MAX_MAX_WAIT)).not.toThrow();
    expect(() => validateMaxWait(MAX_MAX_WAIT, MAX_MAX_WAIT)).not.toThrow();
  });

  test("a count of 0, which `limit` takes as a peek, is refused: work that takes no tokens needs no limit", () => {
    expect(errorData(() => checkWait({ maxWait: 1000, count: 0, config: plain }))).toStrictEqual({
      kind: "InvalidRateLimit",
      field: "count",
      value: "0",
      message: "count = 0: must be > 0: work that takes no tokens needs no limit",
    });
  });

  test("a tier of 1025 characters: bad input naming the tier, and no read (not even the tier's)", () => {
    const tier = "t".repeat(1025);
    const { reads, result } = (() => {
      const reads: RowQuery[] = [];
      try {
        runPlan(waitFlow<string>({ name: "n", config: plain, maxWait: 1000, tier }, T0, () => 0), (q) => {
          reads.push(q);
          return answerRead({ rows: [], pending: [] }, q);
        });
      } catch (error) {
        return { reads, result: errorData(() => { throw error; }) };
      }
      return { reads, result: "admitted" };
    })();
    // A long value is shown quoted and cut at 80 characters.
    const shown = `"${"t".repeat(76)}...`;
    expect(result).toStrictEqual({ kind: "InvalidRateLimit", field: "tier", value: shown, message: `tier = ${shown}: is 1025 characters; at most 1024 are allowed` });
    expect(reads).toStrictEqual([]);
  });
});

describe("the key's phase: a fixed window without start, 1 a window", () => {
  const pa = resolvePhase(phased, "n", "a");
  const pNone = resolvePhase(phased, "n", undefined);

  test("the key and the keyless limit have different phases (else the cases below couldn't tell them apart)", () => {
    expect(nextWindow(T0, pa)).not.toBe(nextWindow(T0, pNone));
  });

  test("waitFlow: the first wait runs now; the second, on the row it wrote, at the start of the key's next window", () => {
    const first = waitFor({ name: "n", key: "a", config: phased, maxWait: 10_000 });
    expect(first.result).toStrictEqual({ ok: true, runAt: T0 });
    const second = waitFor({ name: "n", key: "a", config: phased, maxWait: 10_000 }, after(first));
    expect(second.result).toStrictEqual({ ok: true, runAt: nextWindow(T0, pa) });
  });

  test("runAtFlow (getValue with wait): the same instant as the key's next wait would get", () => {
    const first = waitFor({ name: "n", key: "a", config: phased, maxWait: 10_000 });
    const { result } = drive(runAtFlow<string>({ name: "n", key: "a", config: phased }, T0, () => 0), after(first));
    expect(result).toBe(nextWindow(T0, pa));
  });

  test("runAtFlow for the keyless limit: its own phase", () => {
    const first = waitFor({ name: "n", config: phased, maxWait: 10_000 });
    const { result } = drive(runAtFlow<string>({ name: "n", config: phased }, T0, () => 0), after(first));
    expect(result).toBe(nextWindow(T0, pNone));
  });
});

describe("a tier blocked until T0 + 5000", () => {
  const tiers = new Map([["gold", { blockedUntil: T0 + 5000 }]]);

  test("runAtFlow with the tier: no instant (the block refuses); without it: now", () => {
    expect(drive(runAtFlow<string>({ name: "n", tier: "gold", config: plain }, T0, () => 0), { tiers }).result).toBe(undefined);
    expect(drive(runAtFlow<string>({ name: "n", config: plain }, T0, () => 0), { tiers }).result).toBe(T0);
  });

  test("runAtFlow reads the tier's override only when given a tier", () => {
    expect(drive(runAtFlow<string>({ name: "n", tier: "gold", config: plain }, T0, () => 0), { tiers }).reads[0]).toStrictEqual({ read: "tier", tier: "gold" });
  });

  test("waitFlow refuses until the block ends, writing nothing; no event when the limit records no metrics", () => {
    expect(waitFor({ name: "n", tier: "gold", config: plain, maxWait: 10_000 }, { tiers })).toStrictEqual({ result: { ok: false, retryAfter: 5000 }, ops: [], shards: [0] });
  });

  test("with metrics, the refusal carries its event and still writes nothing", () => {
    const outcome = waitFor({ name: "n", tier: "gold", config: { ...plain, metrics: true }, maxWait: 10_000 }, { tiers });
    expect(outcome.result).toStrictEqual({ ok: false, retryAfter: 5000 });
    expect(outcome.ops).toStrictEqual([]);
    expect(outcome.event?.outcome).toBe("refused");
  });
});

describe("a wait longer than maxWait: refused, nothing written", () => {
  test("an empty token bucket (1 back in 1000 ms), maxWait 400: refused, retry after 600 ms; with metrics, its event says refused", () => {
    const row: KeyRow<string> = { id: "r", shard: 0, value: 0, ts: T0, shards: 1, kind: "token bucket" };
    expect(waitFor({ name: "n", config: plain, maxWait: 400 }, { rows: [row] })).toStrictEqual({ result: { ok: false, retryAfter: 600 }, ops: [], shards: [0] });
    const metered = waitFor({ name: "n", config: { ...plain, metrics: true }, maxWait: 400 }, { rows: [row] });
    expect([metered.result, metered.ops, metered.event?.outcome]).toStrictEqual([{ ok: false, retryAfter: 600 }, [], "refused"]);
  });
});

describe("an accepted wait's outcome has no field it didn't set", () => {
  test("not a dry run: no wouldRefuse, and no event without metrics", () => {
    const outcome = waitFor({ name: "n", config: plain, maxWait: 10_000 });
    expect(Object.keys(outcome).sort()).toStrictEqual(["ops", "result", "shards"]);
    expect(outcome.result).toStrictEqual({ ok: true, runAt: T0 });
  });

  test("a dry run over an empty bucket admits now and reports the wait it would have given", () => {
    const row: KeyRow<string> = { id: "r", shard: 0, value: 0, ts: T0, shards: 1, kind: "token bucket" };
    const outcome = waitFor({ name: "n", config: { ...plain, dryRun: true }, maxWait: 10_000 }, { rows: [row] });
    expect(outcome.wouldRefuse).toStrictEqual({ retryAfter: 1000 });
  });
});
