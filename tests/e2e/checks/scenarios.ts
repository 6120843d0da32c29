import { expect } from "../expect";
import type { Check } from "./types";
import { lastTurnId, newSession, persistedText, sendMessage, shot, shownText, watchErrors } from "../helpers";

// The demo's scenarios (questions, MCP auth, subagents, error turns, cancel, switching sessions),
// run in Chromium by tests/e2e/scenarios.spec.ts and in Firefox by tests/e2e/firefox.spec.ts.

/** ask_user_question: options as buttons, the answer continues the turn. */
export const questionOptionAnswers: Check<"page" | "request"> = async ({ page, request }) => {
  const errors = watchErrors(page);
  const sid = await newSession(page, "concierge");
  await sendMessage(page, "Plan a weekend trip for me");
  const card = page.getByTestId("question-card");
  await expect(card).toContainText("Which city should I plan the trip to?");
  await expect(card.getByTestId("question-option")).toHaveText(["Lisbon (Recommended)", "Kyoto 京都", "Montréal"]);
  await expect(page.getByTestId("connection")).toHaveText("paused");
  await expect(page.getByTestId("send")).toBeDisabled();
  // Text typed while the card waits: Send stays off and says why (the placeholder that did is
  // gone once the user types).
  await expect(page.getByTestId("composer-hint")).toHaveCount(0);
  await page.getByTestId("composer").fill("Somewhere warm");
  await expect(page.getByTestId("send")).toBeDisabled();
  await expect(page.getByTestId("composer-hint")).toHaveText("Answer the card above first");
  await page.getByTestId("composer").fill("");
  await card.getByTestId("question-option").nth(1).click();
  await expect(page.getByTestId("question-card")).toHaveCount(0);
  await expect(page.getByTestId("connection")).toHaveText("done");
  const asked = page.getByTestId("turn").first();
  await expect(asked.getByTestId("action-notice")).toHaveText("✓ Answered · 1 call · continued below");
  await expect(asked.getByTestId("turn-status")).toHaveText("continued");
  const turnId = await lastTurnId(page);
  await expect(page.locator(`[data-turn-id="${turnId}"] [data-testid="message-text"]`)).toContainText("Kyoto 京都");
  expect(await shownText(page, turnId)).toBe(await persistedText(request, sid, turnId));
  await shot(page, "question");
  expect(errors).toEqual([]);
};

/** ask_user_question: a free-text answer. */
export const questionFreeText: Check<"page"> = async ({ page }) => {
  await newSession(page, "concierge");
  await sendMessage(page, "Plan a trip");
  await page.getByTestId("question-answer").fill("Reykjavík");
  await page.getByTestId("question-submit").click();
  await expect(page.getByTestId("connection")).toHaveText("done");
  await expect(page.getByTestId("message-text").last()).toContainText("Reykjavík");
};

/** MCP auth: the emulator's fake authorization page, then continue. */
export const mcpAuthFakeOauth: Check<"page" | "context"> = async ({ page, context }) => {
  const errors = watchErrors(page);
  await newSession(page, "github");
  await sendMessage(page, "List the open issues of forgestream/demo");
  const card = page.getByTestId("auth-card");
  await expect(card).toBeVisible();
  const link = card.getByTestId("auth-link");
  // Offline: the link is the emulator's own page, on the origin the demo talks to.
  const baseURL = new URL(page.url()).origin;
  await expect(link).toHaveAttribute("href", `${baseURL}/fake-oauth/authorize?server=github&client_id=forgestream-emulator&scope=repo`);
  await expect(link).toHaveAttribute("target", "_blank");
  await expect(link).toHaveAttribute("rel", /noopener/);
  await expect(page.getByTestId("connection")).toHaveText("paused");

  // The link opens the consent page in a new tab; authorizing there sends the user back.
  const [consent] = await Promise.all([context.waitForEvent("page"), link.click()]);
  await expect(consent.locator("#title")).toHaveText("Authorize github");
  await consent.locator("#authorize").click();
  await expect(consent.locator("#title")).toHaveText("github is authorized");
  await expect(consent.locator("#outcome")).toContainText("I've authorized — continue");
  await expect(consent.locator("#back")).toHaveAttribute("href", "/");
  await shot(consent, "mcp-auth-fake-oauth");
  await consent.close();

  await expect(page.getByTestId("connection")).toHaveText("paused");
  const pausedTurn = page.getByTestId("turn").first();
  await expect(pausedTurn.getByTestId("action-notice")).toHaveText("Authorization required: github");
  await card.getByTestId("continue-after-auth").click();
  await expect(page.getByTestId("auth-card")).toHaveCount(0);
  await expect(page.getByTestId("connection")).toHaveText("done");
  await expect(page.getByTestId("user-input").last()).toContainText("Continued after authorization");
  await expect(page.getByTestId("tool-call").last()).toContainText("list_issues");
  await expect(page.getByTestId("message-text").last()).toContainText("2 open issues");
  await expect(pausedTurn.getByTestId("action-notice")).toHaveText("Continued after authorizing github · below");
  await expect(pausedTurn.getByTestId("turn-status")).toHaveText("continued");
  await shot(page, "mcp-auth");
  expect(errors).toEqual([]);
};

