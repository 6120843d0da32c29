import type { AgentClient, AgentSession } from "./index.js";
import { ForgestreamError } from "./errors.js";
import type { ShownTurns } from "./chat.js";
import type { CreateSessionBody } from "./types.js";

/**
 * How an adapter opens its session: an existing id (history loaded, a live turn resumed), the
 * last active one from storage (`restore`), else a new one from `create`.
 */
export interface OpenSessionOptions {
  /** Open this session id. */
  sessionId?: string;
  /** Restore the last active session from storage when there is one (default true). */
  restore?: boolean;
  /** Create a session with this body when nothing else applies. */
  create?: CreateSessionBody;
  /**
   * Whose session `restore` reopens and `create` remembers (the last-session pointer is also keyed
   * by the client's base URL). Default: the agent name of `create`, so two agents on one origin never
   * restore each other's session; pass e.g. `${userId}/${agent}` so two users do not either.
   */
  scope?: string;
  /**
   * How many of the newest turns `messages` holds at least (the history window): default 20 (a
   * screenful), `"all"` for the whole history. `showOlder()` widens the window for scroll-back;
   * `snapshot.olderTurns` says how many turns are left above it. The window belongs to the
   * session on this page (every handle and adapter on it shares it, like the snapshot): the
   * largest size asked for applies.
   */
  shownTurns?: ShownTurns;
}

/** The agent name a create body names (TrueForge `agent.name`, gateway `agent_name`). */
function agentOf(body: CreateSessionBody | undefined): string | undefined {
  if (!body) return undefined;
  if ("agent_name" in body) return body.agent_name;
  return "name" in body.agent ? body.agent.name : undefined;
}

/**
 * Opens a session as {@link OpenSessionOptions} says. `onOpen`, when given, gets a handle as
 * soon as the session's id is known and before its history is in (an existing id, or one
 * `restore` reads from storage), so the caller can show the history page by page; it is the
 * caller's to close (the promise resolves to another handle on the same engine, or rejects).
 */
export async function openSession(
  client: AgentClient,
  options: OpenSessionOptions,
  onOpen?: (session: AgentSession) => void,
): Promise<AgentSession> {
  // The window's size is set on every handle before the app renders it.
  const sized = (s: AgentSession) => {
    if (options.shownTurns !== undefined) s.showTurns(options.shownTurns);
    return s;
  };
  const shown = onOpen && ((s: AgentSession) => onOpen(sized(s)));
  return sized(await openWith(client, options, shown));
}

async function openWith(client: AgentClient, options: OpenSessionOptions, onOpen: ((session: AgentSession) => void) | undefined): Promise<AgentSession> {
  if (options.sessionId) {
    const session = client.session(options.sessionId);
    // Started (synchronously: the engine reads `loading` from here) and published before the
    // early handle is rendered, so its first snapshot says `loading`, not the `idle` of an
    // engine that had not started yet (Firefox rendered that between two `loading`s).
    const opening = session.loadAndResume();
    session.flush();
    onOpen?.(client.session(options.sessionId));
    try {
      await opening;
    } catch (e) {
      session.close();
      throw e;
    }
    return session;
  }
  const scope = options.scope ?? agentOf(options.create);
  const scoped = scope === undefined ? {} : { scope };
  if (options.restore !== false) {
    const restored = await client.restore(onOpen ? { ...scoped, onOpen } : scoped);
    if (restored) return restored;
  }
  if (!options.create) throw new Error("useAgentSession: nothing to restore and no `create` body given");
  return createOnce(client, options.create, scoped);
}

/** Creates that are in flight, per client and body: a second mount joins the first. */
const creating = new WeakMap<AgentClient, Map<string, Promise<string>>>();

/**
 * `client.createSession(body)`, once for every opener asking for the same body while it is in
 * flight: React StrictMode mounts, unmounts and mounts again at once in development, and each
 * mount used to create (and leave behind) its own server session. Every caller gets its own
 * handle on the one session (`client.session(id)`, one engine); the creating handle is released
 * after they have taken theirs.
 */
async function createOnce(client: AgentClient, body: CreateSessionBody, scope: { scope?: string }): Promise<AgentSession> {
  let inFlight = creating.get(client);
  if (!inFlight) creating.set(client, (inFlight = new Map()));
  const key = JSON.stringify([body, scope.scope ?? null]);
  let id = inFlight.get(key);
  if (!id) {
    const pending = inFlight;
    id = client.createSession(body, scope).then(
      (seed) => {
        pending.delete(key);
        // Callers resume in microtasks and open their handles before this task runs.
        setTimeout(() => seed.close(), 0);
        return seed.id;
      },
      (e: unknown) => {
        pending.delete(key);
        const error = ForgestreamError.from(e);
        createFailures.add(error);
        throw error;
      },
    );
    inFlight.set(key, id);
  }
  return client.session(await id);
}

/** Errors of a session create (see {@link reopenLater}: never opened again by itself). */
const createFailures = new WeakSet<object>();

/** The waits before an adapter opens a session again by itself after a retryable failure, ms. */
export const REOPEN_WAITS_MS: readonly number[] = [5_000, 10_000, 20_000, 40_000, 60_000];

/**
 * After opening a session failed retryably — the server down or restarting for longer than the
 * history's own retries — opens it again by itself: after {@link REOPEN_WAITS_MS} (the last
 * repeating; `failures` is how many reopens already failed), or at once when the browser comes
 * back `online` or the page becomes visible again. A trial restarted the server and saw "Could
 * not open the session" stay until Try again was pressed. Not after a failed create (`create`,
 * or `restore` with nothing to restore): a create whose answer was lost may have made a
 * session, and another would be left behind. Returns the cleanup (the adapters call it when
 * the open changes).
 */
export function reopenLater(error: ForgestreamError | null, failures: number, reopen: () => void): () => void {
  if (!error?.retryable || createFailures.has(error) || typeof window === "undefined") return () => {};
  const wait = REOPEN_WAITS_MS[Math.min(failures, REOPEN_WAITS_MS.length - 1)]!;
  let done = false;
  const go = () => {
    if (done || document.visibilityState === "hidden") return;
    done = true;
    stop();
    reopen();
  };
  const timer = setTimeout(go, wait);
  const visible = () => {
    if (document.visibilityState === "visible") go();
  };
  window.addEventListener("online", go);
  document.addEventListener("visibilitychange", visible);
  function stop() {
    clearTimeout(timer);
    window.removeEventListener("online", go);
    document.removeEventListener("visibilitychange", visible);
  }
  return () => {
    done = true;
    stop();
  };
}
