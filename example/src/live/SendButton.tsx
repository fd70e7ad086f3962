// A complete Send button for the README: it disables itself while the sender is rate limited and
// counts down to the instant it may send again. `useRateLimit` re-renders at `retryAt` by itself;
// the quarter-second ticks only refresh the countdown text.
// #region sendButton
import { useSessionId, useSessionMutation } from "convex-helpers/react/sessions";
import { isRateLimitError } from "convex-rate-limiter";
import { useRateLimit } from "convex-rate-limiter/react";
import { useEffect, useState } from "react";
import { api } from "../../convex/_generated/api.js";

export function SendButton({ body, onSent }: { body: string; onSent: () => void }) {
  const [sessionId] = useSessionId();
  const { status } = useRateLimit(api.messages.getRateLimit, {
    // A hint: the server keys the limit by the signed-in user, else by this session.
    ...(sessionId === undefined ? {} : { key: sessionId }),
    // Measures the browser's clock against the server's, so the countdown is exact.
    getServerTimeMutation: api.messages.getServerTime,
  });
  const send = useSessionMutation(api.messages.send);
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string>();
  const secondsLeft = useSecondsUntil(status?.retryAt);

  const onClick = async () => {
    setSending(true);
    setError(undefined);
    try {
      await send({ body });
      onSent();
    } catch (e) {
      // Another tab may have taken the last token first; `status` catches up by itself.
      setError(isRateLimitError(e) ? "Too fast, wait a moment." : "Could not send.");
    } finally {
      setSending(false);
    }
  };

  if (status === undefined) return <button disabled>Loading…</button>;
  return (
    <>
      <button disabled={!status.ok || sending || body === ""} onClick={onClick}>
        {status.ok ? "Send" : `Send again in ${secondsLeft} s`}
      </button>
      {error && <p role="alert">{error}</p>}
    </>
  );
}

/** Whole seconds (rounded up) until client time `at` in ms, refreshed 4 times a second; 0 without `at`. */
function useSecondsUntil(at: number | undefined): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (at === undefined) return;
    setNow(Date.now());
    const id = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(id);
  }, [at]);
  return at === undefined ? 0 : Math.max(1, Math.ceil((at - now) / 1000));
}
// #endregion sendButton
