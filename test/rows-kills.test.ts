// The flow/store protocol answered in memory (shapes/rows.ts): each RowQuery kind's exact answer, runPlan/runPlanAsync, keyIdOf.
import { describe, expect, test } from "vitest";
import { answerRead, keyIdOf, runPlan, runPlanAsync, type KeyInMemory, type KeyRead, type KeyRow, type RowQuery } from "../src/shared/shapes/rows.js";
import type { Take } from "../src/shared/shapes/stored.js";

/** A row of shard `shard` whose `value` tells it apart from the key's other rows. */
function row(id: string, shard: number, value: number): KeyRow<string> {
  return { id, shard, value, ts: 1000 + value };
}

function take(shard: number, count: number, ts: number): Take {
  return { shard, count, ts };
}

// Two rows in shard 1, as the index order holds them, so "the first" and "every" differ.
const rows = [row("a", 0, 1), row("b", 1, 2), row("c", 1, 3), row("d", 2, 4)];
const pending = [take(1, 5, 10), take(0, 6, 11), take(1, 7, 12)];
const key: KeyInMemory<string> = { rows, pending };
const none = { rows: [], pending: [] };

describe("answerRead: rows", () => {
  test("shard: the first row of that shard only, no takes unless asked", () => {
    expect(answerRead(key, { read: "shard", shard: 1 })).toStrictEqual({ rows: [rows[1]], pending: [] });
    expect(answerRead(key, { read: "shard", shard: 2 })).toStrictEqual({ rows: [rows[3]], pending: [] });
    expect(answerRead(key, { read: "shard", shard: 3 })).toStrictEqual(none);
  });

  test("shard with pending: that shard's takes, in the order recorded", () => {
    expect(answerRead(key, { read: "shard", shard: 1, pending: true })).toStrictEqual({ rows: [rows[1]], pending: [pending[0], pending[2]] });
    expect(answerRead(key, { read: "shard", shard: 0, pending: true })).toStrictEqual({ rows: [rows[0]], pending: [pending[1]] });
    expect(answerRead(key, { read: "shard", shard: 3, pending: true })).toStrictEqual(none);
  });

  test("any: the key's first row, never takes", () => {
    expect(answerRead(key, { read: "any" })).toStrictEqual({ rows: [rows[0]], pending: [] });
    expect(answerRead({ rows: [], pending }, { read: "any" })).toStrictEqual(none);
  });

  test("all: every row in shard order, takes only when asked", () => {
    expect(answerRead(key, { read: "all" })).toStrictEqual({ rows, pending: [] });
    expect(answerRead(key, { read: "all", pending: true })).toStrictEqual({ rows, pending });
    expect(answerRead({ rows: [], pending: [] }, { read: "all", pending: true })).toStrictEqual(none);
  });

  test("the answer's arrays are copies: a flow changing them leaves the key as held", () => {
    const all = answerRead(key, { read: "all", pending: true });
    expect(all.rows).not.toBe(rows);
    expect(all.pending).not.toBe(pending);
    all.rows.pop();
    all.pending.pop();
    expect(key.rows).toHaveLength(4);
    expect(key.pending).toHaveLength(3);
  });
});

describe("answerRead: terms, tier", () => {
  const known = new Map([[17, "terms-17"]]);

  test("terms: the terms of a known fingerprint, with no rows", () => {
    expect(answerRead({ ...key, known }, { read: "terms", hash: 17 })).toStrictEqual({ rows: [], pending: [], terms: "terms-17" });
  });

  test("terms: an unknown fingerprint, or none known, answers no terms field at all", () => {
    expect(answerRead({ ...key, known }, { read: "terms", hash: 18 })).toStrictEqual(none);
    expect(answerRead(key, { read: "terms", hash: 17 })).toStrictEqual(none);
  });

  test("tier: the tier's override, with no rows; another tier or no tiers: no override field", () => {
    const pro = { blockedUntil: 5000 };
    const tiers = new Map([["pro", pro]]);
    expect(answerRead({ ...key, tiers }, { read: "tier", tier: "pro" })).toStrictEqual({ rows: [], pending: [], override: pro });
    expect(answerRead({ ...key, tiers }, { read: "tier", tier: "free" })).toStrictEqual(none);
    expect(answerRead(key, { read: "tier", tier: "pro" })).toStrictEqual(none);
  });
});

