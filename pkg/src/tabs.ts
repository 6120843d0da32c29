/**
 * One live connection per session per origin (issue 14): the mechanics the core's tab rules
 * (`forgestream_core::session::tabs`) ask for. One tab holds the session's Web Lock and leads (it
 * opens the live stream; its engine relays each frame); the others wait for the lock and follow
 * the relayed frames through their own engine. This file only carries messages and the lock;
 * when a frame applies, when to follow, when to steal are the engine's decisions.
 *
 * Messages on the `BroadcastChannel` `forgestream:turns:{sessionId}` (shared with the turn
 * announcements `{ turnId }` of earlier versions):
 * - `{ t: "frame", turnId, seq, data }` — a frame of the sender's own live stream;
 * - `{ t: "hb", leaseMs, streaming }` — the leader's heartbeat, sent while a follower was heard
 *   within the core's `FOLLOWER_TTL_MS` and in answer to a probe (a hidden leader, whose timers the
 *   browser clamps to ≥ 1 s, promises a longer lease; `streaming: false` while its own live stream
 *   is not open — reconnecting — so the followers' relay is silent meanwhile);
 * - `{ t: "here" }` — a follower's answer to each heartbeat: a follower tab is there;
 * - `{ t: "ping?" }` — a follower whose lease ran out asks whether a leader is there (the leader
 *   beats at once; a frozen one cannot, and the follower steals the lock `PROBE_MS` later);
 * - `{ t: "replay?", turnId, after, from }` — a follower asks for the frames after `after`;
 * - `{ t: "replay", to, turnId, frames: [seq, data][], short }` — the leader's answer, to one
 *   tab; `short`: its frames do not start right after `after` (it keeps only a tail of a long
 *   turn, or nothing), so the follower's engine subscribes past the gap itself at once;
 * - `{ t: "ended", turnId }` — the leader's followed turn ended (a cancel confirmed by reading the
 *   turn brings no `turn.done` frame to relay): a follower still following it reads the turn;
 * - `{ t: "gone", turnId }` — the leader's subscribe to the turn was answered 412 (its live stream
 *   is gone): a follower following it rebuilds the turn from the listings as the leader does.
 */
import type { WasmSession } from "../wasm/forgestream_web.js";

/** Frames kept per session (the current turn's), to answer replays and to feed a new relay. */
const MAX_KEPT_FRAMES = 50_000;
/**
 * A hidden leader's timers are aligned to 1 s wake-ups by the browser, so it beats about once a
 * second: its lease covers one skipped wake-up.
 */
const HIDDEN_LEASE_MS = 2_000;
const VISIBLE_LEASE_MS = 1_000;
/** How long a follower whose lease ran out waits for an answer to its probe before it steals. */
const PROBE_MS = 750;

type Frame = readonly [seq: number, data: string];

type TabMessage =
  | { t: "frame"; turnId: string; seq: number; data: string }
  | { t: "hb"; leaseMs: number; streaming?: boolean }
  | { t: "here" }
  | { t: "ping?" }
  | { t: "replay?"; turnId: string; after: number; from: string }
  | { t: "replay"; to: string; turnId: string; frames: Frame[]; short?: boolean }
  | { t: "ended"; turnId: string }
  | { t: "gone"; turnId: string };

/** Whether this page can share connections: Web Locks and `BroadcastChannel`. */
export function canShareTabs(): boolean {
  return typeof BroadcastChannel === "function" && typeof navigator !== "undefined" && typeof navigator.locks?.request === "function";
}

/** The role the connection badge reports (`connection.role`). */
export type TabRole = "leader" | "follower" | "solo";

/**
 * The lock, the channel and the kept frames of one session in this page. Made with the engine's
 * first handle, closed with its last (`close()` releases the lock and the channel).
 */
