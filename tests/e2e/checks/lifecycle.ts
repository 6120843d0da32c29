import type { Page } from "@playwright/test";
import { expect } from "../expect";
import { lastTurnId, newSession, sendMessage, shot } from "../helpers";
import type { Check } from "./types";

// A turn stuck `running` after a crash (issue 17; the emulator's `crash-after-events` fault
// leaves exactly what a crash leaves: the turn `running` forever, its live stream gone,
// subscribe 412), as the demo shows it. Run in Chromium by tests/e2e/lifecycle.spec.ts and in
// Firefox by tests/e2e/firefox.spec.ts.

/** `?fault=` rides on every request as `x-forgestream-fault` and is stored on the session: the
 * session's first turn "crashes" after 8 frames (`once`), later turns behave. */
const fault = "?fault=crash-after-events=8,once";

/** The demo's "Send" as a user sees it. */
function sendButton(page: Page) {
  return page.getByTestId("send");
}

export const crashStuckTurnShowsLiveUnavailable: Check = async ({ page, request }) => {
  const refused: string[] = [];
  page.on("response", (r) => {
    if (r.status() === 412) refused.push(new URL(r.url()).pathname);
  });
  const sid = await newSession(page, "storyteller", fault);
  await sendMessage(page, "Tell a story, 400 words, 20 ms");
  const stuck = await lastTurnId(page);
  // The stream was cut; the SDK checks the turn (running), resubscribes, gets 412, rebuilds
  // from the listings and settles: no loop, a banner, the turn still running.
  await expect(page.getByTestId("connection")).toHaveText("live stream unavailable", { timeout: 20_000 });
  await expect(page.getByTestId("live-unavailable")).toBeVisible();
  const turn = page.locator(`[data-testid="turn"][data-turn-id="${stuck}"]`);
  await expect(turn).toHaveAttribute("data-status", "running");
  // Running on the server, but nothing is on its way: no typing dots promising more, and no
  // caret blinking at the end of the text that did arrive (its message is unfinished: session
  // 21, the caret kept blinking there and after a 404).
  await expect(turn.locator(".typing")).toHaveCount(0);
  await expect(turn.getByTestId("message-text").first()).toHaveText(/\S/);
  await expect(turn.getByTestId("message").first()).toHaveAttribute("data-complete", "false");
  await expect(turn.locator(".caret")).toHaveCount(0);
  expect(refused.length).toBeGreaterThan(0);
  expect(refused.every((p) => p.endsWith("/subscribe"))).toBe(true);
  // What the server says: running, with no worker left to finish it.
  const res = await request.get(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(stuck)}`);
  expect(((await res.json()) as { data: { state: unknown } }).data.state).toEqual({ status: "running" });
  await shot(page, "crash-live-unavailable");
  // A reload finds the same: the banner, the turn running, no dots (a new user saw endless
  // typing dots here).
  await page.reload();
  await expect(page.getByTestId("connection")).toHaveText("live stream unavailable", { timeout: 20_000 });
  await expect(page.getByTestId("live-unavailable")).toBeVisible();
  await expect(turn).toHaveAttribute("data-status", "running");
  await expect(turn.locator(".typing")).toHaveCount(0);
};

export const newTurnCancelsStuckTurn: Check = async ({ page, request }) => {
  const sid = await newSession(page, "storyteller", fault);
  await sendMessage(page, "Tell a story, 400 words, 20 ms");
  const stuck = await lastTurnId(page);
  await expect(page.getByTestId("connection")).toHaveText("live stream unavailable", { timeout: 20_000 });

  // The only way on with TrueForge is a new turn: the demo keeps Send enabled for a turn
  // without a live stream, and the SDK sends it (no `turn-running`: the stuck turn can never
  // finish, and the new turn is what cancels it on the server).
  await page.getByTestId("composer").fill("Tell a story, 20 words");
  await expect(sendButton(page)).toBeEnabled();
  await sendButton(page).click();
  await expect(page.getByTestId("action-error")).toHaveCount(0);
  await expect(page.getByTestId("turn")).toHaveCount(2);
  await expect(page.getByTestId("turn-status").last()).toHaveText("done", { timeout: 30_000 });
  // The stuck turn is shown as the server now has it: cancelled for the next turn.
  const stuckTurn = page.locator(`[data-testid="turn"][data-turn-id="${stuck}"]`);
  await expect(stuckTurn).toHaveAttribute("data-status", "cancelled");
  await expect(stuckTurn).toContainText("cancelled-for-next-turn");
  await expect(page.getByTestId("live-unavailable")).toHaveCount(0);
  const res = await request.get(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(stuck)}`);
  const state = ((await res.json()) as { data: { state: { status: string; reason?: string } } }).data.state;
  expect(state).toMatchObject({ status: "cancelled", reason: "cancelled-for-next-turn" });
  await shot(page, "crash-new-turn-cancels-stuck");
};

