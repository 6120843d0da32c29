/**
 * Immutable snapshots with structural sharing, built from the core's change sets.
 *
 * The core reports only what changed (turn headers, items, pending set, …) through
 * `takeChanges()` — a turn that only gained text comes as its new cursor, not its whole header;
 * this store patches the previous snapshot: a changed item gets a new object, its
 * turn a new object and a new items array, everything else keeps its identity — so React's
 * `useSyncExternalStore` and Vue's `shallowRef` re-render only what changed.
 *
 * Turn items cross on first read (option `turnItems`, default `"onRead"`; the core's `held.rs`):
 * every turn's header is here at once, but a turn's `items` is a getter that asks the wasm for
 * that turn's items the first time it is read, caches the array on the turn object, and from
 * then on the core's change sets carry that turn's item changes (appends, replaced items) as
 * before. Reading never notifies and never changes `getSnapshot()`. The array read from a turn
 * object is the one the eager path (`turnItems: "all"`) would have shown for that object, with
 * two documented exceptions: an item *replaced or removed* in the wasm since the last published
 * snapshot shows its newer state (the wasm keeps no older copy; text that was only appended is
 * cut back exactly), and a turn object read for the first time after a newer object of the
 * same turn was published (an old snapshot kept around) shows the newest object's items. Once
 * the session's last handle closed, the engine is gone: a turn nobody read before then reads
 * as having no items (reading every turn at close would move a long history's ~50 MB of items
 * into JS just as the app lets go of it). Notifications are
 * coalesced to one per animation frame; in a hidden page (no frames, timers throttled to 1 s or
 * more) to one per `HIDDEN_MS` through a message task, paced by the core's own repeated
 * notifications (see `schedule`).
 */
import type { CoreChanges, ItemAppend, TurnHeader, TurnItemsRead, WasmSession } from "../wasm/forgestream_web.js";
import { ForgestreamError } from "./errors.js";
import type { ConnectionState, ItemView, PendingAction, SessionSnapshot, ThreadView, TurnSnapshot, UsageView, Warning } from "./types.js";

/** The snapshot before a session has loaded anything. */
export const EMPTY_SNAPSHOT: SessionSnapshot = Object.freeze({
  sessionId: "",
  turns: Object.freeze([]) as readonly TurnSnapshot[],
  pending: Object.freeze([]) as readonly PendingAction[],
  threads: Object.freeze([]) as readonly ThreadView[],
  usage: null,
  connection: Object.freeze({ status: "idle", turnId: null }) as ConnectionState,
  error: null,
});

/** Longest an update waits for an animation frame before a timer publishes it (ms). */
const FALLBACK_MS = 100;
/** Least time between two published snapshots while the page is hidden (ms). */
const HIDDEN_MS = 100;

function pageHidden(): boolean {
  return typeof document !== "undefined" && document.visibilityState !== "visible";
}

export class SnapshotStore {
  readonly #core: WasmSession;
  readonly #onWarning: (w: Warning) => void;
  readonly #listeners = new Set<() => void>();
  #snapshot: SessionSnapshot;
  #headers = new Map<string, Held>();
  /** Items by key of the turns held here: every turn with `turnItems: "all"`, else those read. */
  #items = new Map<string, Map<string, ItemView>>();
  /** `turnItems: "all"`: every item arrives with the change sets; no turn is read lazily. */
  readonly #eager: boolean;
  /** The change set `#apply` gets next is the whole view (`#full`). */
  #whole = false;
  #turns = new Map<string, TurnSnapshot>();
  #order: string[] = [];
  #scheduled = false;
  #frame: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The stalled-frame fallback (see `schedule`) and when the pending update was scheduled (ms). */
  #fallback: ReturnType<typeof setTimeout> | undefined;
  #scheduledAt = 0;
  #drain = 0;
  #onFirstContent: (() => void) | undefined;
  /** When the last snapshot was published (ms, `Date.now()`). */
  #flushedAt = 0;
  /** A message task that publishes (hidden pages): not throttled like timers, no frame needed. */
  #port: MessagePort | undefined;
  #posted = false;
  /**
   * Whether the page is hidden, kept by `visibilitychange` (which fires whenever
   * `document.visibilityState` changes) instead of read on every call of `schedule`: the DOM
   * getter, once per change notification, was ~1% of the SDK's W3 time.
   */
  #hidden = pageHidden();