export class TabLink {
  readonly #inner: WeakRef<WasmSession>;
  readonly #channel: BroadcastChannel;
  readonly #lockName: string;
  readonly #tabId = Math.random().toString(36).slice(2) + Date.now().toString(36);
  #closed = false;
  /** The lock request waiting in the queue (aborted to steal instead). */
  #queued: AbortController | undefined;
  /** Identifies the request holding the lock, and ends it. */
  #holder: object | undefined;
  #release: (() => void) | undefined;
  /** Resolves `lead()` callers once this tab holds the lock. */
  #onLead: (() => void)[] = [];
  /** The current turn's frames, contiguous and ascending. */
  #turnId: string | undefined;
  #frames: Frame[] = [];
  /** When the last sign of a leader arrived (a steal waits a little and skips if one came). */
  #leaderSeenAt = 0;
  /** The engine's last heartbeat said its live stream is open (repeated in a probe's answer). */
  #streaming = true;
  #role: TabRole = "follower";
  /** Told when the role changes (the snapshot's `connection.role`). */
  onRole: (() => void) | undefined;
  /** Tells this page's engine about a turn another tab started (`{ turnId }`). */
  onAnnounce: ((turnId: string) => void) | undefined;

  constructor(inner: WasmSession, channelName: string) {
    this.#inner = new WeakRef(inner);
    this.#lockName = `forgestream:leader:${inner.id}`;
    this.#channel = new BroadcastChannel(channelName);
    this.#channel.onmessage = (e: MessageEvent<unknown>) => this.#receive(e.data);
    inner.setTabHandler((kind: string, arg?: unknown, seq?: number, data?: string, frames?: unknown) => this.#effect(kind, arg, seq, data, frames));
    // The engine started as a follower (`WasmClient.shareTabs`); said again now that the handler
    // is set, so a relay it opened already asks for its frames.
    inner.tabRole("follower");
    this.#acquire(false);
  }

  get role(): TabRole {
    return this.#role;
  }

  /** Posts a message (a closed channel throws: the page is going away). */
  post(message: unknown): void {
    if (this.#closed) return;
    try {
      this.#channel.postMessage(message);
    } catch {
      // Closing: nothing to tell.
    }
  }

  /**
   * Becomes the leader (stealing the lock from the current one) before this tab starts a turn:
   * the tab that sends streams its turn and relays it. Resolves once it leads, or after 1 s
   * (the send goes out either way: a create stream is relayed whatever the role).
   */
  lead(): Promise<void> {
    if (this.#closed || this.#role === "leader") return Promise.resolve();
    const led = new Promise<void>((resolve) => this.#onLead.push(resolve));
    this.#acquire(true);
    return Promise.race([led, new Promise<void>((resolve) => setTimeout(resolve, 1000))]);
  }

  /** Releases the lock and the channel (the last handle closed). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queued?.abort();
    this.#queued = undefined;
    this.#release?.();
    this.#release = undefined;
    this.#holder = undefined;
    this.#channel.onmessage = null;
    this.#channel.close();
    this.#frames = [];
    for (const resolve of this.#onLead.splice(0)) resolve();
  }

  #setRole(role: TabRole): void {
    if (this.#role === role) return;
    this.#role = role;
    this.#inner.deref()?.tabRole(role);
    if (role === "leader") for (const resolve of this.#onLead.splice(0)) resolve();
    this.onRole?.();
  }

  /** Waits for the lock (or takes it with `steal`). */
  #acquire(steal: boolean): void {
    if (this.#closed || this.#holder) return;
    this.#queued?.abort();
    const queued = steal ? undefined : new AbortController();
    this.#queued = queued;
    const ticket = {};
    const options: LockOptions = queued ? { signal: queued.signal } : { steal: true };
    navigator.locks
      .request(this.#lockName, options, () => {
        if (this.#closed) return undefined;
        if (this.#queued === queued) this.#queued = undefined;
        this.#holder = ticket;
        this.#setRole("leader");
        return new Promise<void>((resolve) => {
          this.#release = resolve;
        });
      })
      .catch(() => {
        // Aborted while queued (replaced by a steal), or this tab's lock was stolen.
      })
      .finally(() => {
        if (this.#holder !== ticket) return;
        // The lock was stolen (a tab thought this one frozen) or released: follow, and queue again.
        this.#release?.();
        this.#release = undefined;
        this.#holder = undefined;
        if (this.#closed) return;
        this.#setRole("follower");
        this.#acquire(false);
      });
  }

  /** Carries out one of the engine's tab effects. */
  #effect(kind: string, arg: unknown, seq: number | undefined, data: string | undefined, frames?: unknown): void {
    // The second argument is the turn id, or a heartbeat's `streaming` flag.
    const turnId = typeof arg === "string" ? arg : undefined;
    switch (kind) {
      case "relay":
        // The engine relays only while a follower was heard (`tabFollowerHeard`); alone, it
        // keeps its frames itself and hands them over with "keep" when one speaks.
        if (turnId === undefined || seq === undefined || data === undefined) return;
        this.#keep(turnId, seq, data);
        this.post({ t: "frame", turnId, seq, data } satisfies TabMessage);
        return;
      case "keep":
        if (turnId === undefined || !Array.isArray(frames)) return;
        for (const [seq, data] of frames as Frame[]) this.#keep(turnId, seq, data);
        return;
      case "follow":
        if (turnId === undefined || seq === undefined) return;
        // On a later task: the engine is inside its own effect loop now.
        queueMicrotask(() => this.#follow(turnId, seq));
        return;
      case "ended":
        if (turnId === undefined) return;
        this.post({ t: "ended", turnId } satisfies TabMessage);
        return;
      case "gone":
        if (turnId === undefined) return;
        this.post({ t: "gone", turnId } satisfies TabMessage);
        return;
      case "heartbeat": {
        // A probe's answer (`ping?`) comes from here, not the engine: it repeats the last flag.
        if (typeof arg === "boolean") this.#streaming = arg;
        const hidden = typeof document !== "undefined" && document.visibilityState === "hidden";
        this.post({ t: "hb", leaseMs: hidden ? HIDDEN_LEASE_MS : VISIBLE_LEASE_MS, streaming: this.#streaming } satisfies TabMessage);
        return;
      }
      case "steal": {
        // The lease ran out: probe first. A leader whose timers are late (a busy or hidden page,
        // whose message tasks still run) answers at once; a frozen one cannot. Each follower
        // waits a random extra moment, so two whose leases end together do not steal from each
        // other.
        const asked = performance.now();
        this.post({ t: "ping?" } satisfies TabMessage);
        setTimeout(() => {
          if (this.#leaderSeenAt < asked) this.#acquire(true);
        }, PROBE_MS + Math.random() * 250);
        return;
      }
    }
  }

  /** Feeds the kept frames of `turnId` after `after`, and asks the leader for the rest. */
  #follow(turnId: string, after: number): void {
    const inner = this.#inner.deref();
    if (!inner || this.#closed) return;
    let last = after;
    if (this.#turnId === turnId) {
      const first = this.#frames[0]?.[0];
      if (first !== undefined && first <= after + 1) {
        for (const [seq, data] of this.#frames) {
          if (seq > after) inner.tabRelayed(turnId, seq, data);
        }
        last = Math.max(after, this.#frames[this.#frames.length - 1]![0]);
      }
    }
    this.post({ t: "replay?", turnId, after: last, from: this.#tabId } satisfies TabMessage);
  }

  #receive(raw: unknown): void {
    if (this.#closed || raw === null || typeof raw !== "object") return;
    const m = raw as Partial<TabMessage> & { turnId?: unknown };
    const inner = this.#inner.deref();
    if (!inner) return;
    switch (m.t) {
      case "frame": {
        if (typeof m.turnId !== "string" || typeof m.seq !== "number" || typeof m.data !== "string") return;
        this.#leaderSeenAt = performance.now();
        this.#keep(m.turnId, m.seq, m.data);
        inner.tabRelayed(m.turnId, m.seq, m.data);
        return;
      }
      case "hb":
        if (typeof m.leaseMs !== "number") return;
        this.#leaderSeenAt = performance.now();
        // A sender of an older version names no flag: its heartbeats count as liveness.
        inner.tabLeaderSeen(m.leaseMs, m.streaming !== false);
        if (this.#role === "follower") this.post({ t: "here" } satisfies TabMessage);
        return;
      case "here":
        inner.tabFollowerHeard();
        return;
      case "ended":
        if (typeof m.turnId !== "string") return;
        inner.tabTurnEnded(m.turnId);
        return;
      case "gone":
        if (typeof m.turnId !== "string") return;
        inner.tabLiveGone(m.turnId);
        return;
      case "ping?":
        inner.tabFollowerHeard();
        if (this.#role === "leader") this.#effect("heartbeat", undefined, undefined, undefined);
        return;
      case "replay?": {
        // First, so that what the engine kept while alone is among the frames replayed.
        inner.tabFollowerHeard();
        if (this.#role !== "leader" || typeof m.turnId !== "string" || typeof m.after !== "number" || typeof m.from !== "string") return;
        const after = m.after;
        const frames = this.#turnId === m.turnId ? this.#frames.filter(([seq]) => seq > after) : [];
        const short = frames.length === 0 || frames[0]![0] > after + 1;
        this.post({ t: "replay", to: m.from, turnId: m.turnId, frames, short } satisfies TabMessage);
        return;
      }
      case "replay": {
        if (m.to !== this.#tabId || typeof m.turnId !== "string" || !Array.isArray(m.frames)) return;
        const turnId = m.turnId;
        const frames = m.frames.filter((f): f is Frame => Array.isArray(f) && typeof f[0] === "number" && typeof f[1] === "string");
        this.#merge(turnId, frames);
        for (const [seq, data] of frames) inner.tabRelayed(turnId, seq, data);
        if (m.short === true) inner.tabReplayShort(turnId);
        return;
      }
      case undefined:
        // An announcement of a turn another tab started (`{ turnId }`).
        if (typeof m.turnId === "string" && m.turnId.length > 0) this.onAnnounce?.(m.turnId);
        return;
    }
  }

  /** Keeps a frame of the current turn (a new turn replaces the kept ones; a gap restarts them). */
  #keep(turnId: string, seq: number, data: string): void {
    if (this.#turnId !== turnId) {
      this.#turnId = turnId;
      this.#frames = [];
    }
    const last = this.#frames[this.#frames.length - 1]?.[0];
    if (last !== undefined && seq <= last) return;
    if (last !== undefined && seq > last + 1) this.#frames = [];
    this.#frames.push([seq, data]);
    if (this.#frames.length > MAX_KEPT_FRAMES) this.#frames.splice(0, this.#frames.length - MAX_KEPT_FRAMES);
  }

  /** Merges a replay's frames into the kept ones: the longest contiguous run ending at the newest. */
  #merge(turnId: string, frames: readonly Frame[]): void {
    if (this.#turnId !== turnId) {
      this.#turnId = turnId;
      this.#frames = [];
    }
    const all = new Map<number, string>();
    for (const [seq, data] of [...frames, ...this.#frames]) if (!all.has(seq)) all.set(seq, data);
    const seqs = [...all.keys()].sort((a, b) => a - b);
    let start = seqs.length - 1;
    while (start > 0 && seqs[start - 1] === seqs[start]! - 1) start--;
    this.#frames = seqs.slice(Math.max(0, start)).map((seq) => [seq, all.get(seq)!] as const);
  }
}

/**
 * One action at a time per session across tabs (issue 14): runs `act` holding the Web Lock
 * `forgestream:action:{sessionId}` for as long as its promise is pending (the action's request),
 * so two tabs of this origin never POST a turn or a cancel for one session at once. `act` learns
 * whether it `waited` for another tab's action: the engine then checks the session's newest turn
 * before it sends anything and rejects an action the other tab made stale with `conflict`
 * (`forgestream_core::session::action`). Without Web Locks (or where the page may not use them)
 * `act(false)` runs at once, as before.
 */
export async function withActionLock<T>(sessionId: string, act: (waited: boolean) => Promise<T>): Promise<T> {
  const locks = typeof navigator === "undefined" ? undefined : navigator.locks;
  if (typeof locks?.request !== "function") return act(false);
  const name = `forgestream:action:${sessionId}`;
  let started = false;
  const run = (waited: boolean): Promise<T> => {
    started = true;
    return act(waited);
  };
  try {
    // Free at once: act while holding it. Taken by another tab: queue, and say so.
    const free = await locks.request(name, { ifAvailable: true }, async (lock) => (lock ? { value: await run(false) } : undefined));
    if (free) return free.value;
    return await locks.request(name, () => run(true));
  } catch (e) {
    // A lock request the page may not make (an opaque origin: `SecurityError`) fails before
    // `act` ran: act without the lock. The action's own errors pass through.
    if (started) throw e;
    return act(false);
  }
}
