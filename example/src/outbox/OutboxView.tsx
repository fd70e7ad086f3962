// The outbox: a form that queues an email behind the provider's limit (`emails.queue`, which
// waits until allowed instead of refusing), and the visitor's emails, each queued one with the
// time left until it goes, counting down, and a Cancel button. It only renders; the live wrapper
// supplies the data.
import { useId, useState, type FormEvent } from "react";
import { useNow } from "../useNow.js";

/** An email as the outbox lists it; `runAt` (UTC ms) is when a queued one goes. */
export type OutboxEmail = { id: string; to: string; subject: string; status: "queued" | "sent" | "cancelled"; runAt?: number | undefined };

/** What queueing an email did: queued to go at `runAt`, or refused for `retryAfter` ms. */
export type QueueResult = { ok: true; runAt: number } | { ok: false; retryAfter: number };

export type OutboxViewProps = {
  /** Newest first; undefined while loading. */
  emails: readonly OutboxEmail[] | undefined;
  /** Queues an email; rejects with the server's error (e.g. a malformed address). */
  onQueue: (to: string, subject: string) => Promise<QueueResult>;
  /** Cancels a queued email; resolves to whether it was cancelled (false once it went). */
  onCancel: (id: string) => Promise<boolean>;
  /** The limit in words, e.g. "100 in any hour". */
  policy: string;
};

/** `ms` as the time left, in whole seconds rounded up: "42 s", "3 min 5 s", "2 h 10 min"; "now" when none is left. */
export function timeLeft(ms: number): string {
  if (!(ms > 0)) return "now";
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** What the form says after queueing: when the email goes, or why it wasn't queued. */
function outcomeText(result: QueueResult, now: number): string {
  if (!result.ok) return `The provider's line is over a day long: nothing was queued. Try again in ${timeLeft(result.retryAfter)}.`;
  return result.runAt <= now ? "Queued: it goes now." : `Queued: it goes in ${timeLeft(result.runAt - now)}, after the emails queued before it.`;
}

export function OutboxView({ emails, onQueue, onCancel, policy }: OutboxViewProps) {
  const id = useId();
  const [to, setTo] = useState("");
  const [subject, setSubject] = useState("");
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<string>();
  const waiting = emails?.some((e) => e.status === "queued") ?? false;
  // The countdowns tick while anything is queued. Times are the server's; a clock a little off
  // shows a second or two off.
  const now = useNow(1000, waiting);

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (busy || to.trim() === "") return;
    setBusy(true);
    try {
      setOutcome(outcomeText(await onQueue(to.trim(), subject), Date.now()));
      setTo("");
      setSubject("");
    } catch (error) {
      setOutcome(error instanceof Error ? error.message : "The email could not be queued.");
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="outbox">
      <p className="panel-note">{policy}</p>
      <form className="outbox-form" onSubmit={submit}>
        <label htmlFor={`${id}-to`}>To</label>
        <input id={`${id}-to`} type="email" value={to} placeholder="friend@example.com" onChange={(e) => setTo(e.target.value)} />
        <label htmlFor={`${id}-subject`}>Subject</label>
        <input id={`${id}-subject`} type="text" value={subject} onChange={(e) => setSubject(e.target.value)} />
        <button type="submit" disabled={busy || to.trim() === ""}>
          {busy ? "Queueing…" : "Queue"}
        </button>
      </form>
      <p className="outbox-outcome" role="status">
        {outcome ?? ""}
      </p>
      {emails === undefined ? (
        <p>Loading…</p>
      ) : emails.length === 0 ? (
        <p>No emails yet.</p>
      ) : (
        <ul className="outbox-list" aria-label="Your emails">
          {emails.map((email) => (
            <li key={email.id} className={`outbox-email ${email.status}`}>
              <span className="outbox-to">{email.to}</span> <span className="outbox-subject">{email.subject}</span>{" "}
              {email.status === "queued" ? (
                <>
                  <span className="outbox-when">{email.runAt !== undefined && email.runAt > now ? `goes in ${timeLeft(email.runAt - now)}` : "going now"}</span>{" "}
                  <button type="button" onClick={() => void onCancel(email.id)} aria-label={`Cancel the email to ${email.to}`}>
                    Cancel
                  </button>
                </>
              ) : (
                <span className="outbox-when">{email.status}</span>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
