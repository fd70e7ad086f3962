// The chat box against the deployment: `messages.send` is limited per session by the app's
// `sendMessage` limit, and `useRateLimit` disables Send, with a countdown, until a token is back.
import { useQuery } from "convex/react";
import { useSessionId, useSessionMutation } from "convex-helpers/react/sessions";
import { useRateLimit } from "convex-rate-limiter/react";
import { api } from "../../convex/_generated/api.js";
import { rateLimiter } from "../../convex/limits.js";
import { ChatView, type ChatMessage } from "../chat/ChatView.js";
import { describePolicy } from "../playground/config.js";

export function LiveChat() {
  const [sessionId] = useSessionId();
  // #region useRateLimit
  const { status } = useRateLimit(api.messages.getRateLimit, {
    // The server keys the limit by the signed-in user, else by this session.
    ...(sessionId === undefined ? {} : { key: sessionId }),
    getServerTimeMutation: api.messages.getServerTime,
  });
  // #endregion useRateLimit
  const send = useSessionMutation(api.messages.send);
  const list = useQuery(api.messages.list, { limit: 20 });
  const me = sessionId === undefined ? undefined : `session:${sessionId}`;
  const messages: ChatMessage[] | undefined = list?.map((m) => ({
    id: m._id,
    author: m.author === me ? "you" : `visitor ${m.author.slice(-4)}`,
    body: m.body,
    time: m._creationTime,
  }));
  const config = rateLimiter.limits?.sendMessage;
  return (
    <ChatView
      messages={messages}
      status={status}
      onSend={async (body) => {
        await send({ body });
      }}
      policy={config === undefined ? "" : describePolicy(config)}
    />
  );
}
