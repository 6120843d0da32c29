import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { isAbsolute, join } from "node:path";
import type { APIRequestContext, Page } from "@playwright/test";
import { expect } from "../expect";
import type { Check } from "./types";
import { lastTurnId, newSession, persistedText, sendMessage, shot, shownText, watchErrors } from "../helpers";
import { openSdk } from "./engine";

// Issue 14, "which turn to follow after a reload" and "resume requests that the network
// refuses", checked where the user sees them: the demo page, or the SDK's snapshot and warnings
// on the bare SDK page. Run in Chromium by tests/e2e/restore.spec.ts and in Firefox by
// tests/e2e/firefox.spec.ts.

/** Counts the page's `POST …/sessions/{sid}/turns` (turn creations), across reloads. */
function countTurnPosts(page: Page): { count: number } {
  const counter = { count: 0 };
  page.on("request", (r) => {
    if (r.method() === "POST" && /\/api\/v1\/sessions\/[^/]+\/turns$/.test(new URL(r.url()).pathname)) counter.count++;
  });
  return counter;
}

/** The turns the server has for session `sid`. */
async function serverTurns(request: APIRequestContext, sid: string): Promise<string[]> {
  const res = await request.get(`/api/v1/sessions/${sid}/turns?limit=25`);
  expect(res.ok()).toBe(true);
  return ((await res.json()) as { data: { id: string }[] }).data.map((t) => t.id);
}

/**
 * A reload right after the create POST (the emulator holds the stream's first frame, so
 * `turn.created` has not arrived): the page finds the new turn by listing and follows it to its
 * end. One POST; the page shows the persisted text.
 */
export const reloadRightAfterCreatePost: Check = async ({ page, request }) => {
  const errors = watchErrors(page);
  const posts = countTurnPosts(page);
  // `drip-ms` on turn creation only: the POST stream's frames (its `turn.created` first) wait 3 s.
  const sid = await newSession(page, "storyteller", "?fault=drip-ms=3000,on=create");
  // Long enough to still run at the reload: the page must follow it, not only list it.
  await sendMessage(page, "Tell a story, 300 words, 20 ms");
  // The server has the turn (the POST arrived), the page does not know its id yet.
  await expect.poll(() => serverTurns(request, sid)).toHaveLength(1);
  const [turnId] = await serverTurns(request, sid);
  // What the page stored before the POST: the creating marker, no turn id, no message.
  const stored = await page.evaluate((sid) => {
    for (let i = 0; i < localStorage.length; i++) {
      const value = localStorage.getItem(localStorage.key(i) ?? "") ?? "";
      if (value.includes(`"sessionId":"${sid}"`)) return value;
    }
    return null;
  }, sid);
  expect(stored).toContain('"creating"');
  expect(stored).toContain('"turnId":null');
  expect(stored).not.toContain("Tell a story");
  await page.reload();

  await expect(page.getByTestId("session-id")).toHaveText(sid);
  const turn = page.locator(`[data-testid="turn"][data-turn-id="${turnId}"]`);
  await expect(turn).toHaveCount(1);
  await expect(page.getByTestId("connection")).toHaveText("done", { timeout: 30_000 });
  await expect(turn.getByTestId("turn-status")).toHaveText("done");
  const persisted = await persistedText(request, sid, turnId);
  expect(persisted.length).toBeGreaterThan(300);
  expect(await shownText(page, turnId)).toBe(persisted);
  expect(await serverTurns(request, sid)).toEqual([turnId]);
  expect(posts.count).toBe(1);
  await shot(page, "reload-right-after-create-post");
  expect(errors).toEqual([]);
};

/**
 * Another tab (a second page of the same context) continued the session with a new turn while
 * the stored checkpoint still names the older one (a write that landed last): the page opened
 * next follows the newer running turn to its end, not the stored one.
 */
