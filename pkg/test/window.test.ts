/**
 * The history window of the chat store (chat.ts, issue 16): `messages` holds the newest
 * `shownTurns` turns and every turn after them, `olderTurns` counts the rest, `showOlder()`
 * widens it for scroll-back, and the turns outside it are never read (their items may not have
 * crossed from wasm). Snapshots are built by hand in the core's view shapes.
 */
import { describe, expect, it } from "vitest";
import { ChatStore, DEFAULT_SHOWN_TURNS } from "../src/chat.js";
import { FakeSource } from "./source.js";
import { deriveMessages, type ChatMessage } from "../src/messages.js";
import { EMPTY_SNAPSHOT } from "../src/snapshot.js";
import type { ItemView, SessionSnapshot, TurnSnapshot } from "../src/types.js";

/** Turn ids whose `items` were read, by any test. */
const itemsRead = new Set<string>();

function reply(turnId: string, text: string, complete = true): ItemView {
  return {
    key: `${turnId}-m`,
    turnId,
    threadId: "main",
    version: 1,
    createdAt: null,
    body: { kind: "message", id: `${turnId}-m`, name: null, content: text, reasoning: null, refusal: null, toolCalls: [], finishReason: complete ? "stop" : null, usage: null, complete, interrupted: false },
  } as ItemView;
}

/**
 * A turn asking `question` (or continuing the turn before it when `input` says so), answered
 * with `text`; reading its `items` is recorded in {@link itemsRead}.
 */
function turn(turnId: string, o: { text?: string; input?: unknown[]; status?: TurnSnapshot["status"]; complete?: boolean } = {}): TurnSnapshot {
  const items = Object.freeze([reply(turnId, o.text ?? `answer ${turnId}`, o.complete ?? true)]);
  const t = {
    turnId,
    previousTurnId: null,
    status: o.status ?? "done",
    cancelReason: null,
    errorMessage: null,
    input: o.input ?? [{ type: "user.message", content: `question ${turnId}` }],
    createdAt: null,
    completedAt: null,
    usage: { inputTokens: 0, outputTokens: 0 },
    lastSequenceNumber: null,
    lateEventsIgnored: 0,
    version: 1,
  };
  Object.defineProperty(t, "items", {
    enumerable: true,
    get: () => {
      itemsRead.add(turnId);
      return items;
    },
  });
  return Object.freeze(t) as unknown as TurnSnapshot;
}

/** `n` turns `<prefix>0` … `<prefix>{n-1}`. */
const history = (n: number, prefix = "t") => Array.from({ length: n }, (_, i) => turn(`${prefix}${i}`));

class Source extends FakeSource {
  constructor() {
    super(EMPTY_SNAPSHOT);
  }
  /** A snapshot of `turns` with the connection badge at `status`. */
  setTurns(turns: readonly TurnSnapshot[], status: "idle" | "loading" | "live" = "idle") {
    this.set({ ...EMPTY_SNAPSHOT, sessionId: "s1", turns, connection: { status, turnId: null } as SessionSnapshot["connection"] });
  }
}

/** The turn ids `messages` shows, in order, once each. */
const turnsOf = (m: readonly ChatMessage[]) => [...new Set(m.map((x) => (x.kind === "subagent" ? x.key : x.turnId)))];
const ids = (turns: readonly TurnSnapshot[]) => turns.map((t) => t.turnId);

function open(turns: readonly TurnSnapshot[]): { source: Source; store: ChatStore } {
  const source = new Source();
  source.setTurns(turns);
  return { source, store: new ChatStore(source) };
}

