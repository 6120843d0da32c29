/**
 * Unit tests of `SnapshotStore`: how change sets from the core patch the immutable snapshot
 * (structural sharing, text appends, drains that are not relative to our copy) and how
 * notifications are coalesced. The core is scripted (fake-core.ts); the browser suites cover
 * the store over the real wasm core.
 */
import { describe, expect, it, vi } from "vitest";
import { SnapshotStore, EMPTY_SNAPSHOT } from "../src/snapshot.js";
import { ForgestreamError } from "../src/errors.js";
import { FakeCore, header, message, type Changes } from "./fake-core.js";

const live = { status: "live", turnId: "t1" };

function base(): Changes {
  return {
    sessionId: "s1",
    drain: 1,
    order: ["t1"],
    turns: [header("t1", ["m1", "m2"])],
    items: [
      { turnId: "t1", key: "m1", removed: false, value: message("t1", "m1", 1, "Hel") },
      { turnId: "t1", key: "m2", removed: false, value: message("t1", "m2", 1, "other") },
    ],
    connection: live,
    error: null,
  };
}

function open(full = base()) {
  const core = new FakeCore(full);
  const warnings: { code: string; message: string }[] = [];
  // These tests script change sets that carry every item: the `turnItems: "all"` path
  // (lazy.test.ts covers the default, items read on demand).
  const store = new SnapshotStore(core.asSession(), (w) => warnings.push(w), true);
  return { core, store, warnings };
}

const textOf = (store: SnapshotStore, turn: number, item: number) => {
  const body = store.getSnapshot().turns[turn]?.items[item]?.body;
  return body?.kind === "message" ? body.content : undefined;
};

