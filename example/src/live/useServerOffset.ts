// The offset between the browser's clock and the deployment's, for charts drawn in server time.
import { useConvex } from "convex/react";
import { useEffect, useState } from "react";
import { api } from "../../convex/_generated/api.js";

/**
 * useServerOffset measures `serverTime - clientTime` (ms) once per mount with the playground's
 * `getServerTime` mutation, taking the server's answer as the midpoint of the round trip.
 * 0 until measured (or if the call fails): the chart is then off by the browser's clock error.
 */
export function useServerOffset(): number {
  const convex = useConvex();
  const [offset, setOffset] = useState(0);
  useEffect(() => {
    let live = true;
    const sent = Date.now();
    convex.mutation(api.playground.getServerTime, {}).then(
      (serverTime) => {
        if (live && Number.isFinite(serverTime)) setOffset(Math.round(serverTime - (sent + Date.now()) / 2));
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [convex]);
  return offset;
}
