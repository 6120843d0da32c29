/**
 * The baseline: a TrueForge client written the way a careful TypeScript developer would write it
 * from PROTOCOL.md, without forgestream — `fetch` + a streaming `TextDecoder`, `eventsource-parser`,
 * `JSON.parse`, a `Map` by event id with the §5 delta merge rule, a sequence-number checkpoint and
 * an immutable snapshot per animation frame (structural sharing: only changed items get new
 * objects). Not handicapped: no extra copies, no per-event allocation beyond what the parse needs.
 *
 * Compiled by bench/browser.mjs with tsc (bare `eventsource-parser` resolved by the page's import
 * map to node_modules/eventsource-parser/dist/index.js).
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";

// ---- wire (PROTOCOL.md §5) ----------------------------------------------------------------------

interface WireToolCallFragment {
  index: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
  tool_info?: unknown;
}

interface WireEvent {
  type: string;
  id: string;
  created_at?: string;
  thread_id?: string | null;
  turn_id?: string;
  previous_turn_id?: string | null;
  state?: { status: string; [k: string]: unknown };
  content?: string | { type: string; text?: string; refusal?: string }[] | null;
  reasoning_content?: string;
  refusal?: string;
  tool_calls?: WireToolCallFragment[];
  finish_reason?: string | null;
  usage?: unknown;
  tool_call_id?: string;
  title?: string;
  parent?: { thread_id: string; tool_call_id: string };
  [k: string]: unknown;
}

// ---- view ---------------------------------------------------------------------------------------

export interface ToolCall {
  readonly index: number;
  readonly id: string;
  readonly type: string;
  readonly name: string;
  readonly arguments: string;
  readonly toolInfo: unknown;
}

export interface MessageItem {
  readonly kind: "message";
  readonly id: string;
  readonly threadId: string | null;
  readonly createdAt: string | undefined;
  readonly content: string;
  readonly reasoning: string;
  readonly refusal: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: string | null;
  readonly usage: unknown;
}

export interface EventItem {
  readonly kind: "event";
  readonly id: string;
  readonly threadId: string | null;
  readonly type: string;
  readonly event: WireEvent;
}

export type Item = MessageItem | EventItem;

export interface Turn {
  readonly turnId: string;
  readonly previousTurnId: string | null;
  readonly status: string;
  readonly state: WireEvent["state"] | undefined;
  readonly items: readonly Item[];
}

export interface Snapshot {
  readonly turns: readonly Turn[];
  readonly lastSeq: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type MutableMessage = Mutable<Omit<MessageItem, "toolCalls">> & { toolCalls: Mutable<ToolCall>[] };
type MutableItem = MutableMessage | EventItem;

interface TurnState {
  turnId: string;
  previousTurnId: string | null;
  status: string;
  state: WireEvent["state"] | undefined;
  order: string[];
  items: Map<string, MutableItem>;
  frozen: Map<string, Item>;
  dirty: Set<string>;
  headerDirty: boolean;
  snapshot: Turn | undefined;
}

const EMPTY: Snapshot = Object.freeze({ turns: Object.freeze([]) as readonly Turn[], lastSeq: 0 });

function newTurn(turnId: string): TurnState {
  return { turnId, previousTurnId: null, status: "running", state: undefined, order: [], items: new Map(), frozen: new Map(), dirty: new Set(), headerDirty: true, snapshot: undefined };
}

function freezeItem(item: MutableItem): Item {
  if (item.kind === "event") return item;
  return Object.freeze({ ...item, toolCalls: Object.freeze(item.toolCalls.map((c) => Object.freeze({ ...c }))) });
}

function messageFrom(ev: WireEvent): MutableMessage {
  const msg: MutableMessage = {
    kind: "message",
    id: ev.id,
    threadId: ev.thread_id ?? null,
    createdAt: ev.created_at,
    content: "",
    reasoning: ev.reasoning_content ?? "",
    refusal: ev.refusal ?? "",
    toolCalls: [],
    finishReason: ev.finish_reason ?? null,
    usage: ev.usage,
  };
  if (typeof ev.content === "string") msg.content = ev.content;
  else if (Array.isArray(ev.content)) msg.content = ev.content.map((p) => p.text ?? "").join("");
  if (ev.tool_calls) mergeToolCalls(msg, ev.tool_calls);
  return msg;
}

/** §5: by `index`; the first fragment creates the call, later ones overwrite and concatenate. */
function mergeToolCalls(msg: MutableMessage, fragments: WireToolCallFragment[]): void {
  for (const f of fragments) {
    const index = f.index ?? msg.toolCalls.length;
    let call = msg.toolCalls.find((c) => c.index === index);
    if (!call) {
      call = { index, id: f.id ?? "", type: f.type ?? "function", name: f.function?.name ?? "", arguments: f.function?.arguments ?? "", toolInfo: f.tool_info };
      msg.toolCalls.push(call);
      continue;
    }
    if (f.id !== undefined) call.id = f.id;
    if (f.type !== undefined) call.type = f.type;
    if (f.function?.name !== undefined) call.name = f.function.name;
    if (f.tool_info !== undefined) call.toolInfo = f.tool_info;
    if (f.function?.arguments) call.arguments += f.function.arguments;
  }
}

