// The header's word on the deployment, from the Convex client's own connection state: connected,
// still connecting, or failing to connect (retrying), so a deployment that doesn't answer is never
// reported as connected.
import { useConvex, useConvexConnectionState } from "convex/react";

/** Where the client's connection stands, in the header's words. */
export type Connection = "connected" | "connecting" | "unreachable" | "reconnecting";

/**
 * connectionOf reads the client's state: connected while its websocket is open; before it has
 * ever connected, "connecting" on the first attempt and "unreachable" once an attempt has failed;
 * after a connection was lost, "reconnecting".
 */
export function connectionOf(state: { isWebSocketConnected: boolean; hasEverConnected: boolean; connectionRetries: number }): Connection {
  if (state.isWebSocketConnected) return "connected";
  if (state.hasEverConnected) return "reconnecting";
  return state.connectionRetries > 0 ? "unreachable" : "connecting";
}

/** ConnectionStatus says whether the page is connected to the deployment. Inside a ConvexProvider. */
export function ConnectionStatus() {
  const connection = connectionOf(useConvexConnectionState());
  const url = useConvex().url;
  const text: Record<Connection, string> = {
    connected: "Live: connected to your deployment.",
    connecting: `Live: connecting to ${url}…`,
    unreachable: `Live: can't reach your deployment at ${url}; still trying. Is it running (npm run dev)?`,
    reconnecting: "Live: the connection to your deployment was lost; reconnecting…",
  };
  return (
    <span className={`connection connection-${connection}`} data-testid="connection" data-state={connection} role="status">
      {text[connection]}
    </span>
  );
}
