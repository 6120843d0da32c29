import type { APIRequestContext, Page } from "@playwright/test";
import { expect } from "../expect";
import { persistedText } from "../helpers";
import { openSdk, type Sdk } from "./engine";
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

// ---------------------------------------------------------------------------------------------
// Page lifecycle. Each check streams a turn whose first connection stalls after 20 frames (the
// emulator's `stall-after-events=20,once`: no byte, no EOF, the turn goes on; a new connection
// gets the frames): a connection that died silently while the page was away, as a frozen or
// cached page (or a sleeping laptop) finds it. The SDK's idle watchdog is set to 30 s, so the
// turn would end at the earliest 30 s after the stall through the watchdog alone. The lifecycle
// rule (read the turn, then resubscribe after the cursor) ends it right after the event: each
// check asserts `done` within half the watchdog after it, and the text the persisted text once.

const WATCHDOG_MS = 30_000;

/** A session handle of the page's SDK. */
type Handle = ReturnType<InstanceType<Sdk["AgentClient"]>["session"]>;

/** The emulator's fault: each turn's first live stream stalls after 20 frames. */
const STALL = "stall-after-events=20,once";

/**
 * In the page: a client whose every request carries {@link STALL} creates a session and sends a
 * turn, then waits until the create stream went silent. Returns the session and turn ids.
 */
async function startStalledTurn(page: Page): Promise<{ sid: string; turn: string }> {
  return page.evaluate(
    async ({ stall, watchdog }) => {
      const { AgentClient } = window.forgestream;
      const client = new AgentClient({
        baseUrl: "",
        storage: "memory",
        followOtherTabs: false,
        reconnect: { idleTimeoutMs: watchdog },
        headers: { "x-forgestream-fault": stall },
      });
      const h = await client.createSession({ agent: { name: "storyteller" } });
      // The client stays reachable (on `window`, as an app's module-level client is): a client
      // the page dropped is collected, and the finalizer that frees its wasm memory is
      // JavaScript run while the page is in the back/forward cache, which makes Chromium evict
      // it (measured: `Circumstantial: JavaScriptExecution` without `client` here).
      window.pl = { h, client, shows: [] as boolean[] };
      window.addEventListener("pageshow", (e) => (window.pl as { shows: boolean[] }).shows.push(e.persisted));
      const turn = await h.send("Tell a story, 500 words, 10 ms");
      const items = () => h.getSnapshot().turns.at(-1)?.items.length ?? 0;
      // The create stream delivered its 20 frames and went silent; the turn goes on.
      for (let i = 0; i < 200 && items() === 0; i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 300));
      return { sid: h.id, turn };
    },
    { stall: STALL, watchdog: WATCHDOG_MS },
  );
}

/** In the page: waits (up to `ms`) for the turn to end; its status, shown text, ms waited. */
async function waitDone(page: Page, turn: string, ms: number): Promise<{ status: string; text: string; waitedMs: number; shows: boolean[] }> {
  return page.evaluate(
    async ({ turn, ms }) => {
      const { h, shows } = window.pl as { h: Handle; shows: boolean[] };
      const start = Date.now();
      while (h.getSnapshot().connection.status !== "done" && Date.now() - start < ms) await new Promise((r) => setTimeout(r, 20));
      const waitedMs = Date.now() - start;
      const text = h
        .getSnapshot()
        .messages.filter((m) => m.kind === "assistant" && m.turnId === turn)
        .flatMap((m) => (m.kind === "assistant" ? m.parts : []))
        .map((p) => (p.kind === "text" ? p.text : ""))
        .join("");
      const status = h.getSnapshot().connection.status;
      h.close();
      return { status, text, waitedMs, shows };
    },
    { turn, ms },
  );
}

async function expectCompletedOnce(request: APIRequestContext, sid: string, turn: string, done: { status: string; text: string }): Promise<void> {
  expect(done.status).toBe("done");
  const persisted = await persistedText(request, sid, turn);
  expect(persisted.length).toBeGreaterThan(200);
  expect(done.text).toBe(persisted);
}

/**
 * Freeze mid-stream, then resume: done at once, text once. Debian's Chromium headless accepts
 * CDP `Page.setWebLifecycleState` but neither stops the page nor fires `freeze` / `resume`
 * (measured: a 10 ms interval kept counting, no event; tests/e2e/checks/tabs.ts found the
 * same), so the check stops the page's script with the debugger for the frozen second, as a
 * frozen page is, and fires the `resume` event on `document` that a browser fires on unfreezing.
 */