export const reloadFollowsTheNewerRunningTurn: Check<"context" | "request"> = async ({ context, request }) => {
  const first = await context.newPage();
  const errors = watchErrors(first);
  const sid = await newSession(first, "storyteller");
  await sendMessage(first, "Tell a story, 20 words");
  await expect(first.getByTestId("connection")).toHaveText("done", { timeout: 30_000 });
  const older = await lastTurnId(first);

  // The second tab continues the session: a long turn chained to the first one.
  const second = await context.newPage();
  errors.push(...watchErrors(second));
  await second.goto("/");
  await expect(second.getByTestId("session-id")).toHaveText(sid);
  await sendMessage(second, "Tell a story, 700 words, 15 ms");
  await expect.poll(() => serverTurns(request, sid)).toHaveLength(2);
  const newer = (await serverTurns(request, sid)).find((t) => t !== older) as string;
  await expect(second.getByTestId("message-text").last()).toHaveText(/.{40,}/s);
  await second.close();
  // The stored checkpoint names the older turn again, with a cursor, as a tab whose last write
  // landed after the other tab's leaves it.
  await first.evaluate(({ sid, older }) => {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i) ?? "";
      const value = localStorage.getItem(key) ?? "";
      if (!value.includes(`"sessionId":"${sid}"`)) continue;
      const record = JSON.parse(value) as Record<string, unknown>;
      localStorage.setItem(key, JSON.stringify({ ...record, turnId: older, seq: 5, creating: undefined }));
    }
  }, { sid, older });
  await first.close();

  const page = await context.newPage();
  errors.push(...watchErrors(page));
  await page.goto("/");
  await expect(page.getByTestId("session-id")).toHaveText(sid);
  const turn = page.locator(`[data-testid="turn"][data-turn-id="${newer}"]`);
  await expect(turn.getByTestId("turn-status")).toHaveText("done", { timeout: 30_000 });
  await expect(page.getByTestId("connection")).toHaveText("done");
  const persisted = await persistedText(request, sid, newer);
  expect(persisted.length).toBeGreaterThan(700);
  expect(await shownText(page, newer)).toBe(persisted);
  await shot(page, "reload-follows-newer-turn");
  expect(errors).toEqual([]);
};

type Outcome = { error?: string; status?: string; text?: string; turn?: string; sid?: string; warnings?: string[]; seen?: string[]; maxAttempt?: number };

/**
 * A 400 on a resume (a subscribe with `Last-Event-ID`): the SDK subscribes again with the cursor
 * in the query only, says so in a warning, and the turn ends with the persisted text.
 */
export const badRequestOnResumeFallsBack: Check = async ({ page, request }) => {
  await openSdk(page);
  const result: Outcome = await page.evaluate(async (): Promise<Outcome> => {
    const { AgentClient } = window.forgestream;
    const warnings: string[] = [];
    // The first subscribe of the turn answers 400 (the POST stream is not a subscribe).
    const client = new AgentClient({ baseUrl: "", storage: "memory", headers: { "x-forgestream-fault": "status=400,on=subscribe,once" }, onWarning: (w) => warnings.push(`${w.code}: ${w.message}`) });
    const s = await client.createSession({ agent: { name: "storyteller" } });
    try {
      const turn = await s.send("Tell a story, 400 words, 10 ms");
      const items = () => JSON.stringify(s.getSnapshot().turns.at(-1)?.items ?? []).length;
      while (items() < 600) await new Promise((r) => setTimeout(r, 20));
      // A reconnect: the turn is read, then subscribed after the cursor with `Last-Event-ID`.
      s.dropConnection();
      for (let i = 0; i < 600 && s.getSnapshot().connection.status !== "done"; i++) await new Promise((r) => setTimeout(r, 50));
      const snap = s.getSnapshot();
      const text = (snap.turns.find((t) => t.turnId === turn)?.items ?? [])
        .filter((i) => i.threadId === "main" && i.body.kind === "message")
        .map((i) => {
          const c = (i.body as { content: unknown }).content;
          return typeof c === "string" ? c : Array.isArray(c) ? c.map((p: { text?: string }) => p.text ?? "").join("") : "";
        })
        .join("");
      return { status: snap.connection.status, text, turn, sid: s.id, warnings };
    } catch (e) {
      return { error: String(e), warnings };
    } finally {
      window.release(s);
    }
  });
  expect(result.error).toBeUndefined();
  expect(result.status).toBe("done");
  expect(result.warnings?.some((w) => w.startsWith("recovery:") && w.includes("query only"))).toBe(true);
  const persisted = await persistedText(request, result.sid as string, result.turn as string);
  expect(persisted.length).toBeGreaterThan(400);
  expect(result.text).toBe(persisted);
};

const root = join(__dirname, "..", "..", "..");

/** The emulator binary scripts/test built (honours CARGO_TARGET_DIR like scripts/test). */
function serverBinary(): string {
  const target = process.env.CARGO_TARGET_DIR ?? "target";
  return join(isAbsolute(target) ? target : join(root, target), "debug", "forgestream-server");
}

/** A private emulator on another origin that allows `origin` by CORS, with only `Content-Type` in preflights. */
async function startRefusingEmulator(origin: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    serverBinary(),
    ["--addr", "127.0.0.1:0", "--db", ":memory:", "--pace-ms", "2", "--cors-origin", origin, "--cors-allow-header", "content-type"],
    { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, RUST_LOG: "warn" } },
  );
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`emulator exited (${code})`)));
    lines.once("line", (line) => resolve(line.replace(/^listening on /, "").trim()));
  });
  return { url, child };
}

