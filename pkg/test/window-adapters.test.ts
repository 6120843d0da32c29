/**
 * The history window through `openSession` and the Vue composable: `shownTurns` reaches the
 * session before the app renders its first snapshot (the early handle of a load included), and
 * `showOlder` / `olderTurns` pass through, also while the history still loads. The React hook
 * shares `openSession`; the quickstart's e2e check drives it (tests/e2e/checks/chat.ts).
 */
import { describe, expect, it, vi } from "vitest";
import { effectScope } from "vue";
import { EMPTY_CHAT_SNAPSHOT, type ShownTurns } from "../src/chat.js";
import { ForgestreamError } from "../src/errors.js";
import { openSession, reopenLater, REOPEN_WAITS_MS } from "../src/open.js";
import { useAgentSession } from "../src/vue.js";
import type { AgentClient } from "../src/index.js";

/** A client whose handles record the window calls; `loadAndResume()` waits for `finishLoad`. */
function fakeClient() {
  const calls: string[] = [];
  let finishLoad!: () => void;
  const loaded = new Promise<void>((r) => (finishLoad = r));
  const snapshot = Object.freeze({ ...EMPTY_CHAT_SNAPSHOT, sessionId: "s1", olderTurns: 7 });
  let n = 0;
  const client = {
    session: (id: string) => {
      const name = `h${++n}`;
      return {
        id,
        showTurns: (c: ShownTurns) => calls.push(`${name}.showTurns(${c})`),
        showOlder: (c?: ShownTurns) => calls.push(`${name}.showOlder(${c ?? ""})`),
        getSnapshot: () => {
          calls.push(`${name}.getSnapshot`);
          return snapshot;
        },
        subscribe: () => () => {},
        loadAndResume: () => loaded,
        flush: () => {},
        close: () => {},
      };
    },
  };
  return { client: client as unknown as AgentClient, calls, finishLoad };
}

describe("the history window in the adapters", () => {
  it("openSession sets shownTurns on the early handle before anyone reads it, and on the opened one", async () => {
    const { client, calls, finishLoad } = fakeClient();
    const opened = openSession(client, { sessionId: "s1", shownTurns: 3 }, (s) => s.getSnapshot());
    finishLoad();
    await opened;
    expect(calls).toEqual(["h2.showTurns(3)", "h2.getSnapshot", "h1.showTurns(3)"]);
    // Without the option, the store's default stands: nothing is called.
    const other = fakeClient();
    other.finishLoad();
    await openSession(other.client, { sessionId: "s1" });
    expect(other.calls.filter((c) => c.includes("showTurns"))).toEqual([]);
  });

  it("Vue: olderTurns and showOlder work while the history loads, and after", async () => {
    const { client, calls, finishLoad } = fakeClient();
    const scope = effectScope();
    const refs = scope.run(() => useAgentSession(client, { sessionId: "s1", shownTurns: "all" }))!;
    expect(calls[0]).toBe("h2.showTurns(all)");
    expect(refs.olderTurns.value).toBe(7);
    refs.showOlder(2);
    expect(calls).toContain("h2.showOlder(2)");
    finishLoad();
    await new Promise((r) => setTimeout(r, 0));
    expect(refs.session.value?.id).toBe("s1");
    refs.showOlder();
    expect(calls.at(-1)).toBe("h1.showOlder()");
    scope.stop();
    refs.showOlder();
    expect(calls.at(-1)).toBe("h1.showOlder()");
  });

  it("Vue: reopen opens the session again after opening failed, and only then", async () => {
    const { client: base } = fakeClient();
    let loads = 0;
    const client = {
      session: (id: string) => {
        const h = (base as unknown as { session: (id: string) => Record<string, unknown> }).session(id);
        // The first open's history fails (the server restarting); later ones load.
        return { ...h, loadAndResume: () => (++loads <= 1 ? Promise.reject(new Error("http 500")) : Promise.resolve()) };
      },
    } as unknown as AgentClient;
    const scope = effectScope();
    const refs = scope.run(() => useAgentSession(client, { sessionId: "s1" }))!;
    await new Promise((r) => setTimeout(r, 0));
    expect(refs.status.value).toBe("error");
    expect(refs.session.value).toBeNull();
    refs.reopen();
    expect(refs.status.value).toBe("loading");
    await new Promise((r) => setTimeout(r, 0));
    expect(refs.session.value?.id).toBe("s1");
    expect(refs.error.value).toBeNull();
    expect(loads).toBe(2);
    // Open: reopen does nothing.
    refs.reopen();
    await new Promise((r) => setTimeout(r, 0));
    expect(loads).toBe(2);
    scope.stop();
  });

  it("reopenLater: a session that failed to open retryably is opened again after growing waits, or at once online; never after a failed create or a lasting error", async () => {
    vi.useFakeTimers();
    const win = new EventTarget();
    const doc = Object.assign(new EventTarget(), { visibilityState: "visible" });
    vi.stubGlobal("window", win);
    vi.stubGlobal("document", doc);
    try {
      let reopened = 0;
      const reopen = () => void reopened++;
      const down = new ForgestreamError("network", "the request failed (network)");
      let stop = reopenLater(down, 0, reopen);
      vi.advanceTimersByTime(REOPEN_WAITS_MS[0]! - 1);
      expect(reopened).toBe(0);
      vi.advanceTimersByTime(1);
      expect(reopened).toBe(1);
      // Once only: the listeners are gone with it.
      win.dispatchEvent(new Event("online"));
      expect(reopened).toBe(1);
      // After failures, the wait grows; the browser back online does not wait for it.
      stop = reopenLater(down, 2, reopen);
      vi.advanceTimersByTime(REOPEN_WAITS_MS[1]!);
      expect(reopened).toBe(1);
      win.dispatchEvent(new Event("online"));
      expect(reopened).toBe(2);
      // A hidden page waits until it is visible again.
      stop = reopenLater(down, 0, reopen);
      doc.visibilityState = "hidden";
      vi.advanceTimersByTime(REOPEN_WAITS_MS[0]!);
      expect(reopened).toBe(2);
      doc.visibilityState = "visible";
      doc.dispatchEvent(new Event("visibilitychange"));
      expect(reopened).toBe(3);
      // Cleaned up (the open changed): nothing.
      stop = reopenLater(down, 0, reopen);
      stop();
      vi.advanceTimersByTime(120_000);
      win.dispatchEvent(new Event("online"));
      expect(reopened).toBe(3);
      // Not after a failed create (another could be left behind), nor for an error that
      // waiting does not mend (not-found).
      const creating = { createSession: () => Promise.reject(new ForgestreamError("network", "the request failed (network)")) } as unknown as AgentClient;
      const createError = await openSession(creating, { restore: false, create: { agent: { name: "support" } } }).then(
        () => null,
        (e: unknown) => e as ForgestreamError,
      );
      expect(createError).toMatchObject({ code: "network", retryable: true });
      reopenLater(createError, 0, reopen);
      reopenLater(new ForgestreamError("not-found", "gone"), 0, reopen);
      vi.advanceTimersByTime(120_000);
      win.dispatchEvent(new Event("online"));
      expect(reopened).toBe(3);
    } finally {
      vi.unstubAllGlobals();
      vi.useRealTimers();
    }
  });
});