export const cancelEndsStuckTurn: Check = async ({ page, request }) => {
  const sid = await newSession(page, "storyteller", fault);
  await sendMessage(page, "Tell a story, 400 words, 20 ms");
  const stuck = await lastTurnId(page);
  await expect(page.getByTestId("connection")).toHaveText("live stream unavailable", { timeout: 20_000 });
  await page.getByTestId("cancel").click();
  const stuckTurn = page.locator(`[data-testid="turn"][data-turn-id="${stuck}"]`);
  await expect
    .poll(async () => {
      const res = await request.get(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(stuck)}`);
      return ((await res.json()) as { data: { state: { reason?: string } } }).data.state.reason;
    })
    .toBe("client-cancelled");
  // No stream brings this turn's `turn.done`: once the cancel returned, the SDK reads the turn
  // again and shows it as the server has it.
  await expect(stuckTurn).toHaveAttribute("data-status", "cancelled", { timeout: 10_000 });
  await expect(stuckTurn).toContainText("client-cancelled");
  await expect(page.getByTestId("live-unavailable")).toHaveCount(0);
  await sendMessage(page, "Tell a story, 20 words");
  await expect(page.getByTestId("turn")).toHaveCount(2);
  await expect(page.getByTestId("turn-status").last()).toHaveText("done", { timeout: 30_000 });
  await shot(page, "crash-cancel-then-go-on");
};

/**
 * The subagent threads of a crashed turn that a new message cancels read `interrupted`, not
 * `running` — live and after a reload (a trial: each thread header read RUNNING forever under the
 * cancelled turn; the core now ends a cancelled or failed turn's unfinished threads).
 */
export const stuckTurnThreadsEndInterrupted: Check = async ({ page }) => {
  await newSession(page, "researcher", "?fault=crash-after-events=50,once");
  await sendMessage(page, "Research order ORD-4821 please");
  const stuck = await lastTurnId(page);
  await expect(page.getByTestId("connection")).toHaveText("live stream unavailable", { timeout: 20_000 });
  const turn = page.locator(`[data-testid="turn"][data-turn-id="${stuck}"]`);
  const running = turn.locator('[data-testid="thread"][data-status="running"]');
  await expect(running.first()).toBeVisible();
  await page.getByTestId("composer").fill("Where is ORD-4821?");
  await sendButton(page).click();
  await expect(turn).toHaveAttribute("data-status", "cancelled", { timeout: 30_000 });
  await expect(page.getByTestId("turn-status").last()).toHaveText("done", { timeout: 30_000 });
  await expect(running).toHaveCount(0);
  await expect(turn.locator('[data-testid="thread"][data-status="interrupted"]').first()).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("turn-status").last()).toHaveText("done", { timeout: 20_000 });
  await expect(turn).toHaveAttribute("data-status", "cancelled");
  await expect(turn.getByTestId("thread").first()).toBeVisible();
  await expect(running).toHaveCount(0);
  await expect(turn.locator('[data-testid="thread"][data-status="interrupted"]').first()).toBeVisible();
};
