/**
 * The chat layer over `SnapshotStore`: what the app reads as one snapshot — the core's view plus
 * `messages` (derived, structurally shared, computed on first read), one `status`, one `error`
 * — and the local state behind it: optimistic sends (the outbox) and the last failed action.
 */
import { ForgestreamError } from "./errors.js";
import { MessageDeriver, type ChatMessage, type OutboxEntry } from "./messages.js";
import { EMPTY_SNAPSHOT } from "./snapshot.js";
import type { ConnectionState, InputItem, SessionSnapshot, TurnSnapshot } from "./types.js";

/** This tab's part in sharing the session's live connection (see `ChatSnapshot.connection.role`). */
export type TabRole = "leader" | "follower" | "solo";

/**
 * The session's one status, for the composer and the header:
 * - `loading`: the session is being opened (the adapters' `useAgentSession` before its session
 *   is open, `restore()` / `load()` while the history is read): show a placeholder, not an empty
 *   chat;
 * - `idle`: nothing running; the app can send;
 * - `submitting`: a `send` / `respond` is on its way and its turn does not exist yet;
 * - `streaming`: a turn is running and its events arrive;
 * - `paused`: the newest turn waits for the app (`snapshot.pending`: approvals, questions, MCP
 *   logins);
 * - `reconnecting`: the connection dropped (or the browser is offline, or the turn is being
 *   rebuilt from listings) and the SDK is recovering; `connection` has the detail;
 * - `error`: something failed and did not recover: `error` says what — also a turn whose live
 *   stream is gone (the badge's `liveUnavailable`, HTTP 412: the view shows what the server
 *   persisted; `refresh()` checks again, a new message cancels the turn).
 */
export type SessionStatus = "loading" | "idle" | "submitting" | "streaming" | "paused" | "reconnecting" | "error";

/** `getSnapshot()`: the core's view plus the chat fields. Immutable; unchanged parts keep their identity. */
export interface ChatSnapshot extends SessionSnapshot {
  /**
   * The core's connection badge, plus this tab's part in sharing one live connection per session
   * among the origin's tabs (issue 14): `"leader"` holds the stream (and relays it), `"follower"`
   * shows the leader's relayed frames, `"solo"` connects itself (Web Locks or `BroadcastChannel`
   * missing, or `followOtherTabs: false`). During a takeover the new leader's badge reads
   * `connecting` (or `reconnecting`) for the moment it resubscribes from its own cursor.
   */
  readonly connection: ConnectionState & { readonly role: TabRole };
  /**
   * The session as a chat renders it (see `messages.ts`), for the turns of the history window
   * only — the newest `shownTurns` (20 by default) when the session opened, plus every turn
   * after them; `showOlder()` widens it — so a long history's older turns are never derived
   * (nor their items read). Derived on first read.
   */
  readonly messages: readonly ChatMessage[];
  /**
   * How many turns of `turns` are older than the history window, so not in `messages`: `0` when
   * the chat shows the session from its first turn. A UI shows a "Show older" control (or loads
   * on scroll to the top) while it is above 0. Counts turns as `turns` has them (a turn still
   * loading counts); continuation turns (approvals, answers, logins) count too.
   */
  readonly olderTurns: number;
  /** One status for the whole session; `connection` keeps the transport detail for badges. */
  readonly status: SessionStatus;
  /**
   * The one error channel: the last failed action (`send`, `respond`, `cancel`, …; cleared by the
   * next one that succeeds), else why the connection stopped. The rejected promise carries the
   * same `ForgestreamError` object.
   */
  readonly error: ForgestreamError | null;
}

/** Where the SDK's own view comes from (the store over the wasm core, or a test double). */
export interface ViewSource {
  subscribe(listener: () => void): () => void;
  getSnapshot(): SessionSnapshot;
}

/** Whether `error` says the turn POST's outcome is unknown (PROTOCOL §8, problem 3): the core's `outcome-unknown` code. */
export function outcomeUnknown(error: ForgestreamError): boolean {
  return error.code === "outcome-unknown";
}

