import { expect } from "../expect";
import type { Check } from "./types";
import { lastTurnId, newSession, persistedText, sendMessage, shot, watchErrors } from "../helpers";

// Run in Chromium by tests/e2e/tabs.spec.ts and in Firefox by tests/e2e/firefox.spec.ts.

/**
 * Another browser or device continues this page's session (here: a client on the API). Tabs of
 * one browser share their stream; nothing tells this page about the other browser's turns. A
 * new-user trial (session 23) saw the page keep its old view, then its next message refused
 * (HTTP 422: the other turn waits for its approval) with nothing on screen to answer — Refresh
 * did nothing, only a reload helped. Now a return to the page shows a turn made meanwhile, and
 * a refused message brings the waiting turn with its approval card, which answers as usual.
 */
export const turnsMadeElsewhere: Check = async ({ page, request }) => {
  // The refused POST is a failed resource load in the console.
  const errors = watchErrors(page, [/\b422\b/]);
  const sid = await newSession(page, "support");
  const elsewhere = async (content: string) => {
    const r = await request.post(`/api/v1/sessions/${sid}/turns`, { data: { input: [{ type: "user.message", content }] } });
    expect(r.ok()).toBe(true);
    await r.text(); // the turn's stream, to its end
  };

  // A finished turn from elsewhere shows when the user comes back to the page.
  await elsewhere("What is the status of ORD-2031?");
  await expect(page.getByTestId("turn")).toHaveCount(0);
  await page.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
  await expect(page.getByTestId("turn")).toHaveCount(1);
  const first = await lastTurnId(page);
  await expect(page.getByTestId("turn").last()).toHaveAttribute("data-status", "done");
  const text = await persistedText(request, sid, first);
  expect(text.length).toBeGreaterThan(10);
  await expect(page.getByTestId("message-text").last()).toHaveText(text);

  // Elsewhere, a refund waits for its approval; this page's message is refused for it. A small
  // amount: the emulator keeps refunds per server run (both engines' suites share one), and a
  // refund without an amount takes the order's whole balance, which other checks refund from.
  await elsewhere("Refund €1.05 on ORD-2031, it arrived broken");
  await sendMessage(page, "Hello?");
  await expect(page.getByTestId("approval-card")).toBeVisible();
  await expect(page.getByTestId("turn")).toHaveCount(2);
  await expect(page.getByTestId("turn").last()).toHaveAttribute("data-status", "paused");
  await expect(page.getByTestId("connection")).not.toHaveText(/failed/);
  // The card answers as any other: the refund goes through and the turn ends.
  await page.getByTestId("approve").click();
  await expect(page.getByTestId("turn").last()).toHaveAttribute("data-status", "done");
  await expect(page.getByTestId("approval-card")).toHaveCount(0);
  await shot(page, "turns-made-elsewhere");
  expect(errors).toEqual([]);
};