/** The session's state: turns by id, each a Map of items by event id. */
class Store {
  readonly turns = new Map<string, TurnState>();
  turnOrder: string[] = [];
  lastSeq = 0;
  #snapshot: Snapshot = EMPTY;
  #orderDirty = false;

  turn(turnId: string): TurnState {
    let t = this.turns.get(turnId);
    if (!t) {
      t = newTurn(turnId);
      this.turns.set(turnId, t);
      this.turnOrder.push(turnId);
      this.#orderDirty = true;
    }
    return t;
  }

  /** Applies one live event (deltas included). Returns false for a dropped event. */
  applyLive(t: TurnState, ev: WireEvent): boolean {
    switch (ev.type) {
      case "model.message.delta": {
        const base = t.items.get(ev.id);
        if (!base || base.kind !== "message") return false; // orphan delta: dropped
        if (typeof ev.content === "string") base.content += ev.content;
        if (ev.reasoning_content) base.reasoning += ev.reasoning_content;
        if (ev.refusal) base.refusal += ev.refusal;
        if (ev.tool_calls) mergeToolCalls(base, ev.tool_calls);
        if (ev.finish_reason !== undefined) base.finishReason = ev.finish_reason;
        if (ev.usage !== undefined) base.usage = ev.usage;
        if (base.createdAt === undefined) base.createdAt = ev.created_at;
        t.dirty.add(ev.id);
        return true;
      }
      case "turn.created":
        t.previousTurnId = ev.previous_turn_id ?? null;
        t.status = ev.state?.status ?? "running";
        t.headerDirty = true;
        return true;
      case "turn.done":
        t.state = ev.state;
        t.status = ev.state?.status === "done" && Array.isArray(ev.state.required_actions) && ev.state.required_actions.length > 0 ? "paused" : (ev.state?.status ?? "done");
        t.headerDirty = true;
        return true;
      default:
        this.#put(t, ev);
        return true;
    }
  }

  /** A settled event (listing or live non-delta): replaces the item with the same id. */
  #put(t: TurnState, ev: WireEvent): void {
    const item: MutableItem = ev.type === "model.message" ? messageFrom(ev) : Object.freeze({ kind: "event", id: ev.id, threadId: ev.thread_id ?? null, type: ev.type, event: ev });
    if (!t.items.has(ev.id)) t.order.push(ev.id);
    t.items.set(ev.id, item);
    t.dirty.add(ev.id);
  }

  /** Applies a persisted (merged) event from `GET /sessions/{sid}/events`. */
  applySettled(turnId: string, ev: WireEvent): void {
    const t = this.turn(turnId);
    if (ev.type === "turn.created" || ev.type === "turn.done") this.applyLive(t, ev);
    else this.#put(t, ev);
  }

  /** Builds the next immutable snapshot; unchanged turns and items keep their identity. */
  snapshot(): Snapshot {
    let changed = this.#orderDirty || this.lastSeq !== this.#snapshot.lastSeq;
    for (const t of this.turns.values()) {
      if (t.dirty.size === 0 && !t.headerDirty && t.snapshot) continue;
      for (const id of t.dirty) {
        const item = t.items.get(id);
        if (item) t.frozen.set(id, freezeItem(item));
      }
      t.dirty.clear();
      t.headerDirty = false;
      const items: Item[] = [];
      for (const id of t.order) items.push(t.frozen.get(id)!);
      t.snapshot = Object.freeze({ turnId: t.turnId, previousTurnId: t.previousTurnId, status: t.status, state: t.state, items: Object.freeze(items) });
      changed = true;
    }
    if (!changed) return this.#snapshot;
    this.#orderDirty = false;
    this.#snapshot = Object.freeze({ turns: Object.freeze(this.turnOrder.map((id) => this.turns.get(id)!.snapshot!)), lastSeq: this.lastSeq });
    return this.#snapshot;
  }
}

