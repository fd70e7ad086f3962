// The chat box: a message list and a Send button that disables itself, with a countdown, while the
// sender is rate limited. It only renders; the live and offline wrappers supply the data.
import { isRateLimitError } from "convex-rate-limiter";
import { useId, useState, type FormEvent } from "react";
import { useNow } from "../useNow.js";

/** The limit's status, in `useRateLimit`'s shape: undefined while loading; `retryAt` in client ms. */
export type SendStatus = { ok: true; retryAt?: undefined } | { ok: false; retryAt: number } | undefined;

export type ChatMessage = { id: string; author: string; body: string; time: number };

export type ChatViewProps = {
  /** Newest first; undefined while loading. */
  messages: readonly ChatMessage[] | undefined;
  status: SendStatus;
  /** Sends a message; rejects with the server's error (e.g. a `RateLimited` `ConvexError`). */
  onSend: (body: string) => Promise<void>;
  /** The limit in words, e.g. "Bursts of up to 3, then one every 6 s." */
  policy: string;
};

/** The most characters a message may have (the server's limit too). */
const MAX_LENGTH = 1000;

function errorText(error: unknown): string {
  if (isRateLimitError(error)) return `Slow down: try again in ${Math.ceil(error.data.retryAfter / 1000)} s.`;
  if (error instanceof Error) return error.message;
  return "The message could not be sent.";
}

export function ChatView({ messages, status, onSend, policy }: ChatViewProps) {
  const id = useId();
  const [body, setBody] = useState("");
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const limited = status !== undefined && !status.ok;
  const now = useNow(250, limited);
  const secondsLeft = status !== undefined && !status.ok ? Math.max(1, Math.ceil((status.retryAt - now) / 1000)) : 0;
  const empty = body.trim() === "";

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (empty || sending || status === undefined || !status.ok) return;
    setSending(true);
    setError(undefined);
    try {
      await onSend(body.trim());
      setBody("");
    } catch (err) {
      setError(errorText(err));
    } finally {
      setSending(false);
    }
  };

  let label = "Send";
  if (status === undefined) label = "Loading…";
  else if (!status.ok) label = `Wait ${secondsLeft} s`;
  else if (sending) label = "Sending…";

  return (
    <div className="chat">
      <form className="chat-form" onSubmit={submit}>
        <label htmlFor={`${id}-body`} className="visually-hidden">
          Message
        </label>
        <input
          id={`${id}-body`}
          type="text"
          value={body}
          maxLength={MAX_LENGTH}
          placeholder="Say something"
          autoComplete="off"
          onChange={(e) => setBody(e.target.value)}
        />
        <button type="submit" disabled={empty || sending || !status?.ok} aria-describedby={`${id}-status`}>
          {label}
        </button>
      </form>
      <p id={`${id}-status`} className={`chat-status${limited ? " limited" : ""}`} role="status">
        {status === undefined && "Checking the limit…"}
        {status?.ok === true && policy}
        {status !== undefined &&
          !status.ok &&
          `Rate limited: sending resumes at ${new Date(status.retryAt).toLocaleTimeString()}.`}
      </p>
      {error !== undefined && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <ol className="chat-messages" aria-label="Messages, newest first">
        {messages === undefined && <li className="muted">Loading messages…</li>}
        {messages?.length === 0 && <li className="muted">No messages yet.</li>}
        {messages?.map((m) => (
          <li key={m.id}>
            <span className="chat-author">{m.author}</span> <span className="chat-body">{m.body}</span>{" "}
            <time className="muted" dateTime={new Date(m.time).toISOString()}>
              {new Date(m.time).toLocaleTimeString()}
            </time>
          </li>
        ))}
      </ol>
    </div>
  );
}