describe("answerRead: network", () => {
  const hex = (n: number) => n.toString(16).padStart(32, "0");
  // Two intervals with a gap between them: [0x10, 0x1f] and [0x30, 0x3f].
  const networks = [
    { start: hex(0x10), end: hex(0x1f), network: "net-a", override: { allow: true as const } },
    { start: hex(0x30), end: hex(0x3f), network: "net-b", override: { blockedUntil: 9 } },
  ];
  const withNets: KeyInMemory<string> = { ...key, networks };
  const a = { rows: [], pending: [], entry: { network: "net-a", override: { allow: true } } };
  const b = { rows: [], pending: [], entry: { network: "net-b", override: { blockedUntil: 9 } } };
  const at = (n: number) => answerRead(withNets, { read: "network", address: hex(n) });

  test("an address at either edge of an interval, or inside it, is held by its entry", () => {
    expect(at(0x10)).toStrictEqual(a);
    expect(at(0x15)).toStrictEqual(a);
    expect(at(0x1f)).toStrictEqual(a);
    expect(at(0x30)).toStrictEqual(b);
    expect(at(0x3f)).toStrictEqual(b);
  });

  test("an address just outside an interval, or between two, is held by none", () => {
    expect(at(0x0f)).toStrictEqual(none);
    expect(at(0x20)).toStrictEqual(none);
    expect(at(0x2f)).toStrictEqual(none);
    expect(at(0x40)).toStrictEqual(none);
  });

  test("the entry is the interval's network and override only, not its bounds", () => {
    expect(Object.keys(at(0x10).entry ?? {})).toEqual(["network", "override"]);
  });

  test("a key without network entries, or with none, answers no entry", () => {
    expect(answerRead(key, { read: "network", address: hex(0x10) })).toStrictEqual(none);
    expect(answerRead({ ...key, networks: [] }, { read: "network", address: hex(0x10) })).toStrictEqual(none);
  });
});

describe("answerRead: an unknown read", () => {
  test("throws, naming the read", () => {
    expect(() => answerRead(key, { read: "nope" } as unknown as RowQuery)).toThrow(new Error('unknown read {"read":"nope"}'));
  });
});

/** A flow that reads shard 0, then every row with takes, and returns what it was sent. */
function* twoReads(): Generator<RowQuery, KeyRead<string>[], KeyRead<string>> {
  const first = yield { read: "shard", shard: 0 };
  const second = yield { read: "all", pending: true };
  return [first, second];
}

describe("runPlan, runPlanAsync", () => {
  const expected = [
    { rows: [rows[0]], pending: [] },
    { rows, pending },
  ];

  test("runPlan sends each read's answer back and returns the flow's result", () => {
    const asked: RowQuery[] = [];
    const result = runPlan(twoReads(), (q) => (asked.push(q), answerRead(key, q)));
    expect(asked).toEqual([{ read: "shard", shard: 0 }, { read: "all", pending: true }]);
    expect(result).toStrictEqual(expected);
  });

  test("runPlanAsync awaits each answer, sends it back and returns the flow's result", async () => {
    const asked: RowQuery[] = [];
    const result = await runPlanAsync(twoReads(), async (q) => (asked.push(q), answerRead(key, q)));
    expect(asked).toEqual([{ read: "shard", shard: 0 }, { read: "all", pending: true }]);
    expect(result).toStrictEqual(expected);
  });

  test("a flow that reads nothing returns at once, its reader never called", async () => {
    function* noReads(): Generator<RowQuery, number, KeyRead<string>> {
      return 7;
    }
    const never = () => {
      throw new Error("no read expected");
    };
    expect(runPlan(noReads(), never)).toBe(7);
    await expect(runPlanAsync(noReads(), never)).resolves.toBe(7);
  });
});

describe("keyIdOf", () => {
  test("one string per name and key, no key distinct from every string key", () => {
    expect(keyIdOf({ name: "n", key: "k" })).toBe('["n","k"]');
    expect(keyIdOf({ name: "n" })).toBe('["n",null]');
    expect(keyIdOf({ name: "n", key: undefined })).toBe('["n",null]');
    expect(keyIdOf({ name: "n", key: "" })).toBe('["n",""]');
    expect(keyIdOf({ name: "n", key: "null" })).toBe('["n","null"]');
  });
});
