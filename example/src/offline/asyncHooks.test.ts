// The browser's stand-in for AsyncLocalStorage (asyncHooks.ts): a store holds across awaits for
// calls that nest and don't overlap, is restored when they finish or throw, and `exit` clears it.
import { describe, expect, it } from "vitest";
import { AsyncLocalStorage } from "./asyncHooks.js";

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe("AsyncLocalStorage (browser stand-in)", () => {
  it("holds the store across awaits until the call's promise settles", async () => {
    const als = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const result = await als.run("outer", async () => {
      seen.push(als.getStore());
      await tick();
      seen.push(als.getStore());
      await als.run("inner", async () => {
        await tick();
        seen.push(als.getStore());
      });
      seen.push(als.getStore());
      return 42;
    });
    expect(result).toBe(42);
    expect(seen).toEqual(["outer", "outer", "inner", "outer"]);
    expect(als.getStore()).toBeUndefined();
  });

  it("restores the store when the call throws, synchronously or not", async () => {
    const als = new AsyncLocalStorage<string>();
    expect(() =>
      als.run("a", () => {
        throw new Error("sync");
      }),
    ).toThrow("sync");
    expect(als.getStore()).toBeUndefined();
    await expect(
      als.run("b", async () => {
        await tick();
        throw new Error("async");
      }),
    ).rejects.toThrow("async");
    expect(als.getStore()).toBeUndefined();
  });

  it("exit runs with no store, then restores it", () => {
    const als = new AsyncLocalStorage<string>();
    als.run("x", () => {
      expect(als.exit(() => als.getStore())).toBeUndefined();
      expect(als.getStore()).toBe("x");
    });
  });

  it("passes arguments through", () => {
    const als = new AsyncLocalStorage<number>();
    expect(als.run(1, (a: number, b: number) => a + b + (als.getStore() ?? 0), 2, 3)).toBe(6);
  });
});