function statusOf(base: SessionSnapshot, error: ForgestreamError | null, submitting: boolean): SessionStatus {
  const c: ConnectionState = base.connection;
  if (c.status === "reconnecting" || c.status === "offline" || c.status === "rebuilding") return "reconnecting";
  if (submitting) return "submitting";
  if (error || c.status === "failed") return "error";
  if (c.status === "loading") return "loading";
  const last = base.turns[base.turns.length - 1];
  // The followed turn runs: the view shows it last, running — or not yet (a reload follows the
  // live turn before its history is in), and the engine refuses a send (`turn-running`) all the
  // same (a re-check: Enter on a reopened session read `idle`, then "Not sent").
  const followed = c.status === "live" || c.status === "connecting";
  if (followed && (last?.status === "running" || (c.turnId !== null && last?.turnId !== c.turnId))) return "streaming";
  if (base.pending.length > 0 || last?.status === "paused") return "paused";
  return "idle";
}

/** A chat snapshot's `messages` before and after its first read (see {@link chatSnapshot}). */
interface LazyMessages {
  derive: (() => readonly ChatMessage[]) | undefined;
  list: readonly ChatMessage[] | undefined;
}

/**
 * The key of a chat snapshot's {@link LazyMessages}: not enumerable, so spreads and
 * `JSON.stringify` leave it out.
 */
const MESSAGES: unique symbol = Symbol("forgestream.messages");

/**
 * The `messages` accessor of every chat snapshot: one getter for all, its state in the object's
 * {@link MESSAGES} property. A closure per snapshot gave every snapshot its own hidden class
 * (V8 shares one only between objects whose accessors are the same functions), so building one
 * cost a new map and a freeze of it, and every reader of snapshots went megamorphic: ~25 µs a
 * snapshot in the W3 profile (the same reason as `SnapshotStore`'s shared `items` getter). Own
 * and enumerable, so a spread or `JSON.stringify` of a snapshot still has its messages.
 */
const messagesGetter: PropertyDescriptor = {
  enumerable: true,
  get(this: { readonly [MESSAGES]: LazyMessages }): readonly ChatMessage[] {
    const lazy = this[MESSAGES];
    if (lazy.list === undefined) {
      lazy.list = lazy.derive!();
      lazy.derive = undefined;
    }
    return lazy.list;
  },
};

/** Builds a frozen chat snapshot whose `messages` are computed on first read. */
function chatSnapshot(base: SessionSnapshot, connection: ChatSnapshot["connection"], status: SessionStatus, error: ForgestreamError | null, olderTurns: number, messages: () => readonly ChatMessage[]): ChatSnapshot {
  const snap = { ...base, connection, status, error, olderTurns } as ChatSnapshot;
  Object.defineProperty(snap, "messages", messagesGetter);
  const lazy: LazyMessages = { derive: messages, list: undefined };
  Object.defineProperty(snap, MESSAGES, { value: lazy });
  return Object.freeze(snap);
}

/** The snapshot before a session is open. */
export const EMPTY_CHAT_SNAPSHOT: ChatSnapshot = Object.freeze({ ...EMPTY_SNAPSHOT, connection: Object.freeze({ ...EMPTY_SNAPSHOT.connection, role: "solo" as TabRole }), messages: Object.freeze([]) as readonly ChatMessage[], olderTurns: 0, status: "idle" as SessionStatus });

/**
 * The snapshot while an adapter opens its session (restore / load / create in flight): `status`
 * and the connection badge both `loading` (the badge read `idle` until the engine's first
 * snapshot, a flash on every reload of the demo).
 */
export const LOADING_CHAT_SNAPSHOT: ChatSnapshot = Object.freeze({
  ...EMPTY_CHAT_SNAPSHOT,
  connection: Object.freeze({ ...EMPTY_CHAT_SNAPSHOT.connection, status: "loading" }) as ChatSnapshot["connection"],
  status: "loading" as SessionStatus,
});