describe("SnapshotStore", () => {
  it("starts from the core's full view, frozen", () => {
    const { store, core } = open();
    const snap = store.getSnapshot();
    expect(core.fulls).toBe(1);
    expect(snap.sessionId).toBe("s1");
    expect(snap.turns.map((t) => t.turnId)).toEqual(["t1"]);
    expect(snap.turns[0]!.items.map((i) => i.key)).toEqual(["m1", "m2"]);
    expect(Object.isFrozen(snap)).toBe(true);
    expect(Object.isFrozen(snap.turns)).toBe(true);
    expect(Object.isFrozen(snap.turns[0]!.items[0])).toBe(true);
  });

  it("an append grows only its item; siblings, other turns and unchanged fields keep their identity", () => {
    const full = base();
    full.order = ["t0", "t1"];
    full.turns = [header("t0", ["a"], "done"), header("t1", ["m1", "m2"])];
    full.items = [{ turnId: "t0", key: "a", removed: false, value: message("t0", "a", 3, "Old answer") }, ...base().items!];
    const { store, core } = open(full);
    const before = store.getSnapshot();
    core.queue.push({ sessionId: "s1", drain: 2, items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion: 1, version: 2, content: "lo" } }], connection: live, error: null });
    store.flush();
    const after = store.getSnapshot();
    expect(after).not.toBe(before);
    expect(textOf(store, 1, 0)).toBe("Hello");
    expect(after.turns[1]!.items[0]!.version).toBe(2);
    expect(after.turns[1]).not.toBe(before.turns[1]);
    expect(after.turns[1]!.items[1]).toBe(before.turns[1]!.items[1]);
    expect(after.turns[0]).toBe(before.turns[0]);
    expect(after.connection).toBe(before.connection);
    expect(after.pending).toBe(before.pending);
    expect(core.fulls).toBe(1);
  });

  it("publishes nothing while the core catches up a restored turn's replay, and the changes after it", () => {
    // Two trials: after every reload mid-stream the reply showed empty for a frame or more —
    // the history published before the replay reached what the page had shown.
    const { store, core } = open();
    const before = store.getSnapshot();
    core.catchingUp = true;
    core.queue.push({ sessionId: "s1", drain: 2, items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion: 1, version: 2, content: "lo" } }], connection: live, error: null });
    const seen = vi.fn();
    store.subscribe(seen);
    store.flush();
    expect(store.getSnapshot()).toBe(before);
    expect(core.takes).toBe(0);
    expect(seen).not.toHaveBeenCalled();
    // Over: the core notifies, and the next update carries what was held.
    core.catchingUp = false;
    store.flush();
    expect(textOf(store, 0, 0)).toBe("Hello");
    expect(seen).toHaveBeenCalledTimes(1);
  });

  it("a turn that only gained text comes as its cursor: the header is kept, its sequence number moves", () => {
    const { store, core } = open();
    const before = store.getSnapshot();
    core.queue.push({
      sessionId: "s1",
      drain: 2,
      cursors: [{ turnId: "t1", version: 1, lastSequenceNumber: 7 }],
      items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion: 1, version: 2, content: "lo" } }],
      connection: live,
      error: null,
    });
    store.flush();
    const after = store.getSnapshot();
    expect(core.fulls).toBe(1);
    expect(textOf(store, 0, 0)).toBe("Hello");
    const turn = after.turns[0]!;
    expect(turn.lastSequenceNumber).toBe(7);
    expect(turn.items.map((i) => i.key)).toEqual(["m1", "m2"]);
    expect(turn.items[1]).toBe(before.turns[0]!.items[1]);
    const { items: _a, lastSequenceNumber: _b, ...rest } = turn;
    const { items: _c, lastSequenceNumber: _d, ...restBefore } = before.turns[0]!;
    expect(rest).toEqual(restBefore);
    expect(Object.isFrozen(turn)).toBe(true);
  });

  it("a drain without the badge keeps the badge (it did not change)", () => {
    const { store, core } = open();
    const before = store.getSnapshot().connection;
    core.queue.push({ sessionId: "s1", drain: 2, items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion: 1, version: 2, content: "lo" } }], error: null });
    store.flush();
    expect(textOf(store, 0, 0)).toBe("Hello");
    expect(store.getSnapshot().connection).toBe(before);
    core.queue.push({ sessionId: "s1", drain: 3, connection: { status: "done", turnId: "t1" }, error: null });
    store.flush();
    expect(store.getSnapshot().connection).toEqual({ status: "done", turnId: "t1" });
  });

  it("a cursor naming a header version it does not hold takes the whole view instead", () => {
    const { store, core } = open();
    core.full = { ...base(), drain: 2, turns: [{ ...header("t1", ["m1", "m2"], "done"), version: 2 }] };
    core.queue.push({ sessionId: "s1", drain: 2, cursors: [{ turnId: "t1", version: 2, lastSequenceNumber: 9 }], connection: live, error: null });
    store.flush();
    expect(core.fulls).toBe(2);
    expect(store.getSnapshot().turns[0]!.status).toBe("done");
  });

  it("an append against a version it does not hold takes the whole view instead", () => {
    const { store, core } = open();
    core.full = { ...base(), drain: 5, items: [{ turnId: "t1", key: "m1", removed: false, value: message("t1", "m1", 4, "Hello there") }, base().items![1]!] };
    core.queue.push({ sessionId: "s1", drain: 2, items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion: 3, version: 4, content: " there" } }], connection: live, error: null });
    store.flush();
    expect(core.fulls).toBe(2);
    expect(textOf(store, 0, 0)).toBe("Hello there");
  });

  it("a drain that skipped a number (someone else drained the core) takes the whole view", () => {
    const { store, core } = open();
    // Drain 2 went elsewhere; drain 3's append names the version we hold, yet is relative to a
    // state we never saw.
    core.full = { ...base(), drain: 3, items: [{ turnId: "t1", key: "m1", removed: false, value: message("t1", "m1", 3, "Hello!") }, base().items![1]!] };
    core.queue.push({ sessionId: "s1", drain: 3, items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion: 1, version: 3, content: "!" } }], connection: live, error: null });
    store.flush();
    expect(core.fulls).toBe(2);
    expect(textOf(store, 0, 0)).toBe("Hello!");
    // The next consecutive drain is incremental again.
    core.queue.push({ sessionId: "s1", drain: 4, items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion: 3, version: 4, content: "?" } }], connection: live, error: null });
    store.flush();
    expect(core.fulls).toBe(2);
    expect(textOf(store, 0, 0)).toBe("Hello!?");
  });

  it("never appends text to array content; the whole view is taken", () => {
    const full = base();
    full.items = [{ turnId: "t1", key: "m1", removed: false, value: message("t1", "m1", 1, [{ type: "text", text: "Hel" }] as never) }, full.items![1]!];
    const { store, core } = open(full);
    core.queue.push({ sessionId: "s1", drain: 2, items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion: 1, version: 2, content: "lo" } }], connection: live, error: null });
    store.flush();
    expect(core.fulls).toBe(2);
  });

  it("removes items and follows a new item order", () => {
    const { store, core } = open();
    core.queue.push({
      sessionId: "s1",
      drain: 2,
      turns: [header("t1", ["m2"])],
      items: [{ turnId: "t1", key: "m1", removed: true }],
      connection: live,
      error: null,
    });
    store.flush();
    expect(store.getSnapshot().turns[0]!.items.map((i) => i.key)).toEqual(["m2"]);
  });

  it("adds a turn in chain order and keeps the older turn's object", () => {
    const { store, core } = open();
    const t1 = store.getSnapshot().turns[0];
    core.queue.push({ sessionId: "s1", drain: 2, order: ["t1", "t2"], turns: [header("t2", [])], connection: { status: "connecting", turnId: "t2" }, error: null });
    store.flush();
    const snap = store.getSnapshot();
    expect(snap.turns.map((t) => t.turnId)).toEqual(["t1", "t2"]);
    expect(snap.turns[0]).toBe(t1);
    expect(snap.connection).toEqual({ status: "connecting", turnId: "t2" });
  });

  it("a drain that changes nothing keeps the snapshot and notifies no one", () => {
    const { store, core } = open();
    const listener = vi.fn();
    store.subscribe(listener);
    const before = store.getSnapshot();
    core.queue.push({ sessionId: "s1", drain: 2, connection: { ...live }, error: null });
    store.flush();
    expect(store.getSnapshot()).toBe(before);
    expect(listener).not.toHaveBeenCalled();
  });

  it("reports the core's error as a ForgestreamError, the same object while it stays", () => {
    const { store, core } = open();
    const error = { code: "forbidden", message: "HTTP 403", retryable: false, status: 403 };
    core.queue.push({ sessionId: "s1", drain: 2, connection: { status: "failed", turnId: "t1" }, error });
    store.flush();
    const first = store.getSnapshot().error;
    expect(first).toBeInstanceOf(ForgestreamError);
    expect(first).toMatchObject({ code: "forbidden", status: 403, retryable: false });
    core.queue.push({ sessionId: "s1", drain: 3, connection: { status: "failed", turnId: "t1" }, error, pending: [] });
    store.flush();
    expect(store.getSnapshot().error).toBe(first);
  });

  it("forwards warnings, including those of a drain it replaced by a full view", () => {
    const { store, core, warnings } = open();
    core.queue.push({ sessionId: "s1", drain: 2, connection: live, error: null, warnings: [{ code: "orphan-delta", message: "a" }] });
    store.flush();
    core.queue.push({ sessionId: "s1", drain: 9, connection: live, error: null, warnings: [{ code: "gap", message: "b" }] });
    store.flush();
    expect(warnings.map((w) => w.code)).toEqual(["orphan-delta", "gap"]);
  });

  it("coalesces many core notifications into one drain and one listener call", async () => {
    vi.useFakeTimers();
    try {
      const { store, core } = open();
      const listener = vi.fn();
      store.subscribe(listener);
      core.queue.push({ sessionId: "s1", drain: 2, items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion: 1, version: 2, content: "lo" } }], connection: live, error: null });
      for (let i = 0; i < 50; i++) core.listener!();
      expect(core.takes).toBe(0);
      await vi.runAllTimersAsync();
      expect(core.takes).toBe(1);
      expect(listener).toHaveBeenCalledTimes(1);
      expect(textOf(store, 0, 0)).toBe("Hello");
    } finally {
      vi.useRealTimers();
    }
  });

  it("with animation frames: one drain per frame, the frame that ran is not cancelled, a flush before it cancels it", async () => {
    vi.useFakeTimers();
    const frames = new Map<number, FrameRequestCallback>();
    let next = 1;
    const cancelled: number[] = [];
    vi.stubGlobal("requestAnimationFrame", (cb: FrameRequestCallback) => (frames.set(next, cb), next++));
    vi.stubGlobal("cancelAnimationFrame", (id: number) => (cancelled.push(id), frames.delete(id)));
    const runFrames = () => {
      const due = [...frames];
      frames.clear();
      for (const [, cb] of due) cb(0);
    };
    try {
      const { store, core } = open();
      const listener = vi.fn();
      store.subscribe(listener);
      const append = (drain: number, baseVersion: number, content: string): Changes => ({ sessionId: "s1", drain, items: [{ turnId: "t1", key: "m1", removed: false, append: { baseVersion, version: baseVersion + 1, content } }], connection: live, error: null });
      core.queue.push(append(2, 1, "lo"));
      for (let i = 0; i < 5; i++) core.listener!();
      expect(frames.size).toBe(1);
      runFrames();
      expect(core.takes).toBe(1);
      expect(listener).toHaveBeenCalledTimes(1);
      expect(cancelled).toEqual([]);
      // A flush (teardown, a send) before the next frame runs the update once and cancels it.
      core.queue.push(append(3, 2, "!"));
      core.listener!();
      const [pending] = [...frames.keys()];
      store.flush();
      expect(cancelled).toEqual([pending]);
      runFrames();
      await vi.advanceTimersByTimeAsync(200);
      expect(core.takes).toBe(2);
      expect(listener).toHaveBeenCalledTimes(2);
      expect(textOf(store, 0, 0)).toBe("Hello!");
    } finally {
      vi.unstubAllGlobals();
      vi.useRealTimers();
    }
  });

  it("unsubscribe stops notifications", () => {
    const { store, core } = open();
    const listener = vi.fn();
    const off = store.subscribe(listener);
    off();
    core.queue.push({ sessionId: "s1", drain: 2, connection: { status: "done", turnId: "t1" }, error: null });
    store.flush();
    expect(listener).not.toHaveBeenCalled();
  });

  it("EMPTY_SNAPSHOT is frozen and idle", () => {
    expect(Object.isFrozen(EMPTY_SNAPSHOT)).toBe(true);
    expect(EMPTY_SNAPSHOT.connection.status).toBe("idle");
  });
});

