// The sign-up form against the deployment: `signups.signUp` creates a free-trial account, and the
// app-wide `freeTrialSignUp` window (100 an hour, for everyone together) limits it. The button
// counts down while the window is used up.
import { useMutation } from "convex/react";
import { isRateLimitError } from "convex-rate-limiter";
import { ConvexError } from "convex/values";
import { useId, useState } from "react";
import { api } from "../../convex/_generated/api.js";
import { SignUpButton } from "./SignUpButton.js";

/** What the form says after an attempt: the server's reason when it refused. */
function refusal(error: unknown): string {
  if (isRateLimitError(error)) return "Sign-ups are full for now: try again when the button says so.";
  if (error instanceof ConvexError && typeof error.data === "string") return error.data;
  return "Could not sign up.";
}

export function LiveSignUp() {
  const id = useId();
  const signUp = useMutation(api.signups.signUp);
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [outcome, setOutcome] = useState<string>();

  const onClick = async () => {
    if (name.trim() === "" || password === "") {
      setOutcome("Choose a name and a password.");
      return;
    }
    try {
      await signUp({ name: name.trim(), password });
      setOutcome(`Signed up as ${name.trim()}.`);
      setName("");
      setPassword("");
    } catch (error) {
      setOutcome(refusal(error));
    }
  };

  return (
    <div className="signup">
      <label htmlFor={`${id}-name`}>Name</label>
      <input id={`${id}-name`} value={name} autoComplete="off" onChange={(e) => setName(e.target.value)} />
      <label htmlFor={`${id}-password`}>Password</label>
      <input
        id={`${id}-password`}
        type="password"
        value={password}
        autoComplete="new-password"
        onChange={(e) => setPassword(e.target.value)}
      />
      <SignUpButton onClick={() => void onClick()} />
      {outcome !== undefined && <p role="status">{outcome}</p>}
    </div>
  );
}
