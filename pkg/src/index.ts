/**
 * forgestream — a resumable browser client for TrueForge-style agent runtimes.
 *
 * ```ts
 * await init();
 * const client = new AgentClient({ baseUrl: "", flavor: "trueforge" });
 * const session = (await client.restore()) ?? (await client.createSession({ agent: { name: "support" } }));
 * session.subscribe(() => render(session.getSnapshot()));
 * await session.send("Refund order ORD-4821");
 * ```
 *
 * The wasm core parses the SSE stream, reduces events into the view and decides how to recover;
 * this layer adds idiomatic types, coalesced notifications and immutable snapshots.
 */
import wasmInit, { WasmClient, WasmSession, version as wasmVersion } from "../wasm/forgestream_web.js";
import { ForgestreamError } from "./errors.js";
import { SnapshotStore } from "./snapshot.js";
import type { ClientOptions, CreateSessionBody, Decision, FrameLogEntry, InputItem, SessionDigest, SessionSnapshot, Warning } from "./types.js";

export { ForgestreamError } from "./errors.js";
export type { ErrorCode } from "./errors.js";
export * from "./types.js";

let ready: Promise<void> | undefined;
let loaded = false;

/**
 * Loads and instantiates the wasm core. Idempotent: every call returns the same promise.
 * @param wasmUrl URL of `forgestream_web_bg.wasm` (default: the file beside the glue).
 */
export function init(wasmUrl?: string | URL): Promise<void> {
  ready ??= wasmInit(wasmUrl ? { module_or_path: wasmUrl } : undefined).then(() => {
    loaded = true;
  });
  return ready;
}

function assertReady(): void {
  if (!loaded) {
    throw new ForgestreamError("not-initialized", "forgestream: call `await init()` before using the SDK", { retryable: false });
  }
}

/** The loaded core's version, e.g. `"0.1.0"`. */
export function version(): string {
  assertReady();
  return wasmVersion();
}

/** Approve a pending tool call. */
export const approve = (toolCallId: string): Decision => ({ kind: "allow", toolCallId });
/** Deny a pending tool call, optionally saying why (the model sees the reason). */
export const deny = (toolCallId: string, reason?: string): Decision =>
  reason === undefined ? { kind: "deny", toolCallId } : { kind: "deny", toolCallId, reason };
/** Answer a client-side tool (e.g. `ask_user_question`) with non-empty text. */
export const answer = (toolCallId: string, content: string): Decision => ({ kind: "answer", toolCallId, content });

async function call<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    throw ForgestreamError.from(e);
  }
}

/** Normalises the app's header provider to `() => Promise<[name, value][]>` for the core. */
function headerPairs(provider: ClientOptions["headers"]): (() => Promise<[string, string][]>) | undefined {
  if (!provider) return undefined;
  return async () => {
    const init = typeof provider === "function" ? await provider() : provider;
    const pairs: [string, string][] = [];
    new Headers(init).forEach((value, name) => pairs.push([name, value]));
    return pairs;
  };
}

/** A client for one runtime (base URL + flavor + auth). Create one per app. */
export class AgentClient {
  readonly #inner: WasmClient;
  readonly #onWarning: ((w: Warning) => void) | undefined;
  readonly #followOtherTabs: boolean;

  constructor(options: ClientOptions = {}) {
    assertReady();
    this.#onWarning = options.onWarning;
    this.#followOtherTabs = options.followOtherTabs ?? true;
    try {
      this.#inner = new WasmClient({ ...options, headers: headerPairs(options.headers), onWarning: undefined, followOtherTabs: undefined });
    } catch (e) {
      throw ForgestreamError.from(e);
    }
  }

