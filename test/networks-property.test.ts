// Network entries through the published register() helper, as a property (fast-check): after any
// sequence of entries set and removed (nested, adjacent, the same network again under another
// form), every address is decided by the longest prefix holding it, as a naive scan of the entries
// says, and `getValue` names that entry. Exercises the intervals' rewrite on the admin path and the
// one-read lookup on the request path. The clock moves a millisecond before each call.
import { fc, test } from "@fast-check/vitest";
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, vi } from "vitest";
import { HOUR } from "../src/client/index.js";
import { canonicalNetwork, formatAddress, networkContains, networkEnd, parseAddress, parseNetwork } from "../src/shared/overrides/address.js";
import { runs } from "../tools/fast-check.js";
import type * as networks from "./app/networks.js";
import { makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ networks: typeof networks }>;
const T0 = Date.UTC(2030, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

/** A network inside 10.0.0.0/16 (prefixes /16 to /32), so that entries nest and touch often. */
const networkArb = fc.record({ low: fc.integer({ min: 0, max: 0xffff }), prefix: fc.integer({ min: 16, max: 32 }) }).map(({ low, prefix }) => {
  const host = 32 - prefix;
  const bits = host === 32 ? 0 : ((low >>> host) << host) >>> 0;
  return `10.0.${bits >>> 8}.${bits & 255}/${prefix}`;
});
const addressArb = fc.integer({ min: 0, max: 0xffff }).map((low) => `10.0.${low >>> 8}.${low & 255}`);
const formArb = fc.constantFrom<"block" | "allow">("block", "allow");
const opArb = fc.record({ remove: fc.boolean(), at: fc.nat(), form: formArb, spelling: fc.boolean() });

describe("network entries, through the component", () => {
  test.prop([fc.array(networkArb, { minLength: 1, maxLength: 6 }), fc.array(opArb, { minLength: 1, maxLength: 10 }), fc.array(addressArb, { minLength: 1, maxLength: 8 })], runs(20, 500))(
    "every address is decided by the longest prefix holding it",
    async (pool, ops, probes) => {
      const t = makeTest();
      let now = T0;
      const tick = () => vi.setSystemTime(++now);
      const entries = new Map<string, "block" | "allow">();
      for (const op of ops) {
        const network = pool[op.at % pool.length]!;
        // Spelled as IPv4-mapped IPv6 half the time: one entry either way.
        const text = op.spelling ? `::ffff:${network.replace(/\/(\d+)$/, (_, p: string) => `/${96 + Number(p)}`)}` : network;
        tick();
        if (op.remove) {
          const had = await t.mutation(api.networks.remove, { name: "signIn", target: { network: text } });
          expect(had).toBe(entries.delete(network));
        } else {
          await t.mutation(api.networks.set, { name: "signIn", target: { network: text }, override: op.form === "block" ? { blockedUntil: T0 + HOUR } : { allow: true } });
          entries.set(network, op.form);
        }
      }
      // Besides the random addresses, each network's first and last, and the ones just outside.
      const edges = pool.flatMap((text) => {
        const net = parseNetwork(text, "network");
        const end = networkEnd(net);
        return [net.start - 1n, net.start, end, end + 1n].map((value) => formatAddress({ value, v4: true }));
      });
      for (const ip of [...probes, ...edges]) {
        const address = parseAddress(ip, "ip").value;
        const holding = [...entries.keys()]
          .map((text) => ({ text, net: parseNetwork(text, "network") }))
          .filter(({ net }) => networkContains(net, address))
          .sort((a, b) => b.net.prefix - a.net.prefix)[0];
        tick();
        const value = await t.query(api.networks.value, { name: "signIn", key: ip, ip });
        if (holding === undefined) {
          expect(value).not.toHaveProperty("network");
          continue;
        }
        expect(value.network).toBe(canonicalNetwork(holding.text, "network"));
        if (entries.get(holding.text) === "allow") expect(value).toMatchObject({ by: "network", allowed: true });
        else expect(value).toMatchObject({ blockedBy: "network", blockedUntil: T0 + HOUR });
      }
    },
  );
});
