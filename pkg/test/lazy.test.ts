/**
 * `SnapshotStore` with `turnItems: "onRead"` (the default): turn headers arrive eagerly, a turn's
 * items cross from the core on first read and are then kept current by the change sets, which
 * carry item changes only for the turns read (the core's held rule, scripted here by FakeCore).
 */
import { describe, expect, it } from "vitest";
import { SnapshotStore } from "../src/snapshot.js";
import type { ItemView } from "../src/types.js";
import { FakeCore, header, message, type Changes } from "./fake-core.js";

const live = { status: "live", turnId: "t1" };

/** The wasm's items: t0 done with one answer, t1 running with two messages. */
function wasmItems(): Map<string, ItemView[]> {
  return new Map([
    ["t0", [message("t0", "a", 3, "Old answer")]],
    ["t1", [message("t1", "m1", 1, "Hel"), message("t1", "m2", 1, "other")]],
  ]);
}

/** The whole view as the core sends it: every header, items only of the turns in `held`. */
function whole(items: Map<string, ItemView[]>, held: ReadonlySet<string> | "all", drain = 1): Changes {
  return {
    sessionId: "s1",
    drain,
    order: ["t0", "t1"],
    turns: [header("t0", ["a"], "done"), header("t1", ["m1", "m2"])],
    items: [...items].filter(([id]) => held === "all" || held.has(id)).flatMap(([, list]) => list.map((value) => ({ turnId: value.turnId, key: value.key, removed: false, value }))),
    connection: live,
    error: null,
  };
}

/** A FakeCore that answers `turnItems` from `items` and records which turns it holds. */
class LazyCore extends FakeCore {
  readonly held = new Set<string>();
  reads: string[] = [];
  constructor(readonly items = wasmItems()) {
    super(whole(items, new Set()));
  }
  override snapshot(): Changes {
    this.full = whole(this.items, this.held, this.full.drain);
    return super.snapshot();
  }
  turnItems(turnId: string) {
    this.reads.push(turnId);
    this.held.add(turnId);
    const items = this.items.get(turnId);
    return items ? { turnId, drain: this.full.drain, items: structuredClone(items) } : null;
  }
}

function open() {
  const core = new LazyCore();
  const store = new SnapshotStore(core.asSession(), () => {});
  return { core, store };
}

const json = (x: unknown) => JSON.parse(JSON.stringify(x)) as unknown;

describe("SnapshotStore, turn items on read", () => {
  it("reads a turn's items once, equal to the eager view; reading never notifies or changes the snapshot", () => {
    const { core, store } = open();
    const eagerCore = new FakeCore(whole(wasmItems(), "all"));
    const eager = new SnapshotStore(eagerCore.asSession(), () => {}, true);
    let notified = 0;
    store.subscribe(() => notified++);
    const snap = store.getSnapshot();
    expect(core.reads).toEqual([]);
    const items = snap.turns[1]!.items;
    expect(core.reads).toEqual(["t1"]);
    expect(json(items)).toEqual(json(eager.getSnapshot().turns[1]!.items));
    expect(json(snap.turns)).toEqual(json(eager.getSnapshot().turns));
    // Same array on every read; one read of the core; no notification; same snapshot.
    expect(snap.turns[1]!.items).toBe(items);
    expect(Object.isFrozen(items) && Object.isFrozen(items[0])).toBe(true);
    expect(core.reads).toEqual(["t1", "t0"]);
    expect(notified).toBe(0);
    expect(store.getSnapshot()).toBe(snap);
  });

  it("a read turn follows appends; an unread one keeps its object and stays unread", () => {
    const { core, store } = open();
    const before = store.getSnapshot();
    const m2 = before.turns[1]!.items[1];
    core.queue.push({ sessionId: "s1", drain: 2, items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion: 1, version: 2, content: "lo" } }], connection: live, error: null });
    store.flush();
    const after = store.getSnapshot();
    const body = after.turns[1]!.items[0]!.body;
    expect(body.kind === "message" && body.content).toBe("Hello");
    expect(after.turns[1]!.items[1]).toBe(m2);
    expect(after.turns[0]).toBe(before.turns[0]);
    expect(core.reads).toEqual(["t1"]);
    expect(core.fulls).toBe(1);
  });

  it("an unread turn that changed gets a new object that reads the new items; an older object read later shows the newest", () => {
    const { core, store } = open();
    const before = store.getSnapshot();
    // t1's text grew in the wasm; nobody held t1, so only its cursor crossed.
    core.items.set("t1", [message("t1", "m1", 2, "Hello"), message("t1", "m2", 1, "other")]);
    core.queue.push({ sessionId: "s1", drain: 2, cursors: [{ turnId: "t1", version: 1, lastSequenceNumber: 9 }], connection: live, error: null });
    store.flush();
    const after = store.getSnapshot();
    expect(after.turns[1]).not.toBe(before.turns[1]);
    const text = (items: readonly ItemView[]) => items.map((i) => (i.body.kind === "message" ? i.body.content : null));
    expect(text(after.turns[1]!.items)).toEqual(["Hello", "other"]);
    // The old object, never read while it was current: documented to show the newest items.
    expect(before.turns[1]!.items).toBe(after.turns[1]!.items);
    expect(core.reads).toEqual(["t1"]);
  });

  it("a whole view (a drain that is not relative to ours) keeps unread turns unread and replaces the read ones' items", () => {
    const { core, store } = open();
    void store.getSnapshot().turns[1]!.items;
    core.items.set("t1", [message("t1", "m1", 5, "Hello there")]);
    core.full = { ...core.full, drain: 7 };
    core.queue.push({ sessionId: "s1", drain: 6, connection: live, error: null }); // a gap: resync
    store.flush();
    expect(core.fulls).toBe(2);
    const snap = store.getSnapshot();
    // The header still names m2, which the whole view no longer has: it is gone, not kept.
    expect(snap.turns[1]!.items.map((i) => i.key)).toEqual(["m1"]);
    expect(core.reads).toEqual(["t1"]);
    expect(snap.turns[0]!.items.map((i) => i.key)).toEqual(["a"]);
    expect(core.reads).toEqual(["t1", "t0"]);
  });
});
