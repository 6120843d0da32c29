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
import wasmInit, { WasmClient, WasmSession, version as wasmVersion, type PackedEventLog } from "../wasm/forgestream_web.js";
import { ForgestreamError } from "./errors.js";
import { SnapshotStore } from "./snapshot.js";
import { ChatStore, type ChatSnapshot, type ShownTurns } from "./chat.js";
import { canShareTabs, TabLink, withActionLock } from "./tabs.js";
import type { ClientOptions, CreateSessionBody, Decision, FrameLogEntry, InputItem, SessionDigest, SessionEvent, Warning } from "./types.js";

export { ForgestreamError } from "./errors.js";
export type { ErrorCode } from "./errors.js";
export * from "./types.js";
export { isKnownEvent, KNOWN_EVENT_TYPES } from "./events.js";
export type { ChatSnapshot, SessionStatus, ShownTurns, TabRole } from "./chat.js";
export { DEFAULT_SHOWN_TURNS } from "./chat.js";
export type { AssistantMessage, AssistantPart, ChatMessage, JsonValue, McpAuthPart, PendingToolAction, ReasoningPart, RefusalPart, SubagentGroup, TextPart, ToolPart, ToolResult, ToolState, UserMessage } from "./messages.js";

let ready: Promise<void> | undefined;
let loaded = false;
let memory: WebAssembly.Memory | undefined;

/**
 * Loads and instantiates the wasm core. Idempotent: every call returns the same promise.
 * @param wasmUrl URL of `forgestream_web_bg.wasm` (default: the file beside the glue).
 */
export function init(wasmUrl?: string | URL): Promise<void> {
  ready ??= wasmInit(wasmUrl ? { module_or_path: wasmUrl } : undefined).then((exports) => {
    memory = exports.memory;
    loaded = true;
  });
  return ready;
}

function assertReady(): void {
  if (!loaded) {
    throw new ForgestreamError("not-initialized", "forgestream: call `await init()` before using the SDK", { retryable: false });
  }
}

/**
 * The wasm core's linear memory size in bytes (it grows, never shrinks): for memory tests and
 * diagnostics. 0 before `init()` resolved.
 */
