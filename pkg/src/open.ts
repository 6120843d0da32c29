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
  return client.createSession(options.create);
}