/**
 * A cross-origin server whose CORS preflight allows only `Content-Type`: a resume sending
 * `Last-Event-ID` is refused by the browser (a bare network error); the SDK subscribes again with
 * the cursor in the query only, and the text ends complete.
 */
export const crossOriginRefusedLastEventId: Check = async ({ page }) => {
  await openSdk(page);
  const origin = await page.evaluate(() => location.origin);
  const { url, child } = await startRefusingEmulator(origin);
  try {
    const result: Outcome = await page.evaluate(async (baseUrl): Promise<Outcome> => {
      const { AgentClient } = window.forgestream;
      const warnings: string[] = [];
      const client = new AgentClient({ baseUrl, storage: "memory", onWarning: (w) => warnings.push(`${w.code}: ${w.message}`) });
      const s = await client.createSession({ agent: { name: "storyteller" } });
      // What the badge went through: refused resumes retried as they were would count up
      // reconnect attempts (and end in a rebuild once the turn finished).
      const seen = new Set<string>();
      let maxAttempt = 0;
      s.subscribe(() => {
        const c = s.getSnapshot().connection;
        seen.add(c.status);
        if (c.status === "reconnecting") maxAttempt = Math.max(maxAttempt, c.attempt);
      });
      try {
        const turn = await s.send("Tell a story, 800 words, 10 ms");
        const items = () => JSON.stringify(s.getSnapshot().turns.at(-1)?.items ?? []).length;
        while (items() < 600) await new Promise((r) => setTimeout(r, 20));
        s.dropConnection();
        for (let i = 0; i < 600 && s.getSnapshot().connection.status !== "done"; i++) await new Promise((r) => setTimeout(r, 50));
        const snap = s.getSnapshot();
        const text = (snap.turns.find((t) => t.turnId === turn)?.items ?? [])
          .filter((i) => i.threadId === "main" && i.body.kind === "message")
          .map((i) => {
            const c = (i.body as { content: unknown }).content;
            return typeof c === "string" ? c : Array.isArray(c) ? c.map((p: { text?: string }) => p.text ?? "").join("") : "";
          })
          .join("");
        return { status: snap.connection.status, text, turn, sid: s.id, warnings, seen: [...seen], maxAttempt };
      } catch (e) {
        return { error: String(e), warnings };
      } finally {
        window.release(s);
      }
    }, url);
    // One reconnect (the drop itself), no backoff rounds, no rebuild: the resume went through.
    expect(result.maxAttempt).toBeLessThanOrEqual(1);
    expect(result.seen).not.toContain("rebuilding");
    expect(result.warnings?.some((w) => w.startsWith("recovery:") && w.includes("query only"))).toBe(true);
    expect(result.error).toBeUndefined();
    expect(result.status).toBe("done");
    // The persisted text, read from the other server.
    const parts: string[] = [];
    const res = await fetch(`${url}/api/v1/sessions/${result.sid}/turns/${encodeURIComponent(result.turn as string)}/events?order=asc&limit=100`);
    const body = (await res.json()) as { data: { type: string; thread_id: string | null; content?: unknown }[] };
    for (const e of body.data) if (e.type === "model.message" && e.thread_id === "main" && typeof e.content === "string") parts.push(e.content);
    const persisted = parts.join("");
    expect(persisted.length).toBeGreaterThan(800);
    expect(result.text).toBe(persisted);
  } finally {
    child.kill("SIGKILL");
  }
};

/**
 * The quickstart after a reload (issue 14 trial: it showed `status: idle` over an empty
 * transcript for up to a second while restoring): the status reads `loading` until the history
 * is there, and never `idle` with no message on the page.
 */
