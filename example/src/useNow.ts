// A clock for rendering countdowns and live charts.
// #region useNow
import { useEffect, useState } from "react";

/**
 * useNow returns `Date.now()` (ms), re-rendering every `intervalMs` while `active`. When inactive
 * it keeps the last value and schedules nothing.
 */
export function useNow(intervalMs: number, active = true): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const id = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(id);
  }, [intervalMs, active]);
  return now;
}
// #endregion useNow