export const freezeResumeCompletes: Check<"page" | "context" | "request"> = async ({ page, context, request }) => {
  await openSdk(page);
  const { sid, turn } = await startStalledTurn(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send("Page.setWebLifecycleState", { state: "frozen" });
  await cdp.send("Debugger.enable");
  await cdp.send("Debugger.pause");
  await new Promise((r) => setTimeout(r, 1000));
  await cdp.send("Debugger.resume");
  await cdp.send("Page.setWebLifecycleState", { state: "active" });
  await page.evaluate(() => document.dispatchEvent(new Event("resume")));
  const done = await waitDone(page, turn, WATCHDOG_MS / 2);
  await expectCompletedOnce(request, sid, turn, done);
};

/** Offline, then online (CDP `Network.emulateNetworkConditions`) mid-stream: done, text once. */
export const offlineOnlineCompletes: Check<"page" | "context" | "request"> = async ({ page, context, request }) => {
  await openSdk(page);
  const { sid, turn } = await startStalledTurn(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  const conditions = { latency: 0, downloadThroughput: -1, uploadThroughput: -1 };
  await cdp.send("Network.emulateNetworkConditions", { ...conditions, offline: true });
  await new Promise((r) => setTimeout(r, 1000));
  await cdp.send("Network.emulateNetworkConditions", { ...conditions, offline: false });
  const done = await waitDone(page, turn, WATCHDOG_MS / 2);
  await expectCompletedOnce(request, sid, turn, done);
};

/**
 * Back/forward cache: navigate away mid-stream and back (`page.goBack()`): `pageshow` fires with
 * `persisted`, the turn completes at once, the text once. Needs a browser launched without
 * Playwright's `--disable-back-forward-cache` (tests/e2e/bfcache.spec.ts). When Chromium does not
 * cache the page, CDP `Page.backForwardCacheNotUsed` says why, and the check fails naming it.
 */
export const bfcacheReturnCompletes: Check<"page" | "context" | "request"> = async ({ page, context, request }) => {
  await openSdk(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send("Page.enable");
  const notCached: string[] = [];
  cdp.on("Page.backForwardCacheNotUsed", (e: { notRestoredExplanations?: { type: string; reason: string }[] }) => {
    for (const x of e.notRestoredExplanations ?? []) notCached.push(`${x.type}: ${x.reason}`);
  });
  const { sid, turn } = await startStalledTurn(page);
  await page.goto("/sdk.html?away=1");
  await expect(page.locator("#status")).toHaveText("ready");
  await new Promise((r) => setTimeout(r, 500));
  // A page restored from the cache fires no `load`: wait for the commit only.
  await page.goBack({ waitUntil: "commit" });
  await new Promise((r) => setTimeout(r, 200));
  const restored = await page.evaluate(() => window.pl !== undefined);
  expect(notCached).toEqual([]);
  expect(restored).toBe(true);
  const done = await waitDone(page, turn, WATCHDOG_MS / 2);
  expect(done.shows).toEqual([true]);
  await expectCompletedOnce(request, sid, turn, done);
};

/**
 * A stalled read (`stall-after-events`: the body stays open and sends nothing) is caught by the
 * idle watchdog (here 1.5 s), which aborts it, reads the turn and resubscribes after the cursor:
 * done, the text once.
 */
export const stalledReadResubscribes: Check<"page" | "request"> = async ({ page, request }) => {
  await openSdk(page);
  const result = await page.evaluate(async (stall) => {
    const { AgentClient } = window.forgestream;
    const client = new AgentClient({ baseUrl: "", storage: "memory", followOtherTabs: false, reconnect: { idleTimeoutMs: 1500 }, headers: { "x-forgestream-fault": stall } });
    const h = await client.createSession({ agent: { name: "storyteller" } });
    const turn = await h.send("Tell a story, 500 words, 10 ms");
    for (let i = 0; i < 1000 && h.getSnapshot().connection.status !== "done"; i++) await new Promise((r) => setTimeout(r, 20));
    const snap = h.getSnapshot();
    const text = snap.messages
      .filter((m) => m.kind === "assistant" && m.turnId === turn)
      .flatMap((m) => (m.kind === "assistant" ? m.parts : []))
      .map((p) => (p.kind === "text" ? p.text : ""))
      .join("");
    h.close();
    return { sid: h.id, turn, text, status: snap.connection.status };
  }, STALL);
  await expectCompletedOnce(request, result.sid, result.turn, result);
  // The stalled create stream, then one subscribe after the watchdog.
  expect((await streams(request, result.sid)).opened).toBe(2);
};

/**
 * The hot reload's `restore()`: a second copy of the module restores the session the first copy
 * is streaming (the adapters' default after a reload of the component module). It restores
 * through the live engine: the same snapshot, one history load, no second stream, the text once.
 */
export const hmrRestoreAdopts: Check<"page" | "request"> = async ({ page, request }) => {
  await openSdk(page);
  const listings: string[] = [];
  page.on("request", (r) => {
    if (/\/sessions\/[^/]+\/(turns|events)\?/.test(r.url())) listings.push(r.url());
  });
  const result = await page.evaluate(async (secondCopySrc) => {
    const loadCopy = (0, eval)(secondCopySrc) as () => Promise<typeof window.forgestream>;
    const one = window.forgestream;
    localStorage.clear();
    const options = { baseUrl: "", storageNamespace: "e2e-hmr-restore", followOtherTabs: false };
    const client = new one.AgentClient(options);
    const first = await client.createSession({ agent: { name: "storyteller" } });
    const turn = await first.send("Tell a story, 300 words, 10 ms");
    const two = await loadCopy();
    const copyClient = new two.AgentClient(options);
    const restored = await copyClient.restore();
    const same = restored !== null && restored.getSnapshot() === first.getSnapshot();
    for (let i = 0; i < 600 && first.getSnapshot().connection.status !== "done"; i++) await new Promise((r) => setTimeout(r, 50));
    const snap = restored?.getSnapshot() ?? first.getSnapshot();
    const text = snap.messages
      .filter((m) => m.kind === "assistant" && m.turnId === turn)
      .flatMap((m) => (m.kind === "assistant" ? m.parts : []))
      .map((p) => (p.kind === "text" ? p.text : ""))
      .join("");
    const out = { sid: first.id, restoredId: restored?.id ?? null, turn, text, same, status: snap.connection.status };
    first.close();
    restored?.close();
    return out;
  }, secondCopySrc);
  expect(result.restoredId).toBe(result.sid);
  expect(result.same).toBe(true);
  expect(result.status).toBe("done");
  expect(result.text).toBe(await persistedText(request, result.sid, result.turn));
  expect(await streams(request, result.sid)).toMatchObject({ opened: 1, max: 1 });
  // The restore ran on the first engine, which had not read the history (it created the
  // session): one history load — the timeline, then the turns — and no stream of its own.
  expect(listings.map((u) => new URL(u).pathname.split("/").pop())).toEqual(["events", "turns"]);
};
