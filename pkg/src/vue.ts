/**
 * `forgestream/vue`: `useAgentSession(client, options)`, the same contract as the React hook:
 * the same options, `client` may be `null` until `init()` resolved, and both may be refs or
 * getters — when they change, the handle is closed and the session opened again (options are
 * compared by value). The snapshot is in a `shallowRef` (each snapshot is immutable, so identity
 * tells Vue what changed). Call it inside `setup()`; it closes the session handle on unmount.
 */
import { computed, getCurrentScope, onScopeDispose, shallowRef, toValue, watch, type ComputedRef, type MaybeRefOrGetter, type ShallowRef } from "vue";
import type { AgentClient, AgentSession } from "./index.js";
import { ForgestreamError } from "./errors.js";
import type { Decision, InputItem } from "./types.js";
import { EMPTY_CHAT_SNAPSHOT, LOADING_CHAT_SNAPSHOT, type ChatSnapshot, type SessionStatus, type ShownTurns } from "./chat.js";
import type { ChatMessage } from "./messages.js";
import { openSession, reopenLater, type OpenSessionOptions } from "./open.js";

export type { OpenSessionOptions } from "./open.js";

/** What the composable returns (the React hook's fields, as refs). */
export interface AgentSessionRefs {
  session: ShallowRef<AgentSession | null>;
  snapshot: ShallowRef<ChatSnapshot>;
  /** `snapshot.messages`: the chat list of the turns in the history window (the newest `shownTurns`, default 20, and every turn after them). */
  messages: ComputedRef<readonly ChatMessage[]>;
  /** `snapshot.olderTurns`: how many turns are above the history window (0: none). */
  olderTurns: ComputedRef<number>;
  /**
   * Widens the history window by `count` older turns (default: `shownTurns`, a screenful;
   * `"all"`: every turn) — for a "Show older" button or a scroll to the top. Works while the
   * history still loads; does nothing without a session.
   */
  showOlder: (count?: ShownTurns) => void;
  /** `loading` until the session is open, then `snapshot.status`; `error` when opening failed. */
  status: ComputedRef<SessionStatus>;
  /** The one error channel: opening failed, else `snapshot.error`. */
  error: ComputedRef<ForgestreamError | null>;
  send: (message: string | InputItem[], options?: { interrupt?: boolean }) => Promise<string>;
  respond: (decisions: Decision[]) => Promise<string>;
  continueAfterAuth: () => Promise<string>;
  cancel: () => Promise<void>;
  disconnect: () => void;
  refresh: () => void;
  /** Opens the session again after opening failed (`status: "error"`), e.g. behind a "Try again" button; does nothing while it is open or opening. */
  reopen: () => void;
}

/** Opens a session with `client` (when not null) and mirrors its snapshot into a `shallowRef`. */
export function useAgentSession(client: MaybeRefOrGetter<AgentClient | null>, options: MaybeRefOrGetter<OpenSessionOptions>): AgentSessionRefs {
  const session = shallowRef<AgentSession | null>(null);
  const snapshot = shallowRef<ChatSnapshot>(EMPTY_CHAT_SNAPSHOT);
  const openError = shallowRef<ForgestreamError | null>(null);
  // Showing the early handle's history while the session opens (see `open`).
  const opening = shallowRef(false);
  let stop: (() => void) | undefined;
  // A known session that failed to open retryably is opened again by itself (`reopenLater`):
  // its cleanup, and how many such reopens failed in a row.
  let stopReopen: (() => void) | undefined;
  let failures = 0;
  /** The handle whose snapshots are shown (the early one while opening): `showOlder` widens its window. */
  let shownHandle: AgentSession | null = null;

  const open = (c: AgentClient | null, o: OpenSessionOptions) => {
    stop?.();
    stop = undefined;
    stopReopen?.();
    stopReopen = undefined;
    openError.value = null;
    if (!c) return;
    // While the session opens (restore reads the history first): `loading`.
    snapshot.value = LOADING_CHAT_SNAPSHOT;
    let live = true;
    let unsubscribe: (() => void) | undefined;
    let opened: AgentSession | null = null;
    // A handle on the session while its history loads (a reload: `restore`), so the chat shows
    // the newest turns as soon as the first page is in; replaced by `opened` when it resolves.
    let early: AgentSession | null = null;
    // The early handle's snapshots are shown, but `session` stays null (no actions) until open.
    const show = (s: AgentSession, isOpen: boolean) => {
      unsubscribe?.();
      shownHandle = s;
      session.value = isOpen ? s : null;
      opening.value = !isOpen;
      snapshot.value = s.getSnapshot();
      unsubscribe = s.subscribe(() => (snapshot.value = s.getSnapshot()));
    };
    stop = () => {
      live = false;
      shownHandle = null;
      unsubscribe?.();
      opened?.close();
      early?.close();
      session.value = null;
      opening.value = false;
      snapshot.value = EMPTY_CHAT_SNAPSHOT;
    };
    const onOpen = (s: AgentSession) => {
      if (!live) return s.close();
      early = s;
      show(s, false);
    };
    openSession(c, o, onOpen).then(
      (s) => {
        if (!live) return s.close();
        failures = 0;
        opened = s;
        show(s, true);
        early?.close();
        early = null;
      },
      (e: unknown) => {
        early?.close();
        early = null;
        if (!live) return;
        unsubscribe?.();
        unsubscribe = undefined;
        shownHandle = null;
        session.value = null;
        opening.value = false;
        snapshot.value = EMPTY_CHAT_SNAPSHOT;
        openError.value = ForgestreamError.from(e);
        stopReopen = reopenLater(openError.value, failures, () => {
          failures += 1;
          open(c, o);
        });
      },
    );
  };

  // Options by value (a new object with the same fields does not reopen), client by identity.
  watch(
    () => [toValue(client), JSON.stringify(toValue(options))] as const,
    ([c, key], prev) => {
      if (prev && prev[0] === c && prev[1] === key) return;
      open(c, toValue(options));
    },
    { immediate: true },
  );

  if (getCurrentScope())
    onScopeDispose(() => {
      stop?.();
      stopReopen?.();
    });

  const error = computed(() => openError.value ?? snapshot.value.error);
  const need = (): AgentSession => {
    if (!session.value) throw new ForgestreamError("invalid-input", "the session is not open yet", { retryable: true });
    return session.value;
  };
  const guard = <T>(f: (s: AgentSession) => Promise<T>): Promise<T> => {
    try {
      return f(need());
    } catch (e) {
      return Promise.reject(e);
    }
  };
  return {
    session,
    snapshot,
    messages: computed(() => snapshot.value.messages),
    olderTurns: computed(() => snapshot.value.olderTurns),
    status: computed(() => (openError.value ? "error" : opening.value ? "loading" : snapshot.value.status)),
    error,
    send: (m, o) => guard((s) => s.send(m, o)),
    respond: (d) => guard((s) => s.respond(d)),
    continueAfterAuth: () => guard((s) => s.continueAfterAuth()),
    cancel: () => guard((s) => s.cancel()),
    disconnect: () => session.value?.disconnect(),
    refresh: () => session.value?.refresh(),
    // The window is view state, not an action: it can widen while the history still loads.
    showOlder: (count) => shownHandle?.showOlder(count),
    reopen: () => {
      if (openError.value) open(toValue(client), toValue(options));
    },
  };
}