describe("the history window", () => {
  it("shows the newest 20 turns by default and never reads the items of the others", () => {
    const turns = history(200, "a");
    const { store } = open(turns);
    const s = store.getSnapshot();
    expect(DEFAULT_SHOWN_TURNS).toBe(20);
    expect(s.olderTurns).toBe(180);
    expect(s.turns).toHaveLength(200);
    expect(turnsOf(s.messages)).toEqual(ids(turns.slice(180)));
    // Exactly what a full derivation gives for those turns.
    expect(s.messages).toEqual(deriveMessages({ ...s, turns: turns.slice(180) }, []));
    const read = ids(turns).filter((id) => itemsRead.has(id));
    expect(read).toEqual(ids(turns.slice(180)));
  });

  it("showOlder widens it by a screenful (or by count) at the start; the shown messages keep their objects", () => {
    const turns = history(50, "b");
    const { store } = open(turns);
    const before = store.getSnapshot().messages;
    let told = 0;
    store.subscribe(() => told++);
    store.showOlder();
    const s = store.getSnapshot();
    expect(told).toBe(1);
    expect(s.olderTurns).toBe(10);
    expect(turnsOf(s.messages)).toEqual(ids(turns.slice(10)));
    // The 20 turns shown before are the list's tail, each message the same object.
    const tail = s.messages.slice(s.messages.length - before.length);
    tail.forEach((m, i) => expect(m).toBe(before[i]));
    store.showOlder(3);
    expect(store.getSnapshot().olderTurns).toBe(7);
    store.showOlder(100);
    expect(store.getSnapshot().olderTurns).toBe(0);
    expect(turnsOf(store.getSnapshot().messages)).toEqual(ids(turns));
    // Nothing older: no new snapshot, no notification.
    const last = store.getSnapshot();
    store.showOlder();
    expect(told).toBe(3);
    expect(store.getSnapshot()).toBe(last);
  });

  it("keeps its first turn when new turns arrive: they join at the end, the user keeps their place", () => {
    const turns = history(30, "c");
    const { source, store } = open(turns);
    store.showOlder(2);
    const before = store.getSnapshot();
    expect(before.olderTurns).toBe(8);
    const live = turn("c30", { status: "running", complete: false, text: "stre" });
    source.setTurns([...turns, live]);
    const after = store.getSnapshot();
    expect(after.olderTurns).toBe(8);
    expect(turnsOf(after.messages)).toEqual(ids([...turns.slice(8), live]));
    before.messages.forEach((m, i) => expect(after.messages[i]).toBe(m));
    // Without any showOlder either: the window grows past 20 rather than drop its first turn.
    const more = history(25, "d");
    const second = open(more.slice(0, 20));
    expect(second.store.getSnapshot().olderTurns).toBe(0);
    second.source.setTurns(more);
    expect(second.store.getSnapshot().olderTurns).toBe(0);
    expect(turnsOf(second.store.getSnapshot().messages)).toEqual(ids(more));
  });

  it("older history arriving above the window stays out of it: the same messages, the rest counted", () => {
    const turns = history(60, "e");
    const { source, store } = open(turns.slice(40));
    const first = store.getSnapshot();
    expect(first.olderTurns).toBe(0);
    source.setTurns(turns);
    const later = store.getSnapshot();
    expect(later.olderTurns).toBe(40);
    expect(later.messages).toBe(first.messages);
    expect(ids(turns.slice(0, 40)).filter((id) => itemsRead.has(id))).toEqual([]);
  });

  it("follows the newest turns while the history loads (the turns listing comes oldest first), then keeps its first turn", () => {
    const turns = history(55, "l");
    const source = new Source();
    source.setTurns(turns.slice(0, 25), "loading");
    const store = new ChatStore(source);
    expect(store.getSnapshot().olderTurns).toBe(5);
    // The listing's next pages add newer turns at the end: the window moves with them.
    source.setTurns(turns.slice(0, 50), "loading");
    expect(store.getSnapshot().olderTurns).toBe(30);
    source.setTurns(turns, "loading");
    expect(store.getSnapshot().olderTurns).toBe(35);
    expect(turnsOf(store.getSnapshot().messages)).toEqual(ids(turns.slice(35)));
    // Loaded (and shown): a new turn joins at the end and the window keeps its first turn.
    source.setTurns(turns, "idle");
    expect(store.getSnapshot().olderTurns).toBe(35);
    source.setTurns([...turns, turn("l55")], "live");
    expect(store.getSnapshot().olderTurns).toBe(35);
    // A user who scrolled back while it loaded keeps their place.
    const other = new Source();
    other.setTurns(turns.slice(0, 25), "loading");
    const widened = new ChatStore(other);
    widened.showOlder(2);
    expect(widened.getSnapshot().olderTurns).toBe(3);
    other.setTurns(turns, "loading");
    expect(widened.getSnapshot().olderTurns).toBe(3);
  });

  it("the snapshot that ends the load still follows the newest turns (its last pages may come with it)", () => {
    const turns = history(30, "e");
    const source = new Source();
    source.setTurns(turns.slice(0, 25), "loading");
    const store = new ChatStore(source);
    expect(store.getSnapshot().olderTurns).toBe(5);
    // The turns listing's last page and the end of the load in one snapshot (a new-user trial
    // saw 25 of 30 turns after a reload): the newest 20 show.
    source.setTurns(turns, "idle");
    expect(store.getSnapshot().olderTurns).toBe(10);
    expect(turnsOf(store.getSnapshot().messages)).toEqual(ids(turns.slice(10)));
    // From then on the window keeps its first turn.
    source.setTurns([...turns, turn("e30")], "live");
    expect(store.getSnapshot().olderTurns).toBe(10);
  });

  it("starts at the turn the user asked, never on a continuation (an approval's reply shows with its question)", () => {
    const turns = history(30, "f");
    // f10 is the continuation of f9 (its input only answers an approval).
    turns[10] = turn("f10", { input: [{ type: "user.tool_approval", tool_call_id: "c1", approval: { status: "allow" } }] });
    const { store } = open(turns);
    const s = store.getSnapshot();
    expect(s.olderTurns).toBe(9);
    expect(s.messages[0]).toMatchObject({ kind: "user", turnId: "f9" });
  });

  it("`all` shows every turn (the whole history); a smaller size later hides nothing already shown", () => {
    const turns = history(45, "g");
    const { source, store } = open(turns);
    store.showTurns("all");
    const all = store.getSnapshot();
    expect(all.olderTurns).toBe(0);
    expect(all.messages).toEqual(deriveMessages(all, []));
    store.showTurns(5);
    source.setTurns([...turns, turn("g45")]);
    expect(store.getSnapshot().olderTurns).toBe(0);
    // A size of 5 on a fresh session shows the newest 5; showOlder then widens by 5.
    const other = open(history(45, "h"));
    other.store.showTurns(5);
    expect(other.store.getSnapshot().olderTurns).toBe(40);
    other.store.showOlder();
    expect(other.store.getSnapshot().olderTurns).toBe(35);
  });

  it("the snapshot is the same object while neither the view nor the window changed", () => {
    const { store } = open(history(40, "i"));
    const s = store.getSnapshot();
    expect(store.getSnapshot()).toBe(s);
    store.showTurns(20);
    expect(store.getSnapshot()).toBe(s);
    store.showOlder(1);
    expect(store.getSnapshot()).not.toBe(s);
  });
});
