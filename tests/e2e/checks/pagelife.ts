import type { APIRequestContext, Page } from "@playwright/test";
import { expect } from "../expect";
import { persistedText } from "../helpers";
import { openSdk } from "./engine";
import type { Check } from "./types";

// Issue 14, "Page lifecycle" and "Framework lifecycles", checked where the app sees them: the
// SDK's snapshot on the bare SDK page (www/sdk.html), and the emulator's count of a session's
// live streams (`GET /_emulator/streams/{sid}`: create-turn streams and subscribes). Run in
// Chromium by tests/e2e/lifecycle.spec.ts and, where the engine allows, in Firefox by
// tests/e2e/firefox.spec.ts.

type StreamCounts = { open: number; max: number; opened: number };

async function streams(request: APIRequestContext, sid: string): Promise<StreamCounts> {
  const res = await request.get(`/_emulator/streams/${sid}`);
  expect(res.ok()).toBe(true);
  return (await res.json()) as StreamCounts;
}

/**
 * Inside the page: loads a second copy of the SDK module, as a hot module reload that
 * re-imports the package does (or a second bundle on the page): the chunk holding the package is
 * imported again under another URL (`?copy=2`), which makes the browser evaluate it again — a new
 * module instance with its own wasm instance and its own module state. Returns its namespace.
 */
const secondCopySrc = `async () => {
  const entry = document.querySelector('script[type="module"][src]').src;
  const source = await (await fetch(entry)).text();
  const chunks = [...source.matchAll(/from\\s*["']\\.\\/([^"']+\\.js)["']/g)].map((m) => new URL(m[1], entry).href);
  for (const url of chunks) {
    const first = await import(url);
    const name = Object.keys(first).find((k) => first[k] === window.forgestream);
    if (name === undefined) continue;
    const copy = (await import(url + "?copy=2"))[name];
    if (copy === window.forgestream) throw new Error("the second import returned the first copy");
    await copy.init();
    return copy;
  }
  throw new Error("no chunk exports the SDK");
}`;

/**
 * React StrictMode (mount, unmount, mount again) with three components on one session, then a
 * simulated hot module reload while they stay mounted: a second client of the same module and
 * a client of a second copy of the module, each opening the same session before the first
 * client's handles are disposed. The page-wide registry (`globalThis[Symbol.for(
 * "forgestream.engines")]`) makes every one of them a handle on the first engine: the server
 * sees one live stream for the turn (the create stream; no subscribe), every handle shows the
 * same snapshot, the text is the persisted text once; closing every handle releases the
 * session's Web Lock. `followOtherTabs: false` here, so that the tab leader (one Web Lock per
 * session, which would also keep a second engine of the page from subscribing) cannot hide a
 * second engine; `hmrWithTabsShareOneLock` runs the same with the leader on.
 */
async function hmrOneSubscribe(page: Page, request: APIRequestContext, followOtherTabs: boolean): Promise<void> {
  await openSdk(page);
  const result = await page.evaluate(
    async ({ secondCopySrc, followOtherTabs }) => {
      const loadCopy = (0, eval)(secondCopySrc) as () => Promise<typeof window.forgestream>;
      const one = window.forgestream;
      const { React, createRoot, useAgentSession } = window.forgestreamReact as {
        React: { StrictMode: unknown; createElement(type: unknown, props?: unknown, ...children: unknown[]): unknown };
        createRoot(el: Element): { render(node: unknown): void; unmount(): void };
        useAgentSession(client: unknown, options: unknown): { session: { getSnapshot(): unknown } | null };
      };
      const options = { baseUrl: "", storage: "memory" as const, followOtherTabs };
      const client = new one.AgentClient(options);
      const first = await client.createSession({ agent: { name: "storyteller" } });
      const sid = first.id;
      const turn = await first.send("Tell a story, 300 words, 10 ms");
      // Three components on the session, mounted twice each by StrictMode.
      const seen: unknown[] = [null, null, null];
      const Reader = ({ i }: { i: number }) => {
        const h = useAgentSession(client, { sessionId: sid });
        seen[i] = h.session;
        return null;
      };
      const root = createRoot(document.body.appendChild(document.createElement("div")));
      root.render(React.createElement(React.StrictMode, null, [0, 1, 2].map((i) => React.createElement(Reader, { key: i, i }))));
      // The hot reload: a new client of this copy, then a second copy of the module, both
      // opening the session while everything above is still open.
      const again = new one.AgentClient(options);
      const reloaded = again.session(sid);
      await reloaded.load();
      await reloaded.resume();
      const two = await loadCopy();
      const copyClient = new two.AgentClient(options);
      const copied = copyClient.session(sid);
      await copied.load();
      await copied.resume();
      const handles = [first, reloaded, copied];
      for (let i = 0; i < 600 && (copied.getSnapshot().connection.status !== "done" || seen.some((s) => s === null)); i++) await new Promise((r) => setTimeout(r, 50));
      const snap = copied.getSnapshot();
      const text = snap.messages
        .filter((m) => m.kind === "assistant" && m.turnId === turn)
        .flatMap((m) => (m.kind === "assistant" ? m.parts : []))
        .map((p) => (p.kind === "text" ? p.text : ""))
        .join("");
      const same = handles.every((h) => h.getSnapshot() === snap) && seen.every((s) => (s as { getSnapshot(): unknown } | null)?.getSnapshot() === snap);
      const secondCopy = two !== one && two.AgentClient !== one.AgentClient;
      root.unmount();
      for (const h of handles) h.close();
      // A Web Lock is let go when its callback's promise settles: a task or two after close.
      const lockCount = async () => {
        if (typeof navigator.locks?.query !== "function") return 0;
        const q = await navigator.locks.query();
        return [...(q.held ?? []), ...(q.pending ?? [])].filter((l) => l.name?.includes(sid)).length;
      };
      let locks = await lockCount();
      for (let i = 0; i < 100 && locks > 0; i++) {
        await new Promise((r) => setTimeout(r, 20));
        locks = await lockCount();
      }
      return { sid, turn, text, status: snap.connection.status, same, secondCopy, locks };
    },
    { secondCopySrc, followOtherTabs },
  );
  expect(result.secondCopy).toBe(true);
  expect(result.status).toBe("done");
  expect(result.same).toBe(true);
  const persisted = await persistedText(request, result.sid, result.turn);
  expect(persisted.length).toBeGreaterThan(300);
  expect(result.text).toBe(persisted);
  // One live stream for the session on the server: the create stream, no subscribe.
  expect(await streams(request, result.sid)).toMatchObject({ opened: 1, max: 1 });
  // Locks and channels are released with the engine.
  expect(result.locks).toBe(0);
}

export const hmrAdoptsTheEngine: Check<"page" | "request"> = ({ page, request }) => hmrOneSubscribe(page, request, false);
export const hmrWithTabsShareOneLock: Check<"page" | "request"> = ({ page, request }) => hmrOneSubscribe(page, request, true);
