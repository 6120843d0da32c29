/**
 * `AgentSession.close()` seen from an app: every subscriber re-reads once, a listener that throws
 * neither escapes `close()` nor stops the others, and what a render reads in that last
 * notification (the snapshot, the inspector log) is still there. The engine is a stand-in with
 * the members a handle touches.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentSession } from "../src/index.js";

function sharedSession() {
  const listeners = new Set<() => void>();
  const frame = { sequenceNumber: 1, eventType: "turn.created" };
  const shared = {
    handles: 0,
    released: 0,
    log: [] as unknown[],
    logTotal: 0,
    inner: { id: "s1", engineId: 1, eventLogSince: (_from: number) => ({ total: 1, capacity: 2000, strings: ["t1", frame.eventType], frames: shared.logTotal === 0 ? [0, frame.sequenceNumber, 1, 0, -1, 40, 5] : [] }) },
    chat: {
      getSnapshot: () => ({ status: "streaming", connection: { status: "live", turnId: "t1" } }),
      subscribe: (l: () => void) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    },
    release() {
      shared.released += 1;
    },
  };
  return { shared, listeners };
}

describe("AgentSession.close()", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("calls every listener once even when one throws, and reports the throw instead of raising it", () => {
    const reported: unknown[] = [];
    vi.stubGlobal("reportError", (e: unknown) => reported.push(e));
    const { shared, listeners } = sharedSession();
    const handle = new AgentSession(shared);
    const seen: string[] = [];
    handle.subscribe(() => {
      seen.push("first");
      throw new Error("render failed");
    });
    handle.subscribe(() => seen.push(`second:${handle.getSnapshot().connection.status}`));

    expect(() => handle.close()).not.toThrow();
    expect(seen).toEqual(["first", "second:idle"]);
    expect(reported).toHaveLength(1);
    expect(String(reported[0])).toContain("render failed");
    expect(listeners.size).toBe(0);
    expect(shared.released).toBe(1);
  });

  it("keeps the inspector log readable after close (a last render may read it)", () => {
    const { shared } = sharedSession();
    const handle = new AgentSession(shared);
    let inLastNotification: unknown[] | undefined;
    handle.subscribe(() => {
      inLastNotification = handle.eventLog();
    });
    handle.close();
    expect(inLastNotification).toEqual([{ turnId: "t1", sequenceNumber: 1, eventType: "turn.created", threadId: "t1", id: null, bytes: 40, atMs: 5 }]);
    expect(handle.eventLog()).toEqual([{ turnId: "t1", sequenceNumber: 1, eventType: "turn.created", threadId: "t1", id: null, bytes: 40, atMs: 5 }]);
    expect(handle.closed).toBe(true);
  });
});