export function wasmMemoryBytes(): number {
  return memory?.buffer.byteLength ?? 0;
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

/** Each provider's wrapper, made once: the core compares providers by identity, so two clients
 * given the same provider (an imported `getHeaders`, a client re-created by a hot reload) share
 * one engine per session. */
const wrappedProviders = new WeakMap<object, () => Promise<[string, string][]>>();

/** Normalises the app's header provider to `() => Promise<[name, value][]>` for the core. */
function headerPairs(provider: ClientOptions["headers"]): (() => Promise<[string, string][]>) | undefined {
  if (!provider) return undefined;
  const known = wrappedProviders.get(provider);
  if (known) return known;
  const wrapped = async () => {
    const init = typeof provider === "function" ? await provider() : provider;
    const pairs: [string, string][] = [];
    new Headers(init).forEach((value, name) => pairs.push([name, value]));
    return pairs;
  };
  wrappedProviders.set(provider, wrapped);
  return wrapped;
}

/**
 * The page-wide engine registry, on `globalThis[Symbol.for("forgestream.engines")]` so that it
 * survives module re-evaluation: a second copy of this module in the page (a hot module reload
 * that re-imports the package, two bundles) finds the engines of the first and adopts them, so a
 * session is followed by one engine, one connection, one lock and one channel per page whichever
 * copy opens it. Entries are keyed by {@link engineKey}; a copy of another SDK build never
 * adopts (the shapes may differ) and opens its own engine, as before.
 */
interface PageEngines {
  /** Live sessions by key (weak: the handles own them). */
  sessions: Map<string, WeakRef<SharedSession>>;
  /** Restores in flight by key: a concurrent opener in another copy joins instead of restoring. */
  restoring: Map<string, Promise<SharedSession | null>>;
  /** Header providers' identities (an object stays the same object in every copy). */
  providers: WeakMap<object, number>;
  nextProvider: number;
}

const PAGE_ENGINES = Symbol.for("forgestream.engines");

function pageEngines(): PageEngines {
  const g = globalThis as { [PAGE_ENGINES]?: PageEngines };
  return (g[PAGE_ENGINES] ??= { sessions: new Map(), restoring: new Map(), providers: new WeakMap(), nextProvider: 1 });
}

/**
 * Which engines may serve a client's handles on session `id`: the same SDK build, session and
 * configuration (every option but `onWarning`; the header provider by identity, so two auth
 * setups never share an engine). What the core's own registry compares, readable across copies.
 */
function configKey(options: ClientOptions, shareTabs: boolean): string {
  const page = pageEngines();
  let provider = 0;
  if (options.headers) {
    provider = page.providers.get(options.headers) ?? 0;
    if (provider === 0) page.providers.set(options.headers, (provider = page.nextProvider++));
  }
  const plain = Object.entries(options)
    .filter(([name, value]) => name !== "headers" && name !== "onWarning" && value !== undefined && typeof value !== "function")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([wasmVersion(), provider, shareTabs, plain]);
}

function engineKey(config: string, id: string): string {
  return `${config}\n${id}`;
}

/**
 * This copy's shared sessions by `WasmSession.engineId` (weak): one per engine, whatever key led
 * to it (the core may hand two keys one engine), so an engine never gets a second snapshot
 * store or a second tab link.
 */
const byEngine = new Map<number, WeakRef<SharedSession>>();

/** The live shared session under `key`, if any. */
function liveEngine(key: string): SharedSession | undefined {
  const s = pageEngines().sessions.get(key)?.deref();
  return s && !s.inner.closed ? s : undefined;
}

/**
 * What the handles on one session share: the wasm engine's handle, the snapshot store, the
 * inspector log and the cross-tab channel. One per engine per page; released with its last
 * handle.
 */
class SharedSession {
  readonly inner: WasmSession;
  readonly store: SnapshotStore;
  /** What handles read: the store's view plus messages, status, error and the outbox. */
  readonly chat: ChatStore;
  /**
   * The inspector log as returned so far (the newest frames, contiguous, ending at frame
   * `logTotal`), and how many frames the core had logged then.
   */
  log: FrameLogEntry[] = [];
  logTotal = 0;
  /** `log` lacks kept frames older than its first one (an `eventLog({ last })` read skipped some). */
  logGap = false;
  loadTimed = false;
  handles = 0;
  /** Tells other tabs of this origin about turns started here, and follows theirs (no Web Locks). */
  tabs: BroadcastChannel | undefined;
  /**
   * One live connection per session per origin (Web Locks + `BroadcastChannel`): the lock, the
   * channel and the relayed frames (`tabs.ts`). Also carries the turn announcements.
   */
  link: TabLink | undefined;
  /** This engine's key in the page-wide registry ({@link engineKey}). */
  readonly key: string;

  constructor(key: string, inner: WasmSession, onWarning: ((w: Warning) => void) | undefined, followOtherTabs: boolean, shareTabs: boolean, eagerItems: boolean) {
    this.key = key;
    this.inner = inner;
    this.store = new SnapshotStore(inner, (w) => onWarning?.(w), eagerItems);
    this.chat = new ChatStore(this.store, () => this.link?.role ?? "solo");
    if (followOtherTabs && shareTabs) {
      const inner_ = new WeakRef(inner);
      const chat = new WeakRef(this.chat);
      this.link = new TabLink(inner, `forgestream:turns:${inner.id}`);
      this.link.onAnnounce = (turnId) => inner_.deref()?.attach(turnId);
      this.link.onRole = () => chat.deref()?.roleChanged();
    } else if (followOtherTabs && typeof BroadcastChannel === "function") {
      this.tabs = new BroadcastChannel(`forgestream:turns:${inner.id}`);
      // Only other tabs' messages arrive here (a channel never hears itself, and every handle in
      // this page shares this one channel); `attach` ignores a turn already followed.
      const inner_ = new WeakRef(inner);
      this.tabs.onmessage = (e: MessageEvent<unknown>) => {
        const turnId = (e.data as { turnId?: unknown } | null)?.turnId;
        if (typeof turnId === "string" && turnId.length > 0) inner_.deref()?.attach(turnId);
      };
    }
  }

  announce(turnId: string): string {
    this.tabs?.postMessage({ turnId });
    this.link?.post({ turnId });
    return turnId;
  }

  /** Before a turn starts here: this tab becomes the leader, so it streams the turn it sends. */
  lead(): Promise<void> {
    return this.link?.lead() ?? Promise.resolve();
  }

  /**
   * Starts a turn (`start(waited)` posts it) holding the session's action lock, and announces
   * it. A start that waited for another tab's action does not take the lead first: the engine
   * checks the newest turn and may refuse it (`conflict`), and a create stream is relayed
   * whatever the role. The new turn is in the snapshot when the promise resolves (not a frame
   * later: the lock's release takes a moment, and an app reads the snapshot right after).
   */
  startTurn(start: (waited: boolean) => Promise<string>): Promise<string> {
    return withActionLock(this.inner.id, (waited) =>
      (waited ? Promise.resolve() : this.lead()).then(() => start(waited)).then((t) => this.announce(t)),
    ).then((t) => {
      this.store.flush();
      return t;
    });
  }

  /** The last handle closed: stop following other tabs, release the lock, close the engine, free its memory. */
  release(): void {
    this.tabs?.close();
    this.tabs = undefined;
    this.link?.close();
    this.link = undefined;
    this.chat.detach();
    this.store.detach();
    this.inner.close();
    this.inner.free();
  }
}

/** Backstop for handles dropped without `close()`: their share is released when collected. */
const finalizer = new FinalizationRegistry<SharedSession>((s) => releaseHandle(s));

function releaseHandle(s: SharedSession): void {
  s.handles -= 1;
  if (s.handles > 0) return;
  const sessions = pageEngines().sessions;
  if (sessions.get(s.key)?.deref() === s) sessions.delete(s.key);
  if (byEngine.get(s.inner.engineId)?.deref() === s) byEngine.delete(s.inner.engineId);
  s.release();
}

/**
 * Which "last session" a call means: the core keeps one last-session pointer per (base URL,
 * `scope`) pair (the adapters default the scope to the agent name; apps add the user id), so two
 * agents, two backends or two users on one origin never restore each other's session. Only the
 * pointer is scoped: a session's checkpoint, engine and connection are shared by every scope that
 * opens it. A same-origin client without a scope keeps the pointer key of earlier versions; an
 * earlier version's per-scope pointer is moved over once (with an `old-schema` storage warning).
 */
export interface ScopeOptions {
  /** Identity of the remembered session, e.g. the agent name, or `${userId}/${agent}`. */
  scope?: string;
}

/** Options of {@link AgentClient.restore}. */
export interface RestoreOptions extends ScopeOptions {
  /**
   * Called at once, before `restore()` resolves, with a handle on the session storage names, so
   * a UI can render its history as it arrives — the timeline, newest page first, then the turns
   * listing (README, "A long history opens newest first") — instead of waiting for all of it. The
   * handle is the caller's to close; the promise resolves to another handle on the same engine.
   * When the session turns out unusable (`restore()` resolves `null`), this handle is closed.
   * Not called when nothing is stored; a restore that joins one already in flight gets its own.
   */
  onOpen?: (session: AgentSession) => void;
}

/** A client for one runtime (base URL + flavor + auth). Create one per app. */
export class AgentClient {
  readonly #inner: WasmClient;
  readonly #onWarning: ((w: Warning) => void) | undefined;
  readonly #followOtherTabs: boolean;
  /** `turnItems: "all"`: every turn's items cross with every snapshot (the engine was told too). */
  readonly #eagerItems: boolean;
  /** Sessions share one live connection among this origin's tabs (Web Locks + BroadcastChannel). */
  readonly #shareTabs: boolean;
  /** This client's configuration in the page-wide registry. */
  readonly #config: string;

  constructor(options: ClientOptions = {}) {
    assertReady();
    this.#onWarning = options.onWarning;
    this.#followOtherTabs = options.followOtherTabs ?? true;
    this.#eagerItems = options.turnItems === "all";
    this.#shareTabs = this.#followOtherTabs && canShareTabs();
    try {
      this.#inner = new WasmClient({ ...options, headers: headerPairs(options.headers), onWarning: undefined, followOtherTabs: undefined });
    } catch (e) {
      throw ForgestreamError.from(e);
    }
    this.#inner.shareTabs(this.#shareTabs);
    this.#config = configKey(options, this.#shareTabs);
  }

  /** A handle on `inner`'s engine, sharing the page's state for it. */
  #handle(inner: WasmSession): AgentSession {
    const key = engineKey(this.#config, inner.id);
    const same = byEngine.get(inner.engineId)?.deref();
    let s = liveEngine(key) ?? (same && !same.inner.closed ? same : undefined);
    if (s) {
      // The page has a live engine for this session already (this copy's, or another copy's
      // after a hot reload): this wasm handle is not needed. Closing it closes its engine only
      // when that is a second engine nobody else holds (one that did nothing yet).
      if (s.inner !== inner) {
        inner.close();
        inner.free();
      }
    } else {
      s = new SharedSession(key, inner, this.#onWarning, this.#followOtherTabs, this.#shareTabs, this.#eagerItems);
      pageEngines().sessions.set(key, new WeakRef(s));
      byEngine.set(inner.engineId, new WeakRef(s));
    }
    return new AgentSession(s);
  }

  /**
   * Creates a session on the server (`POST /sessions`) and remembers it at once as `scope`'s
   * last session, so a reload before the first message restores it instead of creating another.
   */
  async createSession(body: CreateSessionBody, options: ScopeOptions = {}): Promise<AgentSession> {
    const inner = await call(() => this.#inner.createSession(JSON.stringify(body), options.scope) as Promise<WasmSession>);
    return this.#handle(inner);
  }

  /**
   * A handle on an existing session; call `load()` to fetch its history. Every handle on one
   * session in this page shares one engine, one connection and one snapshot; release each with
   * `close()`.
   */
  session(id: string): AgentSession {
    const adopted = liveEngine(engineKey(this.#config, id));
    return adopted ? new AgentSession(adopted) : this.#handle(this.#inner.session(id));
  }

  /**
   * After a page refresh: reopens the last active session of `scope` from storage, loads its
   * history and resumes a turn that was streaming (or rebuilds it from the listings when its
   * live stream is gone); resolves once the turn's state is known, so pending approvals,
   * questions and MCP auth links are in the snapshot and can be answered at once. A streaming
   * turn is rebuilt by replaying its live stream from its first event; nothing of that replay
   * short of the stored checkpoint is published, so the reply never shows its first words again
   * before racing back to where it was, and the promise resolves once the replay reached the
   * checkpoint (at most 2 s after the stream opened): its snapshot then shows the running turn
   * with its reply so far (`status` `streaming`), so an app that sends only when `idle` is never
   * refused with `turn-running` right after a reload. Resolves to
   * `null` when nothing usable was stored: no pointer, a corrupt one, or a session the server no
   * longer has (the stale records are cleared). Concurrent calls share one load and one
   * subscribe. `options.onOpen` gets a handle before the history is in.
   */
  /** The early handle `options.onOpen` gets, when it is given and a session id is stored. */
  #openEarly(id: string | undefined, options: RestoreOptions): AgentSession | null {
    return id !== undefined && options.onOpen ? this.session(id) : null;
  }

  /**
   * Hands `early` to `options.onOpen`, once the restore runs on its engine: its snapshot then
   * reads `loading`. Handed out as soon as it was made, it read `idle` (the engine had not begun
   * the restore), and an app offering Send on `idle` could send into the running turn.
   */
  #announceEarly(early: AgentSession | null, options: RestoreOptions): void {
    if (!early) return;
    early.flush();
    try {
      options.onOpen?.(early);
    } catch (e) {
      reportListenerError(e);
    }
  }

  async restore(options: RestoreOptions = {}): Promise<AgentSession | null> {
    const id = this.#inner.lastSessionId(options.scope);
    const key = id === undefined ? undefined : engineKey(this.#config, id);
    const page = pageEngines();
    let s: SharedSession | null;
    const joined = key === undefined ? undefined : page.restoring.get(key);
    const live = key === undefined ? undefined : liveEngine(key);
    if (joined) {
      // A restore of this session is in flight (React StrictMode's second mount, another copy of
      // the package): share its engine. With `onOpen` this caller gets its own early handle on
      // that engine (the wasm client keeps one engine per session id, and the restore holds
      // it): StrictMode's first mount closed the first early handle, and the remount showed
      // nothing until the whole history was in (a new-user trial: 0.8–1.5 s of an empty
      // `loading` page in `vite` dev).
      const early = this.#openEarly(id, options);
      this.#announceEarly(early, options);
      s = await joined;
      if (!s || s.inner.closed) early?.close();
    } else if (live) {
      // A live engine of this session (another copy's, after a hot reload): restore through it,
      // which joins (or repeats the result of) its own restore: no second load or subscribe.
      const session = new AgentSession(live);
      const found = await call(() => live.inner.restoreHere() as Promise<boolean>);
      if (!found) {
        session.close();
        return null;
      }
      session.flush();
      return session;
    } else {
      // The early handle is made first: the restore below then runs on its engine (one engine
      // per session id), and its snapshots carry the history page by page.
      const early = this.#openEarly(id, options);
      // Without `onOpen`, a handle of our own while the restore runs: the engine's tab link
      // (Web Lock, channel) exists from its start, so a follower's relay brings the replay the
      // restore waits for (it resolves once the view has caught up with the reply; without the
      // link a follower waited the whole catch-up bound, 2 s).
      const held = early ?? (id === undefined ? null : this.session(id));
      const pending = call(() => this.#inner.restore(options.scope) as Promise<WasmSession | null>).then((inner) => {
        if (!inner) {
          early?.close();
          return null;
        }
        // Read before `#handle`, which frees `inner` when the early handle's engine is live.
        const restoredKey = engineKey(this.#config, inner.id);
        // A seed handle keeps the engine alive until every waiting caller took its own (they
        // do in microtasks, before this timer runs), as `createOnce` does for creates.
        const seed = this.#handle(inner);
        setTimeout(() => seed.close(), 0);
        return liveEngine(restoredKey) ?? null;
      });
      if (key !== undefined) page.restoring.set(key, pending);
      this.#announceEarly(early, options);
      try {
        s = await pending;
      } finally {
        if (key !== undefined && page.restoring.get(key) === pending) page.restoring.delete(key);
        // After the seed handle took the engine (no close-and-reopen of the engine between).
        if (held !== early) held?.close();
      }
    }
    if (!s || s.inner.closed) return null;
    const session = new AgentSession(s);
    // What the promise promised is in the snapshot when it resolves (not a frame later).
    session.flush();
    return session;
  }


  /**
   * Forgets session `id` in storage: its checkpoint, and every last-session pointer naming it
   * that this client can name (`scope`'s, the unscoped one, and each scope it was opened under
   * in this page), so a later `restore()` does not reopen it. The session stays on the server;
   * open handles keep working.
   */
  forget(id: string, options: ScopeOptions = {}): void {
    this.#inner.forgetSession(id, options.scope);
  }

  /** True when checkpoints fell back to memory (storage full, disabled or unavailable). */
  get storageIsMemory(): boolean {
    return this.#inner.storageIsMemory();
  }
}

/** Reports an error thrown by an app's listener without unwinding the SDK's own call. */
function reportListenerError(e: unknown): void {
  if (typeof reportError === "function") reportError(e);
  else queueMicrotask(() => {
    throw e;
  });
}

const closedError = (): ForgestreamError => new ForgestreamError("aborted", "the session handle is closed", { retryable: false });

/**
 * A handle on one conversation: its live, immutable view and the actions on it. Handles on the
 * same session share one engine; `close()` (or `using`) releases this one.
 */
export class AgentSession implements Disposable {
  #s: SharedSession | undefined;
  readonly #id: string;
  /** This handle's subscriptions (listener → unsubscribe), told once when it closes. */
  readonly #subscribed = new Map<() => void, () => void>();
  /** After `close()`: the last snapshot, with the badge `idle` (this handle follows nothing). */
  #final: ChatSnapshot | undefined;
  /** After `close()`: the inspector log as this handle last could read it. */
  #finalLog: readonly FrameLogEntry[] = [];

  /** @internal use `AgentClient.createSession` / `session` / `restore`. */
  constructor(shared_: unknown) {
    const s = shared_ as SharedSession;
    this.#s = s;
    this.#id = s.inner.id;
    s.handles += 1;
    finalizer.register(this, s, this);
  }

  #shared(): SharedSession {
    if (!this.#s) throw closedError();
    return this.#s;
  }

  #call<T>(f: (s: SharedSession) => Promise<T>): Promise<T> {
    const s = this.#s;
    if (!s) return Promise.reject(closedError());
    return call(() => f(s));
  }

  /** The session id. */
  get id(): string {
    return this.#id;
  }

  /** Whether this handle was closed. */
  get closed(): boolean {
    return this.#s === undefined;
  }

  /**
   * Releases this handle (idempotent). When the last handle on the session closes, its
   * connection is closed (the turn keeps running on the server and the checkpoint stays, so a
   * later `restore()` follows it), pending promises reject with `aborted`, and the engine and
   * its memory are freed. The React and Vue adapters call it on unmount.
   */
  close(): void {
    const s = this.#s;
    if (!s) return;
    const last = s.chat.getSnapshot();
    // This handle follows nothing any more: no badge or status may still say it streams.
    const status = last.status === "paused" || last.status === "error" ? last.status : "idle";
    this.#final = Object.freeze({ ...last, status, connection: Object.freeze({ status: "idle", turnId: last.connection.turnId, role: last.connection.role }) });
    this.#finalLog = this.eventLog();
    this.#s = undefined;
    finalizer.unregister(this);
    releaseHandle(s);
    // A UI rendering this handle (`useSyncExternalStore`) must re-read it, or it keeps showing
    // the badge of a connection that is gone.
    const subscribed = [...this.#subscribed];
    this.#subscribed.clear();
    for (const [listener, off] of subscribed) {
      off();
      // A listener that throws must not stop the others from re-reading, nor escape `close()`
      // (often called from a framework's unmount): it is reported as an uncaught error instead.
      try {
        listener();
      } catch (e) {
        reportListenerError(e);
      }
    }
  }

  /** `using session = …` closes it at the end of the scope. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Registers a listener called (at most once per animation frame while streaming) when the
   * snapshot changed. Returns the unsubscribe function. Compatible with `useSyncExternalStore`.
   */
  subscribe = (listener: () => void): (() => void) => {
    if (!this.#s) return () => {};
    const off = this.#s.chat.subscribe(listener);
    this.#subscribed.set(listener, off);
    return () => {
      off();
      this.#subscribed.delete(listener);
    };
  };

  /**
   * The current immutable snapshot: the turns/items view, plus `messages` (the chat list),
   * `status` and `error` (the one error channel). Unchanged parts keep their identity between
   * snapshots. After `close()`, the last one with the connection `idle` (a render may still
   * read it).
   */
  getSnapshot = (): ChatSnapshot => this.#final ?? this.#shared().chat.getSnapshot();

  /**
   * Widens the history window for scroll-back: `messages` gains the messages of `count` older
   * turns (default: a screenful, the window's least size; `"all"`: back to the first turn) at its
   * start; the others keep their objects. `snapshot.olderTurns` says how many are left; does
   * nothing at 0. The window is the session's on this page, shared by every handle on it (like
   * the snapshot). Only the view changes: nothing is fetched — a turn whose timeline page has
   * not arrived yet is not in the snapshot (with the gateway's listing first: its listed header).
   */
  showOlder(count?: ShownTurns): void {
    this.#s?.chat.showOlder(count);
  }

  /**
   * Sets the history window's least size: `messages` holds at least the newest `count` turns
   * (default 20, a screenful), or every turn with `"all"` (the whole history, as before the
   * window existed). It never hides a turn already shown: new turns join the window at the end
   * and its first turn stays, so a user who scrolled back keeps their place. Shared by every
   * handle on the session in this page; the adapters set it from their `shownTurns` option.
   */
  showTurns(count: ShownTurns): void {
    this.#s?.chat.showTurns(count);
  }

  /**
   * Loads the session's history (turns and the session timeline). The first load of a session
   * (what `restore()` and the adapters do after a refresh) is timed as the User Timing measure
   * `forgestream:restore-to-first-event`: load start → the first published snapshot holding an
   * event (see DevTools' Performance panel).
   */
  load(): Promise<void> {
    this.#timeFirstLoad();
    return this.#call((s) => (s.inner.load() as Promise<void>).then(() => s.store.flush()));
  }

  /** Times the session's first load (see `load()`). */
  #timeFirstLoad(): void {
    const s = this.#s;
    if (s && !s.loadTimed) {
      s.loadTimed = true;
      const start = performance.now();
      s.store.onFirstContent(() => performance.measure("forgestream:restore-to-first-event", { start, end: performance.now() }));
    }
  }

  /**
   * @internal `load()` then `resume()` as one engine step (the adapters' open of a known session
   * id): the history, then the stored checkpoint's turn followed, with no snapshot between the
   * two — `load()` resolving published the loaded history as `idle` for a frame before the
   * resume's `connecting` (a new-user trial's reloads; `refreshMidStream` checks the badge).
   * Once per engine, as `restore()`. Rejects with `not-found` when the server no longer has the
   * session (its stored records are then cleared).
   */
  loadAndResume(): Promise<void> {
    this.#timeFirstLoad();
    return this.#call((s) =>
      (s.inner.restoreHere() as Promise<boolean>).then((found) => {
        s.store.flush();
        if (!found) throw new ForgestreamError("not-found", `the server has no session ${this.#id}`, { status: 404 });
      }),
    );
  }

  /** @internal Publishes pending changes to the snapshot now. */
  flush(): void {
    this.#s?.store.flush();
  }

  /** Resumes the turn recorded in storage, if any. Resolves to its id (once its state is known) or `null`. */
  resume(): Promise<string | null> {
    return this.#call((s) =>
      (s.inner.resume() as Promise<string | null>).then((t) => {
        s.store.flush();
        return t;
      }),
    );
  }

  /** Follows a turn someone else started (another tab, another device). */
  attach(turnId: string): void {
    this.#shared().inner.attach(turnId);
  }

  /**
   * Sends a user message (or raw input items) as a new turn. Refuses with `turn-running` while a
   * turn streams unless `{ interrupt: true }`. Resolves to the new turn's id once it started.
   * Refuses with `conflict`, sending nothing, when it waited for another tab's action on this
   * session and that tab started a turn that still runs (sending would cancel it).
   */
  send(message: string | InputItem[], options: { interrupt?: boolean } = {}): Promise<string> {
    const items: InputItem[] = typeof message === "string" ? [{ type: "user.message", content: message }] : message;
    const s = this.#s;
    if (!s) return Promise.reject(closedError());
    // The user's message shows at once (`pending`); `retry()` of a failed one posts it again.
    // `unknown`: the create got no answer; its `retry()` looks the turn up first and posts only
    // when the server has none (never twice), and a lookup that finds it makes the message `sent`.
    const hooks = {
      confirm: () => call(() => s.inner.awaitCreateOutcome()).then((t) => (t === null ? t : s.announce(t))),
      refresh: () => s.inner.refresh(),
    };
    return s.chat.submit(items, () => s.startTurn((waited) => call(() => s.inner.send(JSON.stringify(items), options.interrupt ?? false, waited) as Promise<string>)), undefined, hooks);
  }

  /**
   * Answers every pending approval / question of the paused turn in one batch and continues.
   * Refuses (`invalid-input`) an incomplete batch, unknown calls, empty answers; refuses with
   * `conflict`, sending nothing, an answer given already — by this tab, or by another tab of this
   * origin that answered the same approval first (one action at a time per session: the tabs
   * take turns on a Web Lock, and the one that waited checks the session's newest turn first).
   */
  respond(decisions: Decision[]): Promise<string> {
    return this.#call((s) => s.chat.run(() => s.startTurn((waited) => s.inner.respond(decisions, waited) as Promise<string>)));
  }

  /** After the user completed MCP OAuth (the `auth_url`s), continues with an empty-input turn. */
  continueAfterAuth(): Promise<string> {
    return this.#call((s) => s.chat.run(() => s.startTurn((waited) => s.inner.respond([{ kind: "authDone" }], waited) as Promise<string>)));
  }

  /**
   * Stops the running turn on the server (`POST /cancel`); the stream ends with `cancelled`. The
   * text that streamed so far stays in the view, marked `interrupted` (this page only: the
   * server's history drops unfinished messages, so a reload does not show it). Refuses with
   * `conflict`, cancelling nothing, when it waited for another tab's action on this session and
   * that tab started a newer turn meanwhile.
   */
  cancel(): Promise<void> {
    return this.#call((s) => s.chat.run(() => withActionLock(s.inner.id, (waited) => s.inner.cancel(waited) as Promise<void>), false));
  }

  /** Closes the connection without stopping the turn (it keeps running; `resume()` follows it). */
  disconnect(): void {
    const s = this.#s;
    if (!s) return;
    s.inner.disconnect();
    s.store.flush();
  }

  /**
   * Simulates a network failure of the open connection (demo control, tests): the SDK recovers
   * exactly as from a real drop. The turn is untouched.
   */
  dropConnection(): void {
    this.#s?.inner.dropConnection();
  }

  /**
   * Received frames (needs `inspect: true`), oldest first, at most the last 2000. A new array
   * each call; entries already returned keep their identity. Only frames logged since the last
   * call cross from wasm (an inspector reading a long stream several times a second would
   * otherwise copy the whole log each time). After `close()`, the log as it was then (an
   * inspector rendering in the handle's last notification can still read it).
   *
   * `{ last: n }` returns only the newest `n` of those frames (fewer while fewer were logged),
   * and only the newest `n` of the frames logged since the last call cross from wasm: an
   * inspector that shows its last rows passes how many it shows. `n` is a count (`0` gives `[]`,
   * fractions round down, `Infinity` or `NaN` = no limit). A later call without `last` still
   * returns every kept frame (reading the ones a `last` call skipped once).
   */
  eventLog(options?: { readonly last?: number }): FrameLogEntry[] {
    const n = options?.last;
    const last = n === undefined || Number.isNaN(n) || n === Infinity ? undefined : Math.max(0, Math.floor(n));
    const s = this.#s;
    if (!s) return tail(this.#finalLog, last);
    // Without `last`, a log with a gap is read again from its oldest kept frame.
    const again = last === undefined && s.logGap;
    const { total, capacity, frames } = unpackLog(s.inner.eventLogSince(again ? 0 : s.logTotal, last));
    const start = total - frames.length;
    if (again) {
      // Frames already returned keep their identity.
      const cachedStart = s.logTotal - s.log.length;
      s.log = frames.map((f, i) => {
        const at = start + i - cachedStart;
        return at >= 0 && at < s.log.length ? s.log[at]! : Object.freeze(f);
      });
      s.logGap = false;
    } else {
      if (start > s.logTotal) {
        // Frames were skipped (fell out of the ring, or beyond `last`): what is cached would not
        // run up to the new ones. A gap when the core still keeps some of the skipped ones.
        s.log = [];
        s.logGap = start > Math.max(0, total - capacity);
      }
      for (const f of frames) s.log.push(Object.freeze(f));
    }
    s.logTotal = total;
    if (s.log.length > capacity) s.log.splice(0, s.log.length - capacity);
    return tail(s.log, last);
  }

  /** Tries again after `liveUnavailable` or a retryable failure (never re-sends a turn). */
  refresh(): void {
    this.#s?.inner.refresh();
  }

  /**
   * The events the server persisted for this session, oldest first: every page of the session
   * timeline `GET /sessions/{sid}/events` (PROTOCOL §4), each item the protocol's
   * `{ turn_id, event }` with the event merged as stored (no deltas, no sequence numbers) and
   * typed by the protocol's union (`ProtocolEvent | UnknownEvent`; narrow with `isKnownEvent`,
   * then on `event.type`). Only the active branch, as the server lists it; a running turn's
   * stored events included. For evaluators, audit views and analytics. One request per 100
   * events. Rejects with a `ForgestreamError` (the server's error, `network`, `invalid-response`;
   * `aborted` when the session closes, also while the export is under way). Until 0.1 this name returned the digest: that is `exportDigest()`.
   */
  exportEvents(): Promise<SessionEvent[]> {
    return this.#shared().inner.exportEvents();
  }

  /**
   * A canonical, transport-independent digest of the session for evaluators and bug reports:
   * turns with their items (message text, reasoning, tool calls with arguments and results),
   * the thread tree, pending actions and usage — no timestamps, no tokens. Two views of the same
   * history (live, replayed, rebuilt from listings) give equal digests once `diagnostics`
   * (cursors, warning count) is removed. The persisted events themselves: `exportEvents()`.
   */
  exportDigest(): SessionDigest {
    return this.#shared().inner.exportDigest() as SessionDigest;
  }
}

/** The newest `last` entries of `log` (all without `last`), as a new array. */
function tail<T>(log: readonly T[], last: number | undefined): T[] {
  if (last === undefined || last >= log.length) return log.slice();
  return last === 0 ? [] : log.slice(-last);
}

/**
 * `eventLogSince`'s packed page as entries (`PackedEventLog`: seven numbers per frame, strings
 * by index, `-1` for absent): the same objects the core's `LoggedFrame` serialises to, with
 * the keys in the same order. Packed because as objects a fast stream's frames cost a tenth of
 * the SDK's main-thread time while an inspector read them (issue 19, W3).
 */
function unpackLog(page: PackedEventLog): { total: number; capacity: number; frames: FrameLogEntry[] } {
  const { strings, frames: n } = page;
  const at = (i: number): string | null => (i < 0 ? null : strings[i] ?? null);
  const frames: FrameLogEntry[] = new Array(Math.floor(n.length / 7));
  for (let f = 0, i = 0; f < frames.length; f++, i += 7) {
    frames[f] = {
      turnId: at(n[i]!) ?? "",
      sequenceNumber: n[i + 1]! < 0 ? null : n[i + 1]!,
      eventType: at(n[i + 2]!) ?? "(malformed)",
      threadId: at(n[i + 3]!),
      id: at(n[i + 4]!),
      bytes: n[i + 5]!,
      atMs: n[i + 6]!,
    };
  }
  return { total: page.total, capacity: page.capacity, frames };
}
