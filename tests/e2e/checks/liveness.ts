import type { Page } from "@playwright/test";
import { expect } from "../expect";
import { badgeHistory, lastTurnId, newSession, persistedText, recordBadge, sendMessage, shot } from "../helpers";
import { openSdk } from "./engine";
import type { Check } from "./types";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmulator } from "./shutdown";

// Issue 14, "Liveness, not just progress" and "Say when nothing is happening", where the user
// sees it. The minutes of the field (a 5-minute silent tool call, a proxy cutting idle
// connections every 60 s, a 45 s watchdog) are scaled down by configuring the SDK's watchdog
// and the emulator's idle cut. Run in Chromium by tests/e2e/liveness.spec.ts and in Firefox by
// tests/e2e/firefox.spec.ts.

/** Subscribe requests of `page`, counted as the browser sends them. */
function countSubscribes(page: Page): { n: number } {
  const seen = { n: 0 };
  page.on("request", (r) => {
    if (/\/subscribe\?/.test(r.url())) seen.n++;
  });
  return seen;
}

/**
 * A tool call silent for 6 s behind a "proxy" that cuts every connection that wrote nothing for
 * 1 s (`idle-cut-ms=1000`), with `maxAttempts: 3`: each connection answered 200 and stayed open
 * past `healthyAfterMs` (500 ms), so the cuts never add up to a failure. The turn ends `done`,
 * no snapshot ever shows `failed`, the text is the persisted text once, and the subscribes stay
 * bounded (one per cut: ≈ 6 s / (1 s + the backoff)).
 */
export const silentToolCallBehindIdleCuts: Check<"page" | "request"> = async ({ page, request }) => {
  await openSdk(page);
  const subscribes = countSubscribes(page);
  const result = await page.evaluate(async () => {
    const { AgentClient } = window.forgestream;
    const client = new AgentClient({
      baseUrl: "",
      storage: "memory",
      followOtherTabs: false,
      reconnect: { idleTimeoutMs: 1500, healthyAfterMs: 500, maxAttempts: 3 },
      headers: { "x-forgestream-fault": "idle-cut-ms=1000" },
    });
    const s = await client.createSession({ agent: { name: "support" } });
    const statuses: string[] = [];
    const note = () => {
      const c = s.getSnapshot().connection.status;
      if (statuses[statuses.length - 1] !== c) statuses.push(c);
    };
    s.subscribe(note);
    const turn = await s.send("Slow lookup of ORD-4821, 6000 ms");
    const started = Date.now();
    while (!["done", "failed"].includes(s.getSnapshot().connection.status) && Date.now() - started < 40_000) {
      note();
      await new Promise((r) => setTimeout(r, 20));
    }
    note();
    const last = s.getSnapshot().turns.at(-1);
    const text = (last?.items ?? [])
      .map((i) => (i.body.kind === "message" && i.threadId === "main" && typeof i.body.content === "string" ? i.body.content : ""))
      .join("");
    const out = { sessionId: s.id, turn, statuses, status: last?.status, error: s.getSnapshot().error?.message ?? null, text, silentForMs: Date.now() - started };
    window.release(s);
    return out;
  });
  console.log(`silent tool call: statuses ${result.statuses.join(" → ")}; ${subscribes.n} subscribes in ${result.silentForMs} ms`);
  expect(result.statuses).not.toContain("failed");
  expect(result.error).toBeNull();
  expect(result.status).toBe("done");
  expect(result.text).toBe(await persistedText(request, result.sessionId, result.turn));
  expect(result.text).toContain("Found it");
  // The idle cuts happened (each one is a reconnect), and the requests stay bounded.
  expect(subscribes.n).toBeGreaterThanOrEqual(2);
  expect(subscribes.n).toBeLessThanOrEqual(15);
};

/**
 * A crashed owner in multi-replica mode (`crash-after-events` + `replica-poll-ms`): its turn
 * stays `running` and every subscribe on the surviving replica answers 200 and then nothing.
 * With a 1.5 s watchdog and `maxAttempts: 1` (the crash's cut uses it up; before issue 14 each
 * silent watchdog cycle was a failed attempt, so the second one failed the connection), the SDK
 * keeps probing, the page says the turn looks stalled (and how long it has been silent),
 * nothing ever shows `failed`, and a new message goes through (it interrupts the stuck turn).
 */
