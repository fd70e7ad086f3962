// The chat box without a deployment: the example app's own `messages.send`, `messages.list` and
// `messages.getRateLimit` run in the page on convex-test (deployment.ts), on the browser's clock,
// for this tab's session. Send's countdown is derived from `getRateLimit` as `useRateLimit` does.
import { calculateRateLimit } from "convex-rate-limiter";
import type { SessionId } from "convex-helpers/server/sessions";
import { useCallback, useEffect, useState } from "react";
import { api } from "../../convex/_generated/api.js";
import { rateLimiter } from "../../convex/limits.js";
import { ChatView, type ChatMessage, type SendStatus } from "../chat/ChatView.js";
import { describePolicy } from "../playground/config.js";
import { Deployment } from "./deployment.js";

/** What the chat shows: the messages, and when one more may be sent (undefined: now). */
type ChatState = { messages: ChatMessage[]; retryAt: number | undefined };

/** Reads the chat's state from the app's own queries, as this session sees it now. */
async function read(app: Deployment, sessionId: SessionId): Promise<ChatState> {
  const me = `session:${sessionId}`;
  const [limit, list] = await app.call(undefined, async (t) => [
    await t.query(api.messages.getRateLimit, { key: sessionId }),
    await t.query(api.messages.list, { limit: 20 }),
  ]);
  // As useRateLimit predicts: one token from the reported row, at the query's instant.
  const now = limit.ts;
  const { retryAfter } = calculateRateLimit({ value: limit.value, ts: limit.ts }, limit.config, now, 1);
  return {
    retryAt: retryAfter === undefined ? undefined : now + retryAfter,
    messages: list.map((m) => ({
      id: m._id,
      author: m.author === me ? "you" : `visitor ${m.author.slice(-4)}`,
      body: m.body,
      time: m._creationTime,
    })),
  };
}

export function OfflineChat() {
  const [app, setApp] = useState<Deployment | undefined>(undefined);
  const [sessionId] = useState(() => crypto.randomUUID() as SessionId);
  const [state, setState] = useState<ChatState | undefined>(undefined);

  useEffect(() => {
    let current = true;
    void Deployment.open().then(async (opened) => {
      const first = await read(opened, sessionId);
      if (!current) return;
      setApp(opened);
      setState(first);
    });
    return () => {
      current = false;
    };
  }, [sessionId]);

  // Re-render when Send may go again; the state itself doesn't change meanwhile.
  const [, setTick] = useState(0);
  const retryAt = state?.retryAt;
  useEffect(() => {
    if (retryAt === undefined) return;
    const id = setTimeout(() => setTick((n) => n + 1), Math.max(0, retryAt - Date.now()));
    return () => clearTimeout(id);
  }, [retryAt]);
  const status: SendStatus =
    state === undefined ? undefined : retryAt !== undefined && retryAt > Date.now() ? { ok: false, retryAt } : { ok: true };

  const onSend = useCallback(
    async (body: string) => {
      if (app === undefined) return;
      try {
        await app.call(undefined, (t) => t.mutation(api.messages.send, { body, sessionId }));
      } finally {
        setState(await read(app, sessionId));
      }
    },
    [app, sessionId],
  );

  const config = rateLimiter.limits?.sendMessage;
  return (
    <ChatView
      messages={state?.messages}
      status={status}
      onSend={onSend}
      policy={config === undefined ? "" : describePolicy(config)}
    />
  );
}