/** subagent threads nest under the call that spawned them. */
export const subagentThreadsNest: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  await newSession(page, "researcher");
  await sendMessage(page, "Research order ORD-2031 for a damaged-goods refund");
  await expect(page.getByTestId("connection")).toHaveText("done", { timeout: 30_000 });
  const threads = page.getByTestId("thread");
  await expect(threads).toHaveCount(3);
  // Every thread box sits inside a tool-call card and holds its own messages.
  await expect(page.locator('[data-testid="tool-call"] [data-testid="thread"]')).toHaveCount(3);
  for (const t of await threads.all()) {
    await expect(t).toHaveAttribute("data-status", "done");
    await expect(t.getByTestId("message-text").last()).not.toBeEmpty();
  }
  await expect(page.locator('[data-testid="thread"]', { hasText: "Policy" }).getByTestId("message-text")).toContainText("délai de rétractation");
  await expect(page.locator('[data-testid="message"][data-thread-id="main"] [data-testid="message-text"]').last()).toContainText("Research done");
  await shot(page, "subagents");
  expect(errors).toEqual([]);
};

/** an error turn shows its message, then a retry succeeds. */
export const errorTurnThenRetry: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  await newSession(page, "flaky");
  await sendMessage(page, "Hello");
  await expect(page.getByTestId("turn-status").last()).toHaveText("error");
  await expect(page.getByTestId("turn").last()).toContainText("fake upstream failure");
  await expect(page.getByTestId("connection")).toHaveText("error");
  await sendMessage(page, "ok, again");
  await expect(page.getByTestId("turn-status").last()).toHaveText("done");
  await expect(page.getByTestId("message-text").last()).toContainText("This time it worked");
  await shot(page, "error-turn");
  expect(errors).toEqual([]);
};

/** cancel stops a running turn. */
export const cancelStopsRunningTurn: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  await newSession(page, "storyteller");
  await sendMessage(page, "Tell a story, 600 words, 30 ms");
  await expect(page.getByTestId("message-text").last()).toHaveText(/.{40,}/s);
  await page.getByTestId("cancel").click();
  await expect(page.getByTestId("turn-status").last()).toHaveText("cancelled");
  await expect(page.getByTestId("turn").last()).toContainText("client-cancelled");
  await expect(page.getByTestId("cancel")).toHaveCount(0);
  await expect(page.getByTestId("connection")).toHaveText("cancelled");
  // Stop keeps what streamed, marked as stopped (the part is `interrupted` in snapshot.messages).
  const kept = page.getByTestId("turn").last().getByTestId("message-text").last();
  await expect(kept).toHaveText(/.{40,}/s);
  await expect(kept).toHaveAttribute("data-interrupted", "true");
  await expect(page.getByTestId("turn").last().getByTestId("stopped")).toHaveText("stopped");
  await shot(page, "cancelled");
  expect(errors).toEqual([]);
};

/** switching sessions opens each with its own history. */
export const switchingSessions: Check<"page"> = async ({ page }) => {
  await newSession(page, "support");
  await sendMessage(page, "hi");
  await expect(page.getByTestId("message-text").last()).toContainText("I can look up orders");
  await page.getByTestId("new-session-flaky").click();
  await expect(page.getByTestId("agent-name")).toHaveText("flaky");
  await expect(page.getByTestId("turn")).toHaveCount(0);
  const items = page.getByTestId("session-list").getByTestId("session-item");
  await expect(items).toHaveCount(2);
  await items.filter({ hasText: "support" }).click();
  await expect(page.getByTestId("agent-name")).toHaveText("support");
  await expect(page.getByTestId("message-text").last()).toContainText("I can look up orders");
  await shot(page, "session-switch");
};
