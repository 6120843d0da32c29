import type { Page } from "@playwright/test";
import { expect } from "../expect";
import { badgeHistory, lastTurnId, newSession, persistedText, recordBadge, sendMessage, shot } from "../helpers";
import { openSdk } from "./engine";
import type { Check } from "./types";

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
