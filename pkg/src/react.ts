/**
 * `forgestream/react`: `useAgentSession(client, options)` over `useSyncExternalStore`.
 * SSR-safe: nothing here touches `window` at import time; on the server the hook returns an
 * empty snapshot and does no I/O.
 */
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from "react";
import type { AgentClient, AgentSession } from "./index.js";
import { ForgestreamError } from "./errors.js";
import type { Decision, InputItem } from "./types.js";
import { EMPTY_CHAT_SNAPSHOT, LOADING_CHAT_SNAPSHOT, type ChatSnapshot, type SessionStatus } from "./chat.js";
import type { ChatMessage } from "./messages.js";
import { openSession, type OpenSessionOptions } from "./open.js";

export type { OpenSessionOptions } from "./open.js";

/** What `useAgentSession` returns: the live snapshot plus bound actions. */
export interface AgentSessionHandle {
  /** The session, once opened (null while opening or without a client). */
  session: AgentSession | null;
  /** The current immutable snapshot (empty until the session is open; `status: "loading"` while it opens). */
  snapshot: ChatSnapshot;
  /** `snapshot.messages`: the chat list (user messages, assistant parts, tool states). */
  messages: readonly ChatMessage[];
  /** `snapshot.status`, or `error` when opening the session failed. */
  status: SessionStatus;
  /**
   * The one error channel: opening the session failed, else `snapshot.error` (the last failed
   * action, else why the connection stopped). Rejected promises carry the same object.
   */
  error: ForgestreamError | null;
  send: (message: string | InputItem[], options?: { interrupt?: boolean }) => Promise<string>;
  respond: (decisions: Decision[]) => Promise<string>;
  continueAfterAuth: () => Promise<string>;
  cancel: () => Promise<void>;
  disconnect: () => void;
  refresh: () => void;
}

const noSession = (): Promise<never> =>
  Promise.reject(new ForgestreamError("invalid-input", "the session is not open yet", { retryable: true }));
const subscribeNothing = () => () => {};
const getEmpty = () => EMPTY_CHAT_SNAPSHOT;
const getLoading = () => LOADING_CHAT_SNAPSHOT;

/**
 * Opens (creates, restores or loads) a session with `client` and keeps the component in sync
 * with it. Pass `null` as the client until `init()` resolved. The session handle is closed (the
 * turn is not cancelled) on unmount or when the options change.
 */
export function useAgentSession(client: AgentClient | null, options: OpenSessionOptions): AgentSessionHandle {
  const [session, setSession] = useState<AgentSession | null>(null);
  const [error, setError] = useState<ForgestreamError | null>(null);
  const key = JSON.stringify(options);

  useEffect(() => {
    if (!client) return;
    let live = true;
    let opened: AgentSession | null = null;
    setError(null);
    openSession(client, options).then(
      (s) => {
        opened = s;
        if (live) setSession(s);
        else s.close();
      },
      (e: unknown) => live && setError(ForgestreamError.from(e)),
    );
    return () => {
      live = false;
      opened?.close();
      setSession(null);
    };
    // `key` stands for `options` (compared by value, not identity).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client, key]);

  const snapshot = useSyncExternalStore(
    session ? session.subscribe : subscribeNothing,
    // While the session opens (restore reads the history first), `loading`, not an idle empty chat.
    session ? session.getSnapshot : client && !error ? getLoading : getEmpty,
    getEmpty,
  );

  const send = useCallback((m: string | InputItem[], o?: { interrupt?: boolean }) => (session ? session.send(m, o) : noSession()), [session]);
  const respond = useCallback((d: Decision[]) => (session ? session.respond(d) : noSession()), [session]);
  const continueAfterAuth = useCallback(() => (session ? session.continueAfterAuth() : noSession()), [session]);
  const cancel = useCallback(() => (session ? session.cancel() : noSession()), [session]);
  const disconnect = useCallback(() => session?.disconnect(), [session]);
  const refresh = useCallback(() => session?.refresh(), [session]);

  const shown = error ?? snapshot.error;
  return useMemo(() => {
    const handle = { session, snapshot, status: error ? ("error" as const) : snapshot.status, error: shown, send, respond, continueAfterAuth, cancel, disconnect, refresh };
    // `messages` is derived on first read (snapshot.messages): an app that renders only the
    // turns/items view never pays for it.
    return Object.defineProperty(handle, "messages", { enumerable: true, get: () => snapshot.messages }) as AgentSessionHandle;
  }, [session, snapshot, error, shown, send, respond, continueAfterAuth, cancel, disconnect, refresh]);
}
