/**
 * `forgestream/vue`: `useAgentSession(client, options)`, the same contract as the React hook,
 * with the snapshot in a `shallowRef` (each snapshot is immutable, so identity tells Vue what
 * changed). Call it inside `setup()`; it closes the session handle on unmount.
 */
import { getCurrentScope, onScopeDispose, shallowRef, type ShallowRef } from "vue";
import type { AgentClient, AgentSession } from "./index.js";
import { ForgestreamError } from "./errors.js";
import type { Decision, InputItem, SessionSnapshot } from "./types.js";
import { EMPTY_SNAPSHOT } from "./snapshot.js";
import { openSession, type OpenSessionOptions } from "./open.js";

export type { OpenSessionOptions } from "./open.js";

/** What the composable returns. */
export interface AgentSessionRefs {
  session: ShallowRef<AgentSession | null>;
  snapshot: ShallowRef<SessionSnapshot>;
  error: ShallowRef<ForgestreamError | null>;
  send: (message: string | InputItem[], options?: { interrupt?: boolean }) => Promise<string>;
  respond: (decisions: Decision[]) => Promise<string>;
  continueAfterAuth: () => Promise<string>;
  cancel: () => Promise<void>;
  disconnect: () => void;
  refresh: () => void;
}

/** Opens a session with `client` and mirrors its snapshot into a `shallowRef`. */
export function useAgentSession(client: AgentClient, options: OpenSessionOptions): AgentSessionRefs {
  const session = shallowRef<AgentSession | null>(null);
  const snapshot = shallowRef<SessionSnapshot>(EMPTY_SNAPSHOT);
  const error = shallowRef<ForgestreamError | null>(null);
  let unsubscribe: (() => void) | undefined;
  let disposed = false;

  openSession(client, options).then(
    (s) => {
      if (disposed) return s.close();
      session.value = s;
      snapshot.value = s.getSnapshot();
      unsubscribe = s.subscribe(() => (snapshot.value = s.getSnapshot()));
    },
    (e: unknown) => (error.value = ForgestreamError.from(e)),
  );

  if (getCurrentScope()) {
    onScopeDispose(() => {
      disposed = true;
      unsubscribe?.();
      session.value?.close();
    });
  }

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
    error,
    send: (m, o) => guard((s) => s.send(m, o)),
    respond: (d) => guard((s) => s.respond(d)),
    continueAfterAuth: () => guard((s) => s.continueAfterAuth()),
    cancel: () => guard((s) => s.cancel()),
    disconnect: () => session.value?.disconnect(),
    refresh: () => session.value?.refresh(),
  };
}