  constructor(core: WasmSession, onWarning: (w: Warning) => void, eager = false) {
    this.#core = core;
    this.#eager = eager;
    this.#onWarning = onWarning;
    this.#snapshot = { ...EMPTY_SNAPSHOT, sessionId: core.id };
    // Rust holds this function until the session's last handle closes; it reaches the store
    // only through a WeakRef, so an app that drops its handles without `close()` does not keep
    // the store (and, through app listeners, the handles) alive from the wasm side.
    const self = new WeakRef(this);
    core.setListener((statusChanged: unknown) => self.deref()?.schedule(statusChanged === true));
    if (typeof document !== "undefined") document.addEventListener("visibilitychange", this.#onVisibility);
    this.#apply(this.#full());
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  getSnapshot(): SessionSnapshot {
    return this.#snapshot;
  }

  /** Calls `callback` once, after the first snapshot that holds an item has been published. */
  onFirstContent(callback: () => void): void {
    this.#onFirstContent = callback;
  }

  /** Detaches from the core (the session's last handle closed). */
  detach(): void {
    this.#scheduled = false;
    if (this.#frame !== undefined) cancelAnimationFrame(this.#frame);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#fallback !== undefined) clearTimeout(this.#fallback);
    this.#frame = this.#timer = this.#fallback = undefined;
    if (typeof document !== "undefined") document.removeEventListener("visibilitychange", this.#onVisibility);
    this.#port?.close();
    this.#port = undefined;
    this.#listeners.clear();
  }

  /**
   * Applies pending changes now and notifies (used before teardown and in tests) — except while
   * a restored turn's replay is still short of what the page showed before the reload (the
   * core's `catchingUp`, at most 2 s): publishing then showed the reply empty for a frame or
   * more after every reload mid-stream (two trials); the core calls the listener when it is over.
   */
  flush(): void {
    this.#scheduled = false;
    // Whichever of the frame and the fallback timer ran, the other must not run a second update.
    if (this.#frame !== undefined) cancelAnimationFrame(this.#frame);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#frame = this.#timer = undefined;
    if (this.#core.catchingUp) return;
    this.#flushedAt = Date.now();
    if (this.#apply(this.#drainCore())) {
      // From the headers: reading `items` here would read every turn's items from the wasm.
      if (this.#onFirstContent && this.#snapshot.turns.some((t) => (this.#headers.get(t.turnId)?.itemKeys.length ?? 0) > 0)) {
        const callback = this.#onFirstContent;
        this.#onFirstContent = undefined;
        // After the listeners below have rendered it (next task).
        setTimeout(callback, 0);
      }
      for (const listener of [...this.#listeners]) listener();
    }
  }

  /**
   * Called by the core when something changed: one update per animation frame. The core calls
   * again while the update waits, at most every 100 ms and when the connection status changed
   * (`statusChanged`, `RENOTIFY_MS`): a visible page ignores that (its frame comes), a hidden
   * one publishes then, through a message task — so a hidden tab's view keeps up with the stream
   * at a bounded rate and shows a turn's end at once, with no throttled timer in the way.
   */
  schedule(statusChanged = false): void {
    const hidden = this.#hidden;
    if (this.#scheduled) {
      if (hidden) this.#post();
      return;
    }
    this.#scheduled = true;
    if (hidden) {
      const wait = HIDDEN_MS - (Date.now() - this.#flushedAt);
      // The trailing timer (throttled: 1 s or more) only matters when the stream falls silent
      // within HIDDEN_MS of the last snapshot without a status change; while changes keep
      // coming the core's next call publishes first.
      if (statusChanged || wait <= 0 || wait > HIDDEN_MS) this.#post();
      else this.#timer = setTimeout(this.#run, wait);
      return;
    }
    if (typeof requestAnimationFrame === "function") {
      // rAF stops in hidden tabs; the fallback timer makes sure a frame that never comes cannot
      // stall us for more than ~100 ms. `flush` cancels the frame, so one update runs per
      // schedule (a leftover timer of an earlier frame firing while a newer frame waits used to
      // run a second one: the fallback runs only an update that has waited its full delay).
      // The frame that runs is no longer pending: `flush` has nothing to cancel (a
      // cancelAnimationFrame per published snapshot was ~1% of the SDK's W3 time).
      this.#frame = requestAnimationFrame(this.#onFrame);
      this.#scheduledAt = Date.now();
      // One timer at a time, re-armed when it fires, instead of a setTimeout + clearTimeout per
      // frame (at 60 updates a second those were a visible share of the SDK's main-thread time).
      this.#fallback ??= setTimeout(this.#onFallback, FALLBACK_MS);
    } else {
      this.#timer = setTimeout(this.#run, 0);
    }
  }

  /** Publishes the scheduled update (if `flush` has not already). One function for every schedule. */
  readonly #run = (): void => {
    if (this.#scheduled) this.flush();
  };

  /** The frame that runs is no longer pending (nothing for `flush` to cancel). */
  readonly #onFrame = (): void => {
    this.#frame = undefined;
    this.#run();
  };

  /** Publishes from a message task (a timer where `MessageChannel` is missing). */
  #post(): void {
    if (this.#posted) return;
    if (!this.#port && typeof MessageChannel === "function") {
      const channel = new MessageChannel();
      const self = new WeakRef(this);
      channel.port1.onmessage = () => {
        const store = self.deref();
        if (store) store.#onPosted();
      };
      // Node keeps a process alive for a port with a handler; a browser has no `unref`.
      (channel.port1 as { unref?: () => void }).unref?.();
      this.#port = channel.port2;
    }
    this.#posted = true;
    if (this.#port) this.#port.postMessage(null);
    else setTimeout(() => this.#onPosted(), 0);
  }

  #onPosted(): void {
    this.#posted = false;
    if (this.#scheduled) this.flush();
  }

  /** Becoming visible: the first frame shows everything that arrived while hidden. */
  readonly #onVisibility = (): void => {
    this.#hidden = pageHidden();
    if (!this.#hidden && this.#scheduled) this.flush();
  };

  /** The fallback timer fired: flush an update that has waited too long, or wait out the rest. */
  readonly #onFallback = (): void => {
    this.#fallback = undefined;
    if (!this.#scheduled) return;
    const waited = Date.now() - this.#scheduledAt;
    if (waited >= FALLBACK_MS || waited < 0) this.flush();
    else this.#fallback = setTimeout(this.#onFallback, FALLBACK_MS - waited);
  };

  /**
   * The core's changes since our last drain. When they are not relative to our copy (another
   * drain came in between, or an append names a version we do not hold) the whole view is
   * taken instead, so an incremental update can never produce a view a full one would not.
   */
  #drainCore(): CoreChanges {
    const c = this.#core.takeChanges();
    if (
      c.drain === this.#drain + 1 &&
      (c.items ?? []).every((i) => !i.append || this.#canAppend(i.turnId, i.key, i.append)) &&
      (c.cursors ?? []).every((t) => this.#headers.get(t.turnId)?.fields.version === t.version)
    ) {
      this.#drain = c.drain;
      return c;
    }
    for (const w of c.warnings ?? []) this.#onWarning(w);
    return this.#full();
  }

  #full(): CoreChanges {
    const c = this.#core.snapshot();
    this.#drain = c.drain;
    this.#whole = true;
    return c;
  }

  #canAppend(turnId: string, key: string, a: ItemAppend): boolean {
    const prev = this.#items.get(turnId)?.get(key);
    if (!prev || prev.version !== a.baseVersion || prev.body.kind !== "message") return false;
    const content = prev.body.content;
    return a.content === undefined || content === null || typeof content === "string";
  }

  /** The new item: `prev` plus the appended text (string concatenation is cheap in JS engines). */
  static #appended(prev: ItemView, a: ItemAppend): ItemView {
    const body = prev.body as Extract<ItemView["body"], { kind: "message" }>;
    return {
      ...prev,
      version: a.version,
      body: {
        ...body,
        content: grow(body.content as string | null, a.content),
        reasoning: grow(body.reasoning, a.reasoning),
        refusal: grow(body.refusal, a.refusal),
      },
    };
  }

  /**
   * A turn whose items stay in the wasm until `items` is first read (then cached: every read of
   * one object gives the same array).
   */
  #lazyTurn(rest: TurnFields, itemKeys: readonly string[]): TurnSnapshot {
    const turn = { ...rest } as TurnSnapshot;
    Object.defineProperty(turn, "items", SnapshotStore.#itemsGetter);
    const unread: Unread = { store: this, itemKeys };
    Object.defineProperty(turn, UNREAD, { value: unread });
    return Object.freeze(turn);
  }

  /**
   * The `items` accessor of every lazy turn object: one getter function for all, its state in
   * the object's {@link UNREAD} property. Why not a closure per object: V8 keeps objects whose
   * accessors differ in dictionary mode — 416 bytes of property table per turn, 6.4 MB of W2's
   * 20 MB JS heap — and an accessor shared by all keeps them in fast mode. Own and enumerable,
   * so a spread or `JSON.stringify` of a turn still has its items.
   */
  static readonly #itemsGetter: PropertyDescriptor = {
    enumerable: true,
    get(this: TurnSnapshot): readonly ItemView[] {
      const unread = (this as { readonly [UNREAD]?: Unread })[UNREAD];
      if (!unread) return NO_ITEMS;
      return (unread.list ??= unread.store.#read(this, unread.itemKeys));
    },
  };

  /** The items of `turn` (a lazy turn object) in the order of `itemKeys`, its header's. */
  #read(turn: TurnSnapshot, itemKeys: readonly string[]): readonly ItemView[] {
    const id = turn.turnId;
    const current = this.#turns.get(id);
    // A newer object of this turn was published before this one was read: the wasm no longer
    // has this one's items, only the newest (documented in the module comment).
    if (current !== turn) return current ? current.items : NO_ITEMS;
    let items = this.#items.get(id);
    if (!items) {
      let read: TurnItemsRead | null = null;
      try {
        read = this.#core.turnItems(id);
      } catch {
        // The engine is gone (the session's last handle closed): nothing more to read.
      }
      if (!read) return NO_ITEMS;
      items = new Map(read.items.map((item) => [item.key, Object.freeze(item)]));
      this.#items.set(id, items);
    }
    return listOf(itemKeys, items);
  }

  /** Patches the snapshot; returns whether anything visible changed. */
  #apply(c: CoreChanges): boolean {
    for (const w of c.warnings ?? []) this.#onWarning(w);
    const touched = new Set<string>();
    // A whole view replaces the held turns' items (removed ones must go): it carries all of
    // them (the core holds every turn this store read).
    if (this.#whole) for (const id of this.#items.keys()) this.#items.set(id, new Map());
    this.#whole = false;
    for (const h of c.turns ?? []) {
      const { itemKeys, ...fields } = h;
      this.#headers.set(h.turnId, { fields, itemKeys });
      if (this.#eager && !this.#items.has(h.turnId)) this.#items.set(h.turnId, new Map());
      touched.add(h.turnId);
    }
    // A turn that only gained text keeps its header (checked in `#drainCore`: same version).
    for (const t of c.cursors ?? []) {
      const held = this.#headers.get(t.turnId);
      if (!held) continue;
      if (held.fields.lastSequenceNumber !== t.lastSequenceNumber) this.#headers.set(t.turnId, { fields: { ...held.fields, lastSequenceNumber: t.lastSequenceNumber }, itemKeys: held.itemKeys });
      touched.add(t.turnId);
    }
    for (const change of c.items ?? []) {
      let items = this.#items.get(change.turnId);
      // The core sends items only of held turns; with `"all"` a turn's items may come first.
      if (!items && this.#eager) this.#items.set(change.turnId, (items = new Map()));
      touched.add(change.turnId);
      if (!items) continue;
      const prev = items.get(change.key);
      if (change.append && prev) items.set(change.key, Object.freeze(SnapshotStore.#appended(prev, change.append)));
      else if (change.removed || !change.value) items.delete(change.key);
      else items.set(change.key, Object.freeze(change.value));
    }
    for (const id of touched) {
      const held = this.#headers.get(id);
      if (!held) continue;
      const items = this.#items.get(id);
      if (items) this.#turns.set(id, Object.freeze({ ...held.fields, items: listOf(held.itemKeys, items) }) as TurnSnapshot);
      else this.#turns.set(id, this.#lazyTurn(held.fields, held.itemKeys));
    }
    const orderChanged = c.order !== undefined;
    if (c.order) this.#order = c.order;

    const prev = this.#snapshot;
    const turns = touched.size > 0 || orderChanged ? this.#turnList() : prev.turns;
    const error = c.error ? (prev.error && prev.error.message === c.error.message ? prev.error : new ForgestreamError(c.error.code, c.error.message, { retryable: c.error.retryable, ...(c.error.status === undefined ? {} : { status: c.error.status }) })) : null;
    // Absent: the badge did not change since the last drain.
    const connection = c.connection === undefined || sameConnection(prev.connection, c.connection) ? prev.connection : Object.freeze(c.connection);
    const next: SessionSnapshot = {
      sessionId: c.sessionId,
      turns,
      pending: c.pending ? Object.freeze(c.pending) : prev.pending,
      threads: c.threads ? Object.freeze(c.threads) : prev.threads,
      usage: c.usage ? Object.freeze(c.usage) : prev.usage,
      connection,
      error,
    };
    const changed =
      next.sessionId !== prev.sessionId || turns !== prev.turns || next.pending !== prev.pending || next.threads !== prev.threads || next.usage !== prev.usage || connection !== prev.connection || error !== prev.error;
    if (changed) this.#snapshot = Object.freeze(next);
    return changed;
  }

  /** `turns`: the held turn objects in chain order (a turn named in the order but not held yet is left out). */
  #turnList(): readonly TurnSnapshot[] {
    const list: TurnSnapshot[] = [];
    for (const id of this.#order) {
      const turn = this.#turns.get(id);
      if (turn !== undefined) list.push(turn);
    }
    return Object.freeze(list);
  }
}

/** A turn header without `itemKeys`: the fields a turn object copies. */
type TurnFields = Omit<TurnHeader, "itemKeys">;

/**
 * A turn's header as held: its fields apart from `itemKeys` (what the turn object copies, split
 * once per header from the core, not per snapshot: V8's object rest was the costliest step of
 * building a turn object) and the keys of its items in stream order.
 */
interface Held {
  readonly fields: TurnFields;
  readonly itemKeys: readonly string[];
}

/** The text after an append: `old` plus `suffix` (`old` as it was when nothing was appended). */
function grow<T extends string | null | undefined>(old: T, suffix: string | undefined): T | string {
  return suffix === undefined ? old : (old ?? "") + suffix;
}

const NO_ITEMS: readonly ItemView[] = Object.freeze([]);

/** A lazy turn object's state: the store that reads its items, their keys, the list once read. */
interface Unread {
  readonly store: SnapshotStore;
  readonly itemKeys: readonly string[];
  list?: readonly ItemView[];
}

/**
 * The key of a lazy turn object's state (see `SnapshotStore.#itemsGetter`): a property that is
 * not enumerable, so spreads and `JSON.stringify` leave it out. Not a `WeakMap` from turn to
 * state: its table took 48 bytes a turn (0.7 MB for W2's 15,419).
 */
const UNREAD: unique symbol = Symbol("forgestream.unread");

/** The items named by `keys` (a header's `itemKeys`, stream order), as a frozen array. */
function listOf(keys: readonly string[], items: ReadonlyMap<string, ItemView>): readonly ItemView[] {
  const list: ItemView[] = [];
  for (const k of keys) {
    const item = items.get(k);
    if (item !== undefined) list.push(item);
  }
  return Object.freeze(list);
}

/** Same badge: the same fields with the same values (every field of the badge is a primitive). */
function sameConnection(a: ConnectionState, b: ConnectionState): boolean {
  const ka = Object.keys(a) as (keyof ConnectionState)[];
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}
