// The chat box without a deployment: the app's own `sendMessage` limit, decided in the browser with
// `calculateRateLimit` on the browser's clock. Messages stay in this tab.
import { calculateRateLimit, type RateLimitConfig } from "convex-rate-limiter";
import { useEffect, useMemo, useState } from "react";
import { rateLimiter } from "../../convex/limits.js";
import { ChatView, type ChatMessage, type SendStatus } from "../chat/ChatView.js";
import type { RowState } from "../monitor/model.js";
import { describePolicy } from "../playground/config.js";

/** The chat's limit: the very config the app's `messages.send` is limited by. */
function sendMessageConfig(): RateLimitConfig {
  const config = rateLimiter.limits?.sendMessage;
  if (config === undefined) throw new Error("example/convex/limits.ts names no sendMessage limit");
  return config;
}
const SEND_MESSAGE = sendMessageConfig();

/**
 * useLocalLimit keeps one token bucket in component state. `status` is ready-or-not for one more
 * token, in `useRateLimit`'s shape, and flips back to ok by itself at `retryAt`; `take` spends a
 * token, or returns false when there is none.
 */
function useLocalLimit(config: RateLimitConfig): { status: SendStatus; take: () => boolean } {
  const [state, setState] = useState<RowState | null>(null);
  // When one token is there again, computed from the state's own instant so it is stable.
  const readyAt = useMemo(() => {
    if (state === null) return undefined;
    const { retryAfter } = calculateRateLimit(state, config, state.ts, 1);
    return retryAfter === undefined ? undefined : state.ts + retryAfter;
  }, [state, config]);
  const [, setTick] = useState(0);
  useEffect(() => {
    if (readyAt === undefined) return;
    const id = setTimeout(() => setTick((n) => n + 1), Math.max(0, readyAt - Date.now()));
    return () => clearTimeout(id);
  }, [readyAt]);
  const limited = readyAt !== undefined && readyAt > Date.now();
  const status = useMemo<SendStatus>(
    () => (limited && readyAt !== undefined ? { ok: false, retryAt: readyAt } : { ok: true }),
    [limited, readyAt],
  );
  const take = () => {
    const now = Date.now();
    const next = calculateRateLimit(state, config, now, 1);
    if (next.value < 0) return false;
    setState({ value: next.value, ts: next.ts });
    return true;
  };
  return { status, take };
}

export function OfflineChat() {
  const { status, take } = useLocalLimit(SEND_MESSAGE);
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const onSend = async (body: string) => {
    if (!take()) throw new Error("Rate limited: wait for the countdown.");
    const time = Date.now();
    setMessages((ms) => [{ id: `${time}-${ms.length}`, author: "you", body, time }, ...ms].slice(0, 20));
  };
  return <ChatView messages={messages} status={status} onSend={onSend} policy={describePolicy(SEND_MESSAGE)} />;
}