  /** Creates a session on the server (`POST /sessions`). */
  async createSession(body: CreateSessionBody): Promise<AgentSession> {
    const inner = await call(() => this.#inner.createSession(JSON.stringify(body)) as Promise<WasmSession>);
    return new AgentSession(inner, this.#onWarning, this.#followOtherTabs);
  }

  /** A handle on an existing session; call `load()` to fetch its history. */
  session(id: string): AgentSession {
    return new AgentSession(this.#inner.session(id), this.#onWarning, this.#followOtherTabs);
  }

  /**
   * After a page refresh: reopens the last active session from storage, loads its history and
   * resumes a turn that was streaming (or rebuilds it from the listings when its live stream is
   * gone). Pending approvals, questions and MCP auth links are in the snapshot again. Resolves to
   * `null` when nothing was stored.
   */
  async restore(): Promise<AgentSession | null> {
    const id = this.#inner.lastSessionId();
    if (!id) return null;
    const session = this.session(id);
    await session.load();
    await session.resume();
    return session;
  }

  /** True when checkpoints fell back to memory (storage full, disabled or unavailable). */
  get storageIsMemory(): boolean {
    return this.#inner.storageIsMemory();
  }
}

/** One conversation: its live, immutable view and the actions on it. */
export class AgentSession {
  readonly #inner: WasmSession;
  readonly #store: SnapshotStore;
  /** The inspector log as returned so far, and how many frames the core had logged then. */
  readonly #log: FrameLogEntry[] = [];
  #logTotal = 0;
  readonly #onWarning: ((w: Warning) => void) | undefined;
  #loadTimed = false;
  /** Tells other tabs of this origin about turns started here, and follows theirs. */
  #tabs: BroadcastChannel | undefined;

  /** @internal use `AgentClient.createSession` / `session` / `restore`. */
  constructor(inner: WasmSession, onWarning?: (w: Warning) => void, followOtherTabs = true) {
    this.#inner = inner;
    this.#onWarning = onWarning;
    this.#store = new SnapshotStore(inner, (w) => this.#onWarning?.(w));
    if (followOtherTabs && typeof BroadcastChannel === "function") {
      this.#tabs = new BroadcastChannel(`forgestream:turns:${inner.id}`);
      this.#tabs.onmessage = (e: MessageEvent<unknown>) => {
        const turnId = (e.data as { turnId?: unknown } | null)?.turnId;
        // `attach` ignores a turn this session already follows.
        if (typeof turnId === "string" && turnId.length > 0) this.#inner.attach(turnId);
      };
    }
  }

  #announce(turnId: string): string {
    this.#tabs?.postMessage({ turnId });
    return turnId;
  }

  /** The session id. */
  get id(): string {
    return this.#inner.id;
  }

  /**
   * Registers a listener called (at most once per animation frame while streaming) when the
   * snapshot changed. Returns the unsubscribe function. Compatible with `useSyncExternalStore`.
   */
  subscribe = (listener: () => void): (() => void) => this.#store.subscribe(listener);

  /** The current immutable snapshot; unchanged parts keep their identity between snapshots. */
  getSnapshot = (): SessionSnapshot => this.#store.getSnapshot();

  /**
   * Loads the session's history (turns and the session timeline). The first load of a session
   * (what `restore()` and the adapters do after a refresh) is timed as the User Timing measure
   * `forgestream:restore-to-first-event`: load start → the first published snapshot holding an
   * event (see DevTools' Performance panel).
   */
  load(): Promise<void> {
    if (!this.#loadTimed) {
      this.#loadTimed = true;
      const start = performance.now();
      this.#store.onFirstContent(() => performance.measure("forgestream:restore-to-first-event", { start, end: performance.now() }));
    }
    return call(() => this.#inner.load() as Promise<void>);
  }

  /** Resumes the turn recorded in storage, if any. Resolves to its id or `null`. */
  resume(): Promise<string | null> {
    return call(() => this.#inner.resume() as Promise<string | null>);
  }

  /** Follows a turn someone else started (another tab, another device). */
  attach(turnId: string): void {
    this.#inner.attach(turnId);
  }

  /**
   * Sends a user message (or raw input items) as a new turn. Refuses with `turn-running` while a
   * turn streams unless `{ interrupt: true }`. Resolves to the new turn's id once it started.
   */
  send(message: string | InputItem[], options: { interrupt?: boolean } = {}): Promise<string> {
    const items: InputItem[] = typeof message === "string" ? [{ type: "user.message", content: message }] : message;
    return call(() => this.#inner.send(JSON.stringify(items), options.interrupt ?? false) as Promise<string>).then((t) => this.#announce(t));
  }

  /**
   * Answers every pending approval / question of the paused turn in one batch and continues.
   * Refuses (`invalid-input`) an incomplete batch, stale or unknown calls, empty answers.
   */
  respond(decisions: Decision[]): Promise<string> {
    return call(() => this.#inner.respond(decisions) as Promise<string>).then((t) => this.#announce(t));
  }

  /** After the user completed MCP OAuth (the `auth_url`s), continues with an empty-input turn. */
  continueAfterAuth(): Promise<string> {
    return call(() => this.#inner.respond([{ kind: "authDone" }]) as Promise<string>).then((t) => this.#announce(t));
  }

  /** Stops the running turn on the server (`POST /cancel`); the stream ends with `cancelled`. */
  cancel(): Promise<void> {
    return call(() => this.#inner.cancel() as Promise<void>);
  }

  /** Closes the connection without stopping the turn (it keeps running; `resume()` follows it). */
  disconnect(): void {
    this.#tabs?.close();
    this.#tabs = undefined;
    this.#inner.disconnect();
    this.#store.flush();
  }

  /**
   * Simulates a network failure of the open connection (demo control, tests): the SDK recovers
   * exactly as from a real drop. The turn is untouched.
   */
  dropConnection(): void {
    this.#inner.dropConnection();
  }

  /**
   * Received frames (needs `inspect: true`), oldest first, at most the last 2000. A new array
   * each call; entries already returned keep their identity. Only frames logged since the last
   * call cross from wasm (an inspector reading a long stream several times a second would
   * otherwise copy the whole log each time).
   */
  eventLog(): FrameLogEntry[] {
    const { total, capacity, frames } = this.#inner.eventLogSince(this.#logTotal) as { total: number; capacity: number; frames: FrameLogEntry[] };
    this.#logTotal = total;
    for (const f of frames) this.#log.push(Object.freeze(f));
    if (this.#log.length > capacity) this.#log.splice(0, this.#log.length - capacity);
    return this.#log.slice();
  }

  /** Tries again after `liveUnavailable` or a retryable failure (never re-sends a turn). */
  refresh(): void {
    this.#inner.refresh();
  }

  /**
   * A canonical, transport-independent digest of the session for evaluators and bug reports:
   * turns with their items (message text, reasoning, tool calls with arguments and results),
   * the thread tree, pending actions and usage — no timestamps, no tokens. Two views of the same
   * history (live, replayed, rebuilt from listings) give equal digests once `diagnostics`
   * (cursors, warning count) is removed. For the raw persisted events, read the server's
   * listings.
   */
  exportEvents(): SessionDigest {
    return this.#inner.exportEvents() as SessionDigest;
  }
}
