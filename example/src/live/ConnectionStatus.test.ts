// What the live header says for each state of the Convex client's connection (connectionOf), so a
// deployment that doesn't answer is never called connected.
import { describe, expect, it } from "vitest";
import { connectionOf } from "./ConnectionStatus.js";

describe("connectionOf", () => {
  it.each([
    ["the websocket is open", { isWebSocketConnected: true, hasEverConnected: true, connectionRetries: 0 }, "connected"],
    ["the first attempt is under way", { isWebSocketConnected: false, hasEverConnected: false, connectionRetries: 0 }, "connecting"],
    ["attempts have failed and none succeeded", { isWebSocketConnected: false, hasEverConnected: false, connectionRetries: 3 }, "unreachable"],
    ["a connection was lost", { isWebSocketConnected: false, hasEverConnected: true, connectionRetries: 1 }, "reconnecting"],
  ] as const)("%s: %s", (_, state, expected) => {
    expect(connectionOf(state)).toBe(expected);
  });
});