export const quickstartShowsLoadingWhileRestoring: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto("/quickstart.html?agent=storyteller");
  await expect(page.getByTestId("status")).toHaveText("idle");
  await page.getByTestId("composer").fill("Tell a story, 30 words");
  await page.getByTestId("send").click();
  await expect(page.getByTestId("text").last()).toContainText("Il était une fois");
  await expect(page.getByTestId("status")).toHaveText("idle");
  // Every (status, messages shown) pair the next document goes through.
  await page.addInitScript(() => {
    const w = window as unknown as { __status: string[] };
    w.__status = [];
    const seen = () => {
      const status = document.querySelector('[data-testid="status"]')?.textContent;
      if (status == null) return;
      const entry = `${status}|${document.querySelectorAll('[data-testid="text"]').length}`;
      if (w.__status[w.__status.length - 1] !== entry) w.__status.push(entry);
    };
    new MutationObserver(seen).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.reload();
  await expect(page.getByTestId("text").last()).toContainText("Il était une fois");
  await expect(page.getByTestId("status")).toHaveText("idle");
  const history = await page.evaluate(() => (window as unknown as { __status: string[] }).__status);
  expect(history[0]).toBe("loading|0");
  expect(history.filter((e) => e.startsWith("idle|0"))).toEqual([]);
  expect(errors).toEqual([]);
};

/** What an app reads the moment its open of a reloaded session finishes. */
interface SeenAtOpen {
  /** `snapshot.status` (the hook: its `status`). */
  status: string;
  connection: string;
  /** The newest turn's status and item count, if the snapshot shows one. */
  turn: string | null;
  items: number;
  /** `restore({ onOpen })`: the early handle's `snapshot.status` when `onOpen` ran. */
  early?: string;
}

/**
 * A reload while a reply streams, then the quickstart pattern: the moment `client.restore()`
 * resolves, and the first render in which `useAgentSession` hands out its session, the snapshot
 * already shows the turn running with its reply so far (`status` `streaming`), so an app that
 * offers Send only when idle never sends into a `turn-running` refusal. Before, both read
 * `loading` with no turn at all for the replay's catch-up (tens of ms), and a send then was
 * refused with `turn-running`. The handle `restore({ onOpen })` hands out before the history is
 * in reads `loading`, not `idle` (it read `idle` in 2 of 10 runs: made before the restore began).
 */
export const openAfterReloadShowsTheRunningTurn: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  await openSdk(page);
  await page.evaluate(async () => {
    localStorage.clear();
    const client = new window.forgestream.AgentClient({ baseUrl: "", storageNamespace: "e2e-open-follow" });
    const s = await client.createSession({ agent: { name: "storyteller" } }, { scope: "story" });
    // Long enough to run through both reloads below (about a minute).
    await s.send("Tell a story, 3000 words, 20 ms");
    // Some of the reply shown, so the checkpoint written at the reload is past its first frame.
    while (JSON.stringify(s.getSnapshot().turns[0]?.items ?? []).length < 600) await new Promise((r) => setTimeout(r, 10));
  });
  for (const how of ["restore", "early", "hook"] as const) {
    await page.reload();
    await expect(page.locator("#status")).toHaveText("ready");
    const seen = await page.evaluate(async (how): Promise<SeenAtOpen> => {
      type Snapshot = { status: string; connection: { status: string }; turns: readonly { status: string; items: readonly unknown[] }[] };
      const read = (snapshot: Snapshot, status = snapshot.status): SeenAtOpen => {
        const turn = snapshot.turns[snapshot.turns.length - 1];
        return { status, connection: snapshot.connection.status, turn: turn?.status ?? null, items: turn?.items.length ?? 0 };
      };
      const client = new window.forgestream.AgentClient({ baseUrl: "", storageNamespace: "e2e-open-follow" });
      if (how === "restore") {
        const s = await client.restore({ scope: "story" });
        if (!s) throw new Error("nothing restored");
        return read(s.getSnapshot());
      }
      if (how === "early") {
        // The handle `onOpen` gets before the history is in: its snapshot must not read `idle`
        // (an app that offers Send on `idle` would send into the running turn).
        let early: SeenAtOpen | null = null;
        const s = await client.restore({ scope: "story", onOpen: (h: { getSnapshot(): Snapshot }) => (early ??= read(h.getSnapshot())) });
        if (!s || !early) throw new Error("nothing restored");
        const atOpen: SeenAtOpen = early;
        // Then the restored snapshot, as for `restore` above.
        const after = read(s.getSnapshot());
        return { ...after, early: atOpen.status };
      }
      type Hook = { session: unknown; status: string; snapshot: Snapshot };
      const { React, createRoot, useAgentSession } = window.forgestreamReact as {
        React: { createElement(type: unknown, props?: unknown, ...children: unknown[]): unknown };
        createRoot(el: Element): { render(node: unknown): void };
        useAgentSession(client: unknown, options: unknown): Hook;
      };
      return await new Promise<SeenAtOpen>((resolve) => {
        let done = false;
        function Chat() {
          const chat = useAgentSession(client, { create: { agent: { name: "storyteller" } }, scope: "story" });
          // The first render with the session open: what the quickstart's Send button reads.
          if (chat.session && !done) {
            done = true;
            resolve(read(chat.snapshot, chat.status));
          }
          return null;
        }
        const root = document.createElement("div");
        document.body.append(root);
        createRoot(root).render(React.createElement(Chat));
      });
    }, how);
    // `how` in the object: a failure names the open that read it.
    const { connection, items, early, ...rest } = seen;
    expect({ how, ...rest, following: connection === "connecting" || connection === "live", shown: items > 0 }).toEqual({ how, status: "streaming", turn: "running", following: true, shown: true });
    if (how === "early") expect(early, "the early handle's status when onOpen ran").toBe("loading");
  }
  expect(errors).toEqual([]);
};