describe("ForgestreamError.from", () => {
  it("keeps a ForgestreamError as it is", () => {
    const e = new ForgestreamError("conflict", "x", { status: 409 });
    expect(ForgestreamError.from(e)).toBe(e);
  });
  it("carries a coded error's code, status and retryability", () => {
    // As the wasm side throws it (crates/forgestream-web/src/error.rs): an Error named
    // ForgestreamError whose code comes from the core's ErrorCode enum.
    const raw = Object.assign(new Error("gone"), { name: "ForgestreamError", code: "not-found", status: 404 });
    const e = ForgestreamError.from(raw);
    expect(e).toMatchObject({ code: "not-found", status: 404, retryable: false, message: "gone" });
    expect(e.cause).toBe(raw);
  });
  it("a foreign error with a code of its own is internal, not passed off as one of ours", () => {
    // A Node system error and a DOMException both carry `code`; neither is a ForgestreamError.
    const node = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect(ForgestreamError.from(node)).toMatchObject({ code: "internal", retryable: false, message: "socket hang up" });
    const dom = new DOMException("quota", "QuotaExceededError");
    expect(ForgestreamError.from(dom).code).toBe("internal");
  });
  it("network errors are retryable by default", () => {
    expect(new ForgestreamError("network", "x").retryable).toBe(true);
    expect(new ForgestreamError("protocol", "x").retryable).toBe(false);
  });
});