export interface ClientOptions {
  baseUrl: string;
  /** Where the resume checkpoint (turn id + last sequence number) goes. */
  storage?: Storage;
}

/** One session: live turns over fetch + SSE, history over the session listing. */
export class BaselineSession {
  readonly #opts: ClientOptions;
  readonly #store = new Store();
  readonly #listeners = new Set<() => void>();
  #snapshot: Snapshot = EMPTY;
  #scheduled = false;

  constructor(readonly id: string, opts: ClientOptions) {
    this.#opts = opts;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  getSnapshot = (): Snapshot => this.#snapshot;

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    requestAnimationFrame(() => this.flush());
  }

  /** Builds the snapshot, saves the checkpoint, notifies. Once per frame while streaming. */
  flush(): void {
    this.#scheduled = false;
    const next = this.#store.snapshot();
    if (next === this.#snapshot) return;
    this.#snapshot = next;
    const live = next.turns.at(-1);
    if (live && this.#opts.storage) this.#opts.storage.setItem(`baseline:${this.id}`, JSON.stringify({ turnId: live.turnId, seq: next.lastSeq }));
    for (const l of [...this.#listeners]) l();
  }

  /** `POST /sessions/{sid}/turns` and reads the SSE body to the end. Resolves to the turn id. */
  async send(message: string): Promise<string> {
    const res = await fetch(`${this.#opts.baseUrl}/api/v1/sessions/${encodeURIComponent(this.id)}/turns`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ input: [{ type: "user.message", content: message }], stream: true }),
    });
    if (!res.ok || !res.body) throw new Error(`create turn: HTTP ${res.status}`);
    return this.#read(res.body);
  }

  async #read(body: ReadableStream<Uint8Array>): Promise<string> {
    const store = this.#store;
    let turn: TurnState | undefined;
    let turnId = "";
    const parser = createParser({
      onEvent: (msg: EventSourceMessage) => {
        const ev = JSON.parse(msg.data) as WireEvent;
        if (msg.id) {
          const seq = Number(msg.id);
          if (seq <= store.lastSeq && turn) return; // replayed after a reconnect
          store.lastSeq = seq;
        }
        if (!turn) {
          turnId = ev.turn_id ?? "live";
          turn = store.turn(turnId);
        }
        store.applyLive(turn, ev);
        this.#schedule();
      },
    });
    const decoder = new TextDecoder();
    const reader = body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    parser.feed(decoder.decode());
    return turnId;
  }

  /** Loads the session timeline (`GET /sessions/{sid}/events`, newest first, all pages). */
  async load(): Promise<void> {
    const store = this.#store;
    let token: string | undefined;
    const pages: { data: { turn_id: string; event: WireEvent }[] }[] = [];
    do {
      const url = `${this.#opts.baseUrl}/api/v1/sessions/${encodeURIComponent(this.id)}/events?limit=100${token ? `&page_token=${encodeURIComponent(token)}` : ""}`;
      const res = await fetch(url);
      if (!res.ok) throw new Error(`session events: HTTP ${res.status}`);
      const page = (await res.json()) as { data: { turn_id: string; event: WireEvent }[]; pagination: { next_page_token?: string } };
      pages.push(page);
      token = page.pagination.next_page_token;
    } while (token);
    // Newest first on the wire: apply oldest first so turns and items come out in order.
    for (let p = pages.length - 1; p >= 0; p--) {
      const data = pages[p]!.data;
      for (let i = data.length - 1; i >= 0; i--) store.applySettled(data[i]!.turn_id, data[i]!.event);
    }
    this.#schedule();
  }
}
