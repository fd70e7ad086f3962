// Property tests (fast-check) of concurrency limits through the real flows over the in-memory lease store (tools/lease-store.ts): random acquire, release, extend and crash histories on two keys with a clock that only moves forward, against a naive model of the leases handed out; DEEP=1 runs many more; replay with FC_SEED (and FC_PATH).
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import type { ConcurrencyConfig } from "../src/shared/shapes/concurrency-validators.js";
import { runs, TIMEOUT } from "../tools/fast-check.js";
import { MemoryLeases } from "../tools/lease-store.js";

type Command =
  | { op: "advance"; ms: number }
  | { op: "acquire"; key: number }
  | { op: "release"; pick: number }
  | { op: "extend"; pick: number; by: number | undefined }
  | { op: "crash"; pick: number }
  | { op: "releaseUnknown" };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ op: fc.constant("advance" as const), ms: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3000 })) }),
  fc.record({ op: fc.constant("acquire" as const), key: fc.integer({ min: 0, max: 1 }) }),
  fc.record({ op: fc.constant("acquire" as const), key: fc.constant(0) }),
  fc.record({ op: fc.constant("release" as const), pick: fc.nat() }),
  fc.record({ op: fc.constant("extend" as const), pick: fc.nat(), by: fc.option(fc.integer({ min: 1, max: 3000 }), { nil: undefined }) }),
  fc.record({ op: fc.constant("crash" as const), pick: fc.nat() }),
  fc.record({ op: fc.constant("releaseUnknown" as const) }),
);

const configArb: fc.Arbitrary<ConcurrencyConfig> = fc.record({
  kind: fc.constant("concurrency" as const),
  capacity: fc.integer({ min: 1, max: 4 }),
  lease: fc.integer({ min: 1, max: 2000 }),
});

/** A lease the model handed out: whose, until when (as the model computes it), and what became of its holder. */
type Held = { handle: string; key: string; expiresAt: number; released: boolean; crashed: boolean };

describe("concurrency: random histories with a moving clock", () => {
  test.prop([configArb, fc.array(command, { maxLength: 80 })], runs(300, 20_000))(
    "unexpired leases never exceed capacity; every decision, retryAfter and count matches the model; a crashed slot frees exactly at its expiry",
    (config, commands) => {
      const store = new MemoryLeases();
      const held: Held[] = [];
      const keys = ["alice", "bob"];
      let now = 1_000_000;
      /** The model's leases of `key` unexpired at `t`: handed out, not released, `expiresAt > t`. */
      const live = (key: string, t: number) => held.filter((h) => h.key === key && !h.released && h.expiresAt > t);
      const args = (key: string) => ({ name: "gen", key, config });
      /** Store and model agree at `t` on what is in flight and on what an acquire would get. */
      const agree = (key: string, t: number) => {
        const mine = live(key, t);
        expect(mine.length).toBeLessThanOrEqual(config.capacity);
        const value = store.value(args(key), t);
        expect(value.inFlight).toBe(mine.length);
        expect(value.earliestExpiry).toBe(mine.length ? Math.min(...mine.map((h) => h.expiresAt)) : undefined);
        const check = store.check(args(key), t);
        if (mine.length < config.capacity) expect(check).toEqual({ ok: true });
        else expect(check).toEqual({ ok: false, retryAfter: Math.min(...mine.map((h) => h.expiresAt)) - t });
      };
      // The holders still able to act: not crashed (a crashed holder never calls again).
      const pick = (n: number) => {
        const acting = held.filter((h) => !h.crashed);
        return acting.length ? acting[n % acting.length] : undefined;
      };

      for (const c of commands) {
        switch (c.op) {
          case "advance": {
            const to = now + c.ms;
            // Every crashed lease expiring in (now, to]: held at E - 1, free at E, exactly.
            for (const h of held) {
              if (!h.crashed || h.released || !(h.expiresAt > now && h.expiresAt <= to)) continue;
              const e = h.expiresAt;
              expect(store.value(args(h.key), e - 1).inFlight).toBe(live(h.key, e - 1).length);
              expect(live(h.key, e - 1)).toContain(h);
              expect(live(h.key, e)).not.toContain(h);
              agree(h.key, e - 1);
              agree(h.key, e);
            }
            now = to;
            break;
          }
          case "acquire": {
            const key = keys[c.key] ?? "alice";
            const before = live(key, now);
            const result = store.acquire(args(key), now);
            if (before.length < config.capacity) {
              expect(result).toMatchObject({ ok: true, expiresAt: now + config.lease });
              if (result.ok) held.push({ handle: result.lease, key, expiresAt: result.expiresAt, released: false, crashed: false });
            } else {
              expect(result).toEqual({ ok: false, retryAfter: Math.min(...before.map((h) => h.expiresAt)) - now });
            }
            break;
          }
          case "release": {
            const h = pick(c.pick);
            if (!h) break;
            const wasLive = !h.released && h.expiresAt > now;
            expect(store.release(h.handle, now)).toEqual({ released: wasLive });
            h.released = true;
            break;
          }
          case "extend": {
            const h = pick(c.pick);
            if (!h) break;
            const result = store.extend(h.handle, c.by, now);
            if (!h.released && h.expiresAt > now) {
              h.expiresAt = Math.max(h.expiresAt, now + (c.by ?? config.lease));
              expect(result).toEqual({ ok: true, expiresAt: h.expiresAt });
            } else {
              expect(result).toEqual({ ok: false });
              h.released = true; // gone either way: an expired lease can't come back
            }
            break;
          }
          case "crash": {
            const h = pick(c.pick);
            if (h) h.crashed = true;
            break;
          }
          case "releaseUnknown":
            expect(store.release("no such lease", now)).toEqual({ released: false });
            break;
        }
        for (const key of keys) agree(key, now);
      }
    },
    TIMEOUT,
  );
});