/**
 * How the chat store settles a send whose outcome is unknown (the engine's side of
 * `ChatStore.submit`): `confirm()` waits for the engine's next lookup of that create — the turn
 * id when the server has it, `null` when it has no such turn, a rejection `outcome-unknown` when
 * the lookup had no answer again (any other rejection: it can no longer be checked) — and
 * `refresh()` starts that lookup.
 */
export interface UnconfirmedHooks {
  confirm(): Promise<string | null>;
  refresh(): void;
}

/**
 * How many of the newest turns `messages` holds when a session opens, unless told otherwise
 * (`shownTurns`): a screenful, as many as the core publishes at once before it gathers older
 * history pages (its `history_screen_turns`).
 */
export const DEFAULT_SHOWN_TURNS = 20;

/** How many turns a chat shows at least: a count of the newest turns, or `"all"` (the whole history). */
export type ShownTurns = number | "all";

/** Whether a turn's input opens a conversation step (a user message), or only continues the turn before it (approvals, answers, an MCP login done); a turn without a known input counts as one. */
function startsStep(turn: TurnSnapshot): boolean {
  const input = turn.input as unknown;
  if (!Array.isArray(input)) return true;
  return input.length === 0 || input.some((i) => (i as { type?: unknown } | null)?.type === "user.message");
}

/** `count` as a number of turns: `"all"` (or `Infinity`) is `all`; else rounded down, at least 1; not a number: the default. */
function turnCount(count: ShownTurns, all: number): number {
  if (count === "all" || count === Infinity) return all;
  const n = Math.floor(count);
  return Number.isNaN(n) ? DEFAULT_SHOWN_TURNS : Math.max(1, n);
}

export class ChatStore {
  readonly #source: ViewSource;
  readonly #listeners = new Set<() => void>();
  #outbox: OutboxEntry[] = [];
  #actionError: ForgestreamError | null = null;
  /** Actions in flight that make the status `submitting` (send until its turn id, respond). */
  #submitting = 0;
  #base: SessionSnapshot | undefined;
  #snapshot: ChatSnapshot | undefined;
  /** The outbox `#snapshot` was made with. */
  #derivedFrom: readonly OutboxEntry[] | undefined;
  /** `messages`, kept up to date from the last derived snapshot (the cost is what changed). */
  readonly #messages = new MessageDeriver();
  /** The history window's least size in turns (`Infinity`: every turn). */
  #shownTurns = DEFAULT_SHOWN_TURNS;
  /**
   * The window's first turn, as last seen: its id, its position in `turns` and how many turns
   * were in the window then (its distance from the end, which older pages arriving above it do
   * not change). The window keeps this turn — new turns join at the end, older history arriving
   * stays out — so a user who scrolled back keeps their place.
   */
  #first: { turnId: string; pos: number; count: number } | undefined;
  /** The error shown for a turn whose live stream is gone (see `#liveGone`), by turn. */
  #liveGoneError: { turnId: string | null; error: ForgestreamError } | undefined;
  /** `showOlder` was called: the window keeps its first turn even while the history loads. */
  #widened = false;
  /** The window last computed was over a loading view (see `#windowStart`). */
  #loadingShown = false;
  /** Bumped when the window is widened or resized, so `getSnapshot` makes a new snapshot. */
  #windowVersion = 0;
  /** The window version and start `#snapshot` was made with. */
  #derivedVersion = 0;
  #derivedStart = 0;
  #next = 0;
  #unsubscribe: () => void;

  /** This tab's role (`connection.role`), and the connection object made with it last. */
  readonly #role: () => TabRole;
  #connection: { from: ConnectionState; value: ChatSnapshot["connection"] } | undefined;

  constructor(source: ViewSource, role: () => TabRole = () => "solo") {
    this.#source = source;
    this.#role = role;
    this.#unsubscribe = source.subscribe(() => this.#notify());
  }

  /** The role changed: listeners re-read the snapshot. */
  roleChanged(): void {
    this.#notify();
  }

