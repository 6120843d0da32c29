import type { AgentClient, AgentSession } from "./index.js";
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
}

/** Opens a session as {@link OpenSessionOptions} says. */
export async function openSession(client: AgentClient, options: OpenSessionOptions): Promise<AgentSession> {
  if (options.sessionId) {
    const session = client.session(options.sessionId);
    try {
      await session.load();
      await session.resume();
    } catch (e) {
      session.close();
      throw e;
    }
    return session;
  }
  if (options.restore !== false) {
    const restored = await client.restore();
    if (restored) return restored;
  }
  if (!options.create) throw new Error("useAgentSession: nothing to restore and no `create` body given");
  return createOnce(client, options.create);
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
async function createOnce(client: AgentClient, body: CreateSessionBody): Promise<AgentSession> {
  let inFlight = creating.get(client);
  if (!inFlight) creating.set(client, (inFlight = new Map()));
  const key = JSON.stringify(body);
  let id = inFlight.get(key);
  if (!id) {
    const pending = inFlight;
    id = client.createSession(body).then(
      (seed) => {
        pending.delete(key);
        // Callers resume in microtasks and open their handles before this task runs.
        setTimeout(() => seed.close(), 0);
        return seed.id;
      },
      (e: unknown) => {
        pending.delete(key);
        throw e;
      },
    );
    inFlight.set(key, id);
  }
  return client.session(await id);
}
