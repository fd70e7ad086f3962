// The sign-up button: disabled, counting down, while this hour's free-trial sign-ups (the app-wide
// `freeTrialSignUp` window) are used up. `useRateLimit` re-renders by itself when the window
// reopens; `useNow` only refreshes the countdown text, once a second while it shows.
// #region signUpButton
import { useRateLimit } from "convex-rate-limiter/react";
import { api } from "../../convex/_generated/api.js";
import { useNow } from "../useNow.js";

export function SignUpButton({ onClick }: { onClick: () => void }) {
  const { status } = useRateLimit(api.signups.getRateLimit, { getServerTimeMutation: api.signups.getServerTime });
  const now = useNow(1000, status?.ok === false);
  if (status?.ok !== false) return <button disabled={status === undefined} onClick={onClick}>Sign up</button>;
  return <button disabled>Sign-ups reopen in {Math.ceil((status.retryAt - now) / 1000)} s</button>;
}
// #endregion signUpButton