  #connectionOf(base: SessionSnapshot): ChatSnapshot["connection"] {
    const role = this.#role();
    const c = this.#connection;
    if (c && c.from === base.connection && c.value.role === role) return c.value;
    const value = Object.freeze({ ...base.connection, role });
    this.#connection = { from: base.connection, value };
    return value;
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  detach(): void {
    this.#unsubscribe();
    this.#listeners.clear();
  }

  #notify(): void {
    for (const l of [...this.#listeners]) l();
  }

  getSnapshot(): ChatSnapshot {
    const base = this.#source.getSnapshot();
    const error = this.#actionError ?? base.error ?? this.#liveGone(base.connection);
    const status = statusOf(base, error, this.#submitting > 0);
    const outbox = this.#outbox;
    const prev = this.#snapshot;
    // The same object while nothing it is made of changed (`useSyncExternalStore` needs that).
    const connection = this.#connectionOf(base);
    const sameWindow = this.#base === base && this.#derivedVersion === this.#windowVersion;
    if (prev && sameWindow && this.#derivedFrom === outbox && prev.status === status && prev.error === error && prev.connection === connection) return prev;
    const start = sameWindow ? this.#derivedStart : this.#windowStart(base.turns, base.connection.status === "loading");
    // Only the window's turns reach the deriver: the others' items are never read.
    const next = chatSnapshot(base, connection, status, error, start, () => this.#messages.update(start === 0 ? base : { ...base, turns: base.turns.slice(start) }, outbox));
    this.#base = base;
    this.#derivedFrom = outbox;
    this.#derivedVersion = this.#windowVersion;
    this.#derivedStart = start;
    this.#snapshot = next;
    return next;
  }

  /**
   * The error the chat shows while the core's badge reads `liveUnavailable`: the newest turn
   * still runs on the server but its live stream is gone (HTTP 412 on subscribe, PROTOCOL §4 and §8; a server restart
   * does it to every live stream), so the view shows what had arrived merged with what the
   * server persisted (after a crash the server may have kept less) and will not move by itself. Without it `status` read `idle` over a reply cut off mid-sentence (found by
   * a new-user trial). One object per turn, so the snapshot keeps its identity while it lasts.
   */
  #liveGone(c: ConnectionState): ForgestreamError | null {
    if (c.status !== "liveUnavailable") return null;
    if (this.#liveGoneError?.turnId !== c.turnId) {
      const message = "the live stream of this turn is gone (HTTP 412): showing what had arrived and what the server kept of it. refresh() checks again (nothing is re-sent); a new message cancels this turn";
      this.#liveGoneError = { turnId: c.turnId, error: new ForgestreamError("http", message, { retryable: true, status: 412 }) };
    }
    return this.#liveGoneError.error;
  }

  /**
   * Where the history window starts in `turns`: at the newest `#shownTurns`, or earlier at the
   * turn it started at before (it never loses a turn it showed), and never on a continuation
   * turn (a reply to an approval is shown with the question before it). Records the result as
   * `#first`. O(1) when turns were only added at either end.
   *
   * While the history loads (`loading`) turns arrive above the window (the session timeline,
   * newest first) and, with the gateway's listing read first, at both ends — so the window
   * follows the newest turns instead,
   * unless the user widened it (`showOlder`): pinned to the first turn of the first listing
   * page, a reload of a 55-turn session showed 50 of them.
   */
  #windowStart(turns: readonly TurnSnapshot[], loading: boolean): number {
    const n = turns.length;
    let start = Math.max(0, n - this.#shownTurns);
    const first = this.#first;
    // Pinned only once a loaded view was shown: the snapshot that ends a load may also bring
    // its last pages (newer turns at the end), and pinning there kept the window's first turn
    // from before them (25 of 30 turns after a reload, found by a new-user trial).
    const settled = !loading && !this.#loadingShown;
    this.#loadingShown = loading;
    if (first && start > 0 && (settled || this.#widened)) {
      // Where the first turn is now: the same position (turns added at the end), the same
      // distance from the end (older turns arrived above it), else wherever it went.
      let p = turns[first.pos]?.turnId === first.turnId ? first.pos : turns[n - first.count]?.turnId === first.turnId ? n - first.count : -1;
      if (p < 0) p = turns.findIndex((t) => t.turnId === first.turnId);
      // Gone (the view was rebuilt without it): keep showing as many turns as before.
      start = Math.min(start, p >= 0 ? p : Math.max(0, n - first.count));
    }
    while (start > 0 && !startsStep(turns[start]!)) start--;
    // Kept as it is when it did not move (every snapshot of a streaming turn).
    if (start < n && !(first && first.pos === start && first.count === n - start && first.turnId === turns[start]!.turnId)) this.#first = { turnId: turns[start]!.turnId, pos: start, count: n - start };
    return start;
  }

  /**
   * Sets the history window's least size: `messages` holds at least the newest `count` turns
   * (`"all"`: every turn, the whole history). Never hides turns already shown; `count` is
   * rounded down, at least 1.
   */
  showTurns(count: ShownTurns): void {
    const size = turnCount(count, Infinity);
    if (size === this.#shownTurns) return;
    this.#shownTurns = size;
    this.#windowVersion += 1;
    this.#notify();
  }

  /**
   * Widens the history window by `count` older turns (default: the window's least size, a
   * screenful; `"all"`: back to the first turn) for scroll-back. Their messages come first in
   * `messages`; the others keep their objects. Does nothing when `olderTurns` is 0.
   */
  showOlder(count?: ShownTurns): void {
    const turns = this.#source.getSnapshot().turns;
    const start = this.getSnapshot().olderTurns;
    if (start === 0) return;
    const to = Math.max(0, start - turnCount(count ?? this.#shownTurns, start));
    this.#first = { turnId: turns[to]!.turnId, pos: to, count: turns.length - to };
    this.#widened = true;
    this.#windowVersion += 1;
    this.#notify();
  }

  /**
   * Sends `items` with `post` (the engine's create-turn call) as an optimistic message: shown at
   * once as `pending`, `sent` with the turn id, else `failed` (`retry()` posts it again) or
   * `unknown` (the create got no answer and its lookup none either: see {@link UnconfirmedHooks}).
   */
  submit(items: readonly InputItem[], post: () => Promise<string>, key?: string, hooks?: UnconfirmedHooks): Promise<string> {
    const k = key ?? `local:${++this.#next}`;
    const optimistic = items.some((i) => i.type === "user.message");
    const entry: OutboxEntry = { key: k, input: Object.freeze([...items]), state: "pending", turnId: null, error: null, retry: null };
    if (optimistic) this.#put(entry);
    return this.run(post).then(
      (turnId) => {
        if (optimistic) this.#put({ ...entry, state: "sent", turnId });
        return turnId;
      },
      (e: unknown) => {
        const error = ForgestreamError.from(e);
        if (optimistic) {
          const resend = () => {
            this.#outbox = this.#outbox.filter((x) => x.key !== k);
            return this.submit(items, post, k, hooks);
          };
          if (outcomeUnknown(error) && hooks) this.#unconfirmed(entry, error, resend, hooks);
          else this.#put({ ...entry, state: outcomeUnknown(error) ? "unknown" : "failed", error, retry: resend });
        }
        throw error;
      },
    );
  }

  /**
   * An optimistic send whose create got no answer (`outcome-unknown`): shown `unknown` until the
   * engine's next lookup of it concludes — found: `sent` with its turn (the engine follows it);
   * no such turn: `failed` (sending again is safe); no such session (`not-found`): `failed`
   * with that error; no answer again: still `unknown`. Its
   * `retry()` never posts before a lookup said the server has no such turn: it shows the message
   * `pending`, looks up again (`hooks.refresh()`), and posts only on that answer (PROTOCOL §8.3).
   */
  #unconfirmed(entry: OutboxEntry, error: ForgestreamError, resend: () => Promise<string>, hooks: UnconfirmedHooks): void {
    const k = entry.key;
    /** The `retry()` calls waiting for the lookup's answer. */
    let retries: { resolve: (turnId: string) => void; reject: (e: ForgestreamError) => void }[] = [];
    let watching = false;
    let shownError = error;
    const current = () => this.#outbox.find((x) => x.key === k);
    const take = () => {
      const r = retries;
      retries = [];
      return r;
    };
    const found = (turnId: string) => {
      // The lookup's answer is the send's: the error it failed with is no longer news.
      if (this.#actionError === error || this.#actionError === shownError) this.#actionError = null;
      this.#put({ ...entry, state: "sent", turnId, error: null, retry: null });
      for (const r of take()) r.resolve(turnId);
    };
    const watch = () => {
      if (watching) return;
      watching = true;
      hooks.confirm().then(
        (turnId) => {
          watching = false;
          if (!current()) return;
          if (turnId !== null) return found(turnId);
          const waiting = take();
          if (waiting.length > 0) {
            // The user asked to retry and the server has no such turn: posting is safe now.
            resend().then(
              (t) => waiting.forEach((r) => r.resolve(t)),
              (e: unknown) => waiting.forEach((r) => r.reject(ForgestreamError.from(e))),
            );
            return;
          }
          const notSent = new ForgestreamError("network", "the server has no turn for it (sending it again is safe)", { retryable: true });
          if (this.#actionError === error || this.#actionError === shownError) this.#actionError = notSent;
          this.#put({ ...entry, state: "failed", error: notSent, retry: resend });
        },
        (e: unknown) => {
          watching = false;
          const again = ForgestreamError.from(e);
          if (!current()) return;
          for (const r of take()) r.reject(again);
          // No answer again: wait for the next lookup (a refresh, the browser back online, the
          // engine's own next look). The session itself is gone (`not-found`: a lookup answered
          // 404): not sent, and the error says why sending again cannot work. Any other end (a
          // newer turn replaced it, the session closed) leaves it `unknown`.
          if (outcomeUnknown(again)) {
            shownError = again;
            this.#put({ ...entry, state: "unknown", error: again, retry });
            watch();
          } else if (again.code === "not-found") {
            if (this.#actionError === error || this.#actionError === shownError) this.#actionError = again;
            this.#put({ ...entry, state: "failed", error: again, retry: resend });
          } else {
            this.#put({ ...entry, state: "unknown", error: again, retry });
          }
        },
      );
    };
    const retry = (): Promise<string> =>
      this.run(
        () =>
          new Promise<string>((resolve, reject) => {
            retries.push({ resolve, reject });
            this.#put({ ...entry, state: "pending", error: null, retry: null });
            watch();
            hooks.refresh();
          }),
      );
    this.#put({ ...entry, state: "unknown", error, retry });
    watch();
  }

  /**
   * Runs an action: `submitting` while in flight; its failure becomes `error`, its success clears
   * it. A `conflict` (issue 14: another tab did it first — the approval answered, the turn
   * continued) rejects the promise but leaves `error` as it was: nothing failed, the view follows
   * the other tab's turn.
   */
  run<T>(action: () => Promise<T>, submitting = true): Promise<T> {
    if (submitting) this.#submitting += 1;
    this.#notify();
    const done = () => {
      if (submitting) this.#submitting -= 1;
    };
    return action().then(
      (v) => {
        done();
        this.#actionError = null;
        this.#notify();
        return v;
      },
      (e: unknown) => {
        done();
        const error = ForgestreamError.from(e);
        if (error.code !== "conflict") this.#actionError = error;
        this.#notify();
        throw error;
      },
    );
  }

  /**
   * Adds or replaces an outbox entry. `sent` entries stay (one small record per message sent
   * from this page) so the turn's user message keeps the key the optimistic one had.
   */
  #put(entry: OutboxEntry): void {
    const i = this.#outbox.findIndex((x) => x.key === entry.key);
    this.#outbox = i < 0 ? [...this.#outbox, entry] : this.#outbox.map((x, j) => (j === i ? entry : x));
    this.#notify();
  }
}