export const crashedOwnerShowsStalled: Check<"page" | "request"> = async ({ page, request }) => {
  await recordBadge(page);
  const sid = await newSession(page, "storyteller", "?fault=crash-after-events=8,once,replica-poll-ms=200&reconnect=idleTimeoutMs:1500,maxAttempts:1");
  await sendMessage(page, "Tell a story, 400 words, 20 ms");
  const stuck = await lastTurnId(page);
  await expect(page.getByTestId("stalled")).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId("connection-silent")).toContainText("no activity for");
  const stuckTurn = page.locator(`[data-testid="turn"][data-turn-id="${stuck}"]`);
  await expect(stuckTurn).toHaveAttribute("data-status", "running");
  // What the server says: running, with no worker left to finish it.
  const res = await request.get(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(stuck)}`);
  expect(((await res.json()) as { data: { state: unknown } }).data.state).toEqual({ status: "running" });
  await shot(page, "liveness-stalled");

  // The app offers "send a new turn": Send stays enabled and the new turn interrupts the stuck one.
  await page.getByTestId("composer").fill("Tell a story, 20 words");
  await expect(page.getByTestId("send")).toBeEnabled();
  await page.getByTestId("send").click();
  await expect(page.getByTestId("action-error")).toHaveCount(0);
  await expect(page.getByTestId("turn")).toHaveCount(2);
  await expect(page.getByTestId("turn-status").last()).toHaveText("done", { timeout: 30_000 });
  await expect(stuckTurn).toHaveAttribute("data-status", "cancelled");
  await expect(page.getByTestId("stalled")).toHaveCount(0);
  const badges = await badgeHistory(page);
  expect(badges).not.toContain("failed");
  await shot(page, "liveness-stalled-then-new-turn");
};

/**
 * FIELD C14 (transport) in the browser: the server requires `Authorization: Bearer fresh`
 * (a private emulator with `--token fresh`). Mid-stream the connection drops and the app's
 * header provider hands out an expired token once — the first call after the drop — and the
 * fresh one when the SDK asks again. The SDK's reconnect gets a 401, calls the provider again,
 * retries with the new header and resubscribes after the cursor it had (query and
 * `Last-Event-ID`); the text ends equal to the persisted text, never failed. With a provider
 * that keeps answering the expired token, the second 401 stops with the `auth` error, the
 * text shown stays, and nothing more is sent.
 */
export const unauthorizedResumeAsksForNewHeaders: Check<"page"> = async ({ page }) => {
  const dbDir = mkdtempSync(join(tmpdir(), "forgestream-e2e-"));
  const { url, child } = await startEmulator(dbDir, ["--token", "fresh"]);
  try {
    await page.goto(`${url}/sdk.html`);
    await expect(page.locator("#status")).toHaveText("ready");
    const subscribes: string[] = [];
    const reads: string[] = [];
    page.on("request", (r) => {
      if (/\/subscribe\?/.test(r.url())) subscribes.push(r.url());
      // Before the drop a run sends only POSTs (the session, the turn): every GET is a reconnect's.
      if (r.method() === "GET" && /\/api\/v1\/sessions\//.test(r.url())) reads.push(r.url());
    });
    const run = (keepExpired: boolean) =>
      page.evaluate(async (keepExpired) => {
        const { AgentClient } = window.forgestream;
        const state = { token: "fresh", asked: 0, askedAtDrop: 0 };
        const client = new AgentClient({
          baseUrl: "",
          storage: "memory",
          followOtherTabs: false,
          headers: () => {
            state.asked++;
            const token = state.token;
            if (token === "expired" && !keepExpired) state.token = "fresh";
            return { authorization: `Bearer ${token}` };
          },
        });
        const s = await client.createSession({ agent: { name: "storyteller" } });
        const statuses: string[] = [];
        const note = () => {
          const c = s.getSnapshot().connection.status;
          if (statuses[statuses.length - 1] !== c) statuses.push(c);
        };
        s.subscribe(note);
        const textOf = () =>
          (s.getSnapshot().turns.at(-1)?.items ?? [])
            .map((i) => (i.body.kind === "message" && i.threadId === "main" && typeof i.body.content === "string" ? i.body.content : ""))
            .join("");
        const turn = await s.send("Tell a story, 300 words, 10 ms");
        while (textOf().length < 100) await new Promise((r) => setTimeout(r, 10));
        state.token = "expired";
        state.askedAtDrop = state.asked;
        // Read together with the drop: no frame is applied in between (one task).
        const cursor = s.exportDigest().diagnostics.lastSequenceNumbers[turn] ?? null;
        const shownAtDrop = textOf();
        s.dropConnection();
        const started = Date.now();
        while (!["done", "failed"].includes(s.getSnapshot().connection.status) && Date.now() - started < 30_000) {
          note();
          await new Promise((r) => setTimeout(r, 10));
        }
        note();
        const askedAtEnd = state.asked;
        const textAtEnd = textOf();
        // Nothing more is sent after a final `auth` failure (the provider is called per request).
        await new Promise((r) => setTimeout(r, 1500));
        const out = {
          sessionId: s.id,
          turn,
          cursor,
          statuses,
          status: s.getSnapshot().connection.status,
          error: s.getSnapshot().error?.code ?? null,
          text: textOf(),
          textAtEnd,
          shownAtDrop,
          askedAfterDrop: askedAtEnd - state.askedAtDrop,
          askedLater: state.asked - askedAtEnd,
          ms: Date.now() - started,
        };
        window.release(s);
        return out;
      }, keepExpired);

    const ok = await run(false);
    console.log(`401 then new headers: ${ok.statuses.join(" → ")}; provider asked ${ok.askedAfterDrop}× after the drop; cursor ${ok.cursor}`);
    expect(ok.statuses).not.toContain("failed");
    expect(ok.error).toBeNull();
    expect(ok.status).toBe("done");
    // The provider was asked for the request that got the 401 and again after it.
    expect(ok.askedAfterDrop).toBeGreaterThanOrEqual(2);
    // The resubscribe carries the cursor the view had (it can only have moved on, never back).
    const resumed = subscribes.map((u) => Number(new URL(u).searchParams.get("after_sequence_number")));
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    expect(ok.cursor).toBeGreaterThan(0);
    expect(resumed[0]).toBe(ok.cursor);
    expect(ok.text.startsWith(ok.shownAtDrop)).toBe(true);
    const res = await fetch(`${url}/api/v1/sessions/${ok.sessionId}/turns/${encodeURIComponent(ok.turn)}/events?order=asc&limit=100`, {
      headers: { authorization: "Bearer fresh" },
    });
    const body = (await res.json()) as { data: { type: string; thread_id: string | null; content?: unknown }[] };
    const persisted = body.data
      .filter((e) => e.type === "model.message" && e.thread_id === "main" && typeof e.content === "string")
      .map((e) => e.content as string)
      .join("");
    expect(ok.text).toBe(persisted);

    subscribes.length = 0;
    reads.length = 0;
    const bad = await run(true);
    console.log(`401 twice: ${bad.statuses.join(" → ")}; provider asked ${bad.askedAfterDrop}× after the drop, ${bad.askedLater}× later`);
    expect(bad.status).toBe("failed");
    expect(bad.error).toBe("auth");
    // The provider is asked again after the first 401; one retry, then nothing more is sent.
    expect(bad.askedAfterDrop).toBeGreaterThanOrEqual(2);
    expect(bad.askedLater).toBe(0);
    expect(reads.length).toBe(2);
    // The text shown stays: what the engine had when it failed (the published snapshot may
    // have been up to one notification behind at the drop), unchanged afterwards.
    expect(bad.text.startsWith(bad.shownAtDrop)).toBe(true);
    expect(bad.text).toBe(bad.textAtEnd);
    expect(subscribes).toEqual([]);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dbDir, { recursive: true, force: true });
  }
};
