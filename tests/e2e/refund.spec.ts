import { test, expect } from "@playwright/test";
import { refundApproved } from "./checks/demo";
import { newSession, sendMessage, watchErrors } from "./helpers";

// The approve flow lives in checks/demo.ts so that firefox.spec.ts runs the same code in Firefox.

test("refund flow: approval card → approve → final answer", ({ page, request }) => refundApproved({ page, request }));

test("deny: the paused turn shows the refusal, the next turn answers it", async ({ page }) => {
  const errors = watchErrors(page);
  await newSession(page, "support");
  await sendMessage(page, "Refund ORD-4821, the box was empty");
  const card = page.getByTestId("approval-card");
  // No amount asked for: the proposal is the remaining balance, not the order total.
  await expect(card.getByTestId("proposer-text")).toContainText("I need your approval to refund its remaining balance.");
  await expect(card.getByTestId("approval-arguments")).not.toContainText("amount");
  await card.getByTestId("deny-reason").fill("needs a photo first");
  await card.getByTestId("deny").click();
  await expect(page.getByTestId("connection")).toHaveText("done");
  const pausedTurn = page.getByTestId("turn").first();
  await expect(pausedTurn.getByTestId("action-notice")).toHaveText("✕ Denied · 1 call · continued below");
  await expect(pausedTurn.getByTestId("action-notice")).toHaveClass(/notice-denied/);
  await expect(pausedTurn.getByTestId("turn-status")).toHaveText("continued");
  await expect(page.getByTestId("message-text").last()).toContainText("I did not refund ORD-4821");
  expect(errors).toEqual([]);
});
