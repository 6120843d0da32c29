/**
 * `forgestream/react`: `useAgentSession(client, options)` over `useSyncExternalStore`.
 * SSR-safe: nothing here touches `window` at import time; on the server the hook returns an
 * empty snapshot and does no I/O.
 */
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import type { AgentClient, AgentSession } from "./index.js";
import { ForgestreamError } from "./errors.js";
import type { Decision, InputItem } from "./types.js";
import { EMPTY_CHAT_SNAPSHOT, LOADING_CHAT_SNAPSHOT, type ChatSnapshot, type SessionStatus, type ShownTurns } from "./chat.js";
import type { ChatMessage } from "./messages.js";
import { openSession, reopenLater, type OpenSessionOptions } from "./open.js";

export type { OpenSessionOptions } from "./open.js";

/** What `useAgentSession` returns: the live snapshot plus bound actions. */
export interface AgentSessionHandle {
  /** The session, once opened (null while opening or without a client). */
  session: AgentSession | null;
  /**
   * The current immutable snapshot: while the session opens, the history so far once its id is
   * known (a reload shows each timeline page, newest first, before the
   * open finishes), else an empty one with `status: "loading"`; empty without a client.
   */
  snapshot: ChatSnapshot;
  /**
   * `snapshot.messages`: the chat list (user messages, assistant parts, tool states) of the
   * turns in the history window — the newest `shownTurns` (default 20) and every turn after them.
   */
  messages: readonly ChatMessage[];
  /** `snapshot.olderTurns`: how many turns are above the history window (0: none; show no "Show older"). */
  olderTurns: number;
  /**
   * Widens the history window by `count` older turns (default: `shownTurns`, a screenful;
   * `"all"`: every turn) — for a "Show older" button or a scroll to the top. Works while the
   * history still loads; does nothing without a session.
   */
  showOlder: (count?: ShownTurns) => void;
  /** `loading` until the session is open, then `snapshot.status`; `error` when opening failed. */
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
  /**
   * Opens the session again after opening failed (`status: "error"`: the server was down for
   * longer than the history retries, 0.5 + 1 + 2 + 4 s), e.g. behind a "Try again" button.
   * Does nothing while the session is open or opening. An open that failed retryably (not a
   * create) is also reopened by itself (`reopenLater` in open.ts: after 5 s doubling to 60 s, or
   * once back online or visible).
   */
  reopen: () => void;
}

const noSession = (): Promise<never> =>
  Promise.reject(new ForgestreamError("invalid-input", "the session is not open yet", { retryable: true }));

/** The handle's actions on `open` (rejecting, or doing nothing, while no session is open). */
function boundActions(open: AgentSession | null): Pick<AgentSessionHandle, "send" | "respond" | "continueAfterAuth" | "cancel" | "disconnect" | "refresh"> {
  return {
    send: (m, o) => (open ? open.send(m, o) : noSession()),
    respond: (d) => (open ? open.respond(d) : noSession()),
    continueAfterAuth: () => (open ? open.continueAfterAuth() : noSession()),
    cancel: () => (open ? open.cancel() : noSession()),
    disconnect: () => open?.disconnect(),
    refresh: () => open?.refresh(),
  };
}

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
  // The session is the early handle (its history still loading): shown, but not open for actions.
  const [opening, setOpening] = useState(false);
  const [error, setError] = useState<ForgestreamError | null>(null);
  // Bumped by `reopen` after a failed open: the effect below runs again.
  const [attempt, setAttempt] = useState(0);
  // Reopens by itself that failed in a row (`reopenLater`'s waits grow with it).
  const failures = useRef(0);
  const key = JSON.stringify(options);

  useEffect(() => {
    if (!client) return;
    let live = true;
    let opened: AgentSession | null = null;
    // A handle on the session while its history loads (a reload: `restore`), so the chat shows
    // the newest turns as soon as the first page is in; replaced by `opened` when it resolves.
    let early: AgentSession | null = null;
    setError(null);
    const onOpen = (s: AgentSession) => {
      if (!live) return s.close();
      early = s;
      setOpening(true);
      setSession(s);
    };
    openSession(client, options, onOpen).then(
      (s) => {
        opened = s;
        if (live) {
          failures.current = 0;
          setSession(s);
          setOpening(false);
        } else s.close();
        early?.close();
        early = null;
      },
      (e: unknown) => {
        early?.close();
        early = null;
        if (live) {
          setSession(null);
          setOpening(false);
          setError(ForgestreamError.from(e));
        }
      },
    );
    return () => {
      live = false;
      opened?.close();
      early?.close();
      setSession(null);
      setOpening(false);
    };
    // `key` stands for `options` (compared by value, not identity).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client, key, attempt]);

  // A known session that failed to open retryably is opened again by itself (`reopenLater`).
  useEffect(
    () =>
      reopenLater(error, failures.current, () => {
        failures.current += 1;
        setAttempt((n) => n + 1);
      }),
    [error],
  );

  const snapshot = useSyncExternalStore(
    session ? session.subscribe : subscribeNothing,
    // While the session opens (restore reads the history first), `loading`, not an idle empty chat.
    session ? session.getSnapshot : client && !error ? getLoading : getEmpty,
    getEmpty,
  );

  // Actions wait for the open to finish (a restore resolves once it follows the live turn).
  const open = opening ? null : session;
  // One set per `open` (what six `useCallback`s gave), made only when it changes: `useCallback`
  // takes a new closure on every render, and a streaming reply renders once per snapshot.
  const { send, respond, continueAfterAuth, cancel, disconnect, refresh } = useMemo(() => boundActions(open), [open]);
  // The window is view state, not an action: it can widen while the history still loads.
  const showOlder = useCallback((count?: ShownTurns) => session?.showOlder(count), [session]);
  const failed = error !== null;
  const reopen = useCallback(() => {
    if (failed) setAttempt((n) => n + 1);
  }, [failed]);

  const shown = error ?? snapshot.error;
  const status: SessionStatus = error ? "error" : opening ? "loading" : snapshot.status;
  return useMemo(() => {
    const handle = { session: open, snapshot, olderTurns: snapshot.olderTurns, status, error: shown, send, respond, continueAfterAuth, cancel, disconnect, refresh, showOlder, reopen };
    // `messages` is derived on first read (snapshot.messages): an app that renders only the
    // turns/items view never pays for it.
    return Object.defineProperty(handle, "messages", handleMessages) as AgentSessionHandle;
  }, [open, snapshot, status, shown, send, respond, continueAfterAuth, cancel, disconnect, refresh, showOlder, reopen]);
}

/**
 * The handle's `messages` accessor, one for every handle: it reads the handle's own `snapshot`.
 * A closure per handle (one per render while streaming) gave each handle its own hidden class
 * in V8 — a new map per render and megamorphic reads of the handle in the app.
 */
const handleMessages: PropertyDescriptor = {
  enumerable: true,
  get(this: { readonly snapshot: ChatSnapshot }): readonly ChatMessage[] {
    return this.snapshot.messages;
  },
};
