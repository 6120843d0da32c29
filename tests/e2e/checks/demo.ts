import { expect } from "../expect";
import type { APIRequestContext, Page } from "@playwright/test";
import type { Check } from "./types";
import { lastTurnId, newSession, persistedText, sendMessage, shot, shownText, watchErrors } from "../helpers";

// The demo app's own checks, run in Chromium by tests/e2e/smoke.spec.ts and refund.spec.ts and in
// Firefox by tests/e2e/firefox.spec.ts.

/** The demo page loads the wasm core. */
export const demoLoads: Check<"page"> = async ({ page }) => {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto("/");
  await expect(page.getByTestId("core-version")).toHaveText(/^\d+\.\d+\.\d+$/);
  expect(errors).toEqual([]);
};

/** The Vue page loads the wasm core. */
export const vuePageLoads: Check<"page"> = async ({ page }) => {
  await page.goto("/vue.html");
  await expect(page.getByTestId("core-version")).toHaveText(/^\d+\.\d+\.\d+$/);
};

/** Refund flow: approval card → approve → final answer. */
export const refundApproved: Check = async ({ page, request }) => {
  const errors = watchErrors(page);
  const sid = await newSession(page, "support");
  await sendMessage(page, "Refund €49.50 on ORD-2031, it arrived broken");

  const card = page.getByTestId("approval-card");
  await expect(card).toBeVisible();
  await expect(card.getByTestId("approval-tool")).toHaveText("process_refund");
  await expect(card.getByTestId("approval-server")).toHaveText("orders");
  await expect(card.getByTestId("approval-arguments")).toContainText('"order_id": "ORD-2031"');
  await expect(card.getByTestId("proposer-text")).toContainText("I need your approval to refund 49.5 EUR of it.");
  await expect(page.getByTestId("connection")).toHaveText("paused");
  // get_order ran at once; its result is bound to its card.
  await expect(page.locator('[data-testid="tool-call"][data-state="done"]').first()).toContainText("get_order");
  await expect(page.locator('[data-testid="tool-call"][data-state="awaiting-approval"]')).toContainText("process_refund");

  // The paused turn says what it waits for.
  const pausedTurn = page.getByTestId("turn").first();
  await expect(pausedTurn.getByTestId("action-notice")).toHaveText("Waiting for approval · 1 call");
  await expect(pausedTurn.getByTestId("turn-status")).toHaveText("paused");

  await shot(page, "refund-approval-card");
  await card.getByTestId("approve").click();
  await expect(card).toHaveCount(0);
  await expect(page.getByTestId("connection")).toHaveText("done");
  const turnId = await lastTurnId(page);
  // Once answered, the paused turn no longer says it is waiting: it shows the decision and
  // that the next turn continued it.
  await expect(page.getByTestId("turn")).toHaveCount(2);
  await expect(pausedTurn).not.toContainText("Waiting for approval");
  await expect(pausedTurn.getByTestId("action-notice")).toHaveText("✓ Approved · 1 call · continued below");
  await expect(pausedTurn.getByTestId("action-notice")).toHaveClass(/notice-answered/);
  await expect(pausedTurn.getByTestId("turn-status")).toHaveText("continued");
  await expect(page.locator(`[data-turn-id="${turnId}"] [data-testid="message-text"]`).last()).toContainText(/Refund .* is /);
  await expect(page.getByTestId("approval-card")).toHaveCount(0);
  await expect(page.getByTestId("turn-status").last()).toHaveText("done");
  expect(await shownText(page, turnId)).toBe(await persistedText(request, sid, turnId));
  // The approved call ran to done on its card, which now shows its result.
  const refundCall = page.locator('[data-testid="tool-call"]', { hasText: "process_refund" });
  await expect(refundCall).toHaveAttribute("data-state", "done");
  await expect(refundCall.locator(".tool-state")).toHaveText("done");
  await expect(refundCall.getByTestId("tool-result")).toContainText("refund_id");
  await expect(page.getByTestId("usage")).toContainText("Input breakdown");
  // The session's input tokens are where they came from: the breakdown adds up to the input.
  const tokens = (text: string | null) => Number((text ?? "").replace(/[^0-9]/g, ""));
  const parts = await Promise.all(
    ["harness", "instructions", "skills", "toolDefinitions", "messages"].map(async (k) => tokens(await page.getByTestId(`usage-${k}`).locator(".bar-value").textContent())),
  );
  expect(parts.reduce((a, b) => a + b, 0)).toBe(tokens(await page.getByTestId("usage-input").textContent()));
  await expect(page.getByTestId("timeline-row").first()).toBeVisible();
  // The inspector's newest row is the turn's end, one sequence number above the frame before it,
  // with its size: the packed frame log's numbers land in their own columns.
  const cells = (row: number) => page.getByTestId("timeline-row").nth(row).locator("td");
  await expect(cells(0).nth(1)).toHaveText("turn.done");
  await expect
    .poll(async () => Number(await cells(0).nth(0).textContent()) - Number(await cells(1).nth(0).textContent()))
    .toBe(1);
  expect(Number(await cells(0).nth(4).textContent())).toBeGreaterThan(0);
  await shot(page, "refund");
  expect(errors).toEqual([]);
};

/** Deny: the paused turn shows the refusal, the next turn answers it. */
export const refundDenied: Check<"page"> = async ({ page }) => {
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
  // The denied call says so on its card, with the reason — not "error", not still waiting.
  const refundCall = page.locator('[data-testid="tool-call"]', { hasText: "process_refund" });
  await expect(refundCall).toHaveAttribute("data-state", "denied");
  await expect(refundCall.locator(".tool-state")).toHaveText("denied");
  await expect(refundCall.getByTestId("tool-denied")).toHaveText("Denied — “needs a photo first”");
  expect(errors).toEqual([]);
};

/**
 * The demo shows the user's message at once while the server is down (from `snapshot.messages`,
 * before any turn exists); once it is back the message says it was not sent, and Retry sends it.
 */
export const demoOptimisticSend: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page, [/Failed to load resource/, /ERR_CONNECTION_REFUSED/]);
  await newSession(page, "support");
  // The session must have opened (its history loaded: Send is enabled once there is text) before
  // the server goes away, or the page shows "Could not open the session" instead (seen in CI).
  await page.getByTestId("composer").fill("Where is ORD-2031?");
  await expect(page.getByTestId("send")).toBeEnabled({ timeout: 15_000 });
  // From now on every API request is refused after 1 s, until `down` ends; `refusedPosts` counts
  // the create-turn POSTs refused.
  let down = true;
  let refusedPosts = 0;
  await page.route(/\/api\//, async (route) => {
    if (!down) return route.continue();
    await new Promise((r) => setTimeout(r, 1000));
    await route.abort("connectionrefused").catch(() => {});
    if (route.request().method() === "POST") refusedPosts++;
  });
  await sendMessage(page, "Where is ORD-2031?");
  const mine = page.getByTestId("local-message");
  await expect(mine).toHaveAttribute("data-state", "pending", { timeout: 900 });
  await expect(mine).toContainText("Where is ORD-2031?");
  await expect(mine).toContainText("sending…");
  await expect(page.getByTestId("turn")).toHaveCount(0);
  // The message shows before its request leaves (and, in Firefox, the intercepted request reaches
  // the route handler over BiDi later still): bring the server back only once the POST failed.
  await expect.poll(() => refusedPosts, { timeout: 10_000 }).toBeGreaterThan(0);
  // While the SDK keeps checking whether the turn was created (never posting again), the message
  // says the server can't be reached rather than a bare "sending…".
  await expect(mine).toContainText("the server can't be reached", { timeout: 10_000 });

  down = false;
  await expect(mine).toHaveAttribute("data-state", "failed", { timeout: 45_000 });
  await expect(mine).toContainText("Not sent");
  await shot(page, "demo-send-failed");
  await mine.getByRole("button", { name: "Retry" }).click();
  // Sent: the message now belongs to its turn, which answers it.
  await expect(page.getByTestId("local-message")).toHaveCount(0);
  await expect(page.getByTestId("turn")).toHaveCount(1);
  await expect(page.getByTestId("turn").getByTestId("user-input").first()).toContainText("Where is ORD-2031?");
  await expect(page.getByTestId("turn-status")).toHaveText(/done|paused/);
  expect(errors).toEqual([]);
};

/**
 * Sends "Where is ORD-2031?" in a new support session whose create request reaches the server
 * (which creates the turn; with `reachesServer` false it never gets there) but whose answer is
 * lost, with the server down for every request after it, until `serverBack()`. Resolves once the message reads `unknown` — within the SDK's
 * lookup budget (`reconnect.createLookupBudgetMs`, 10 s), not after minutes of "checking again".
 */
async function lostCreate(page: Page, reachesServer = true) {
  const sid = await newSession(page, "support");
  await page.getByTestId("composer").fill("Where is ORD-2031?");
  await expect(page.getByTestId("send")).toBeEnabled({ timeout: 15_000 });
  let down = true;
  let reached = 0;
  await page.route(/\/api\//, async (route) => {
    if (!down) return route.continue();
    const r = route.request();
    if (r.method() === "POST" && new URL(r.url()).pathname.endsWith("/turns")) {
      reached++;
      if (reachesServer) {
        // The server gets the message and runs the turn; the page never hears back.
        const response = await route.fetch();
        await response.text();
      }
    }
    await route.abort("connectionrefused").catch(() => {});
  });
  await sendMessage(page, "Where is ORD-2031?");
  const mine = page.getByTestId("local-message");
  await expect(mine).toHaveAttribute("data-state", "pending", { timeout: 900 });
  await expect.poll(() => reached, { timeout: 15_000 }).toBe(1);
  const lostAt = Date.now();
  await expect(mine).toHaveAttribute("data-state", "unknown", { timeout: 14_000 });
  const tookMs = Date.now() - lostAt;
  expect(tookMs).toBeLessThan(14_000);
  await expect(mine).toContainText("Maybe not sent");
  await expect(page.getByTestId("turn")).toHaveCount(0);
  // The message says it; no red banner says it again.
  await expect(page.getByTestId("connection-failure")).toHaveCount(0);
  return { sid, mine, serverBack: () => (down = false) };
}

/** The message became its turn's, shown once, and the server has exactly that one turn. */
async function oneTurnForTheMessage(page: Page, request: APIRequestContext, sid: string) {
  await expect(page.getByTestId("turn")).toHaveCount(1);
  await expect(page.getByTestId("turn").getByTestId("user-input").first()).toContainText("Where is ORD-2031?");
  await expect(page.getByTestId("turn-status")).toHaveText(/done|paused/);
  // Nothing on the page still says it failed, and no copy of the message waits to be sent again.
  await expect(page.getByTestId("action-error")).toHaveCount(0);
  await expect(page.getByTestId("composer")).toHaveValue("");
  const listed = (await (await request.get(`/api/v1/sessions/${sid}/turns?limit=25`)).json()) as { data: unknown[] };
  expect(listed.data).toHaveLength(1);
}

/**
 * A message whose answer was lost with the server down reads "Maybe not sent" within the lookup
 * budget. The server comes back; Retry looks the turn up first and follows it instead of
 * posting again: the session has exactly one turn, shown once.
 */
export const demoUnknownRetryFindsTheTurn: Check = async ({ page, request }) => {
  const errors = watchErrors(page, [/Failed to load resource/, /ERR_CONNECTION_REFUSED/]);
  const { sid, mine, serverBack } = await lostCreate(page);
  await shot(page, "demo-send-unknown");
  serverBack();
  await mine.getByRole("button", { name: "Retry" }).click();
  // The lookup found the turn the lost request created: the message is that turn's.
  await expect(page.getByTestId("local-message")).toHaveCount(0, { timeout: 15_000 });
  await oneTurnForTheMessage(page, request, sid);
  expect(errors).toEqual([]);
};

/**
 * The same lost message, and nobody presses Retry: while the server stays down the message
 * keeps reading "Maybe not sent" (the engine's quiet looks change nothing on the page); once
 * the server is back the next look finds the turn — within the look's pace (2 s, 4 s, 8 s …
 * from the failure) — and the message becomes that turn's, its answer streaming (session 21:
 * it read "Maybe not sent" until Retry, long after the server was back).
 */
export const demoUnknownFoundWhenTheServerIsBack: Check = async ({ page, request }) => {
  const errors = watchErrors(page, [/Failed to load resource/, /ERR_CONNECTION_REFUSED/]);
  const { sid, mine, serverBack } = await lostCreate(page);
  // Two quiet looks (2 s and 4 s after the failure) while the server is still down.
  const states = await page.evaluate(async () => {
    const seen = new Set<string>();
    const until = Date.now() + 6_500;
    while (Date.now() < until) {
      const m = document.querySelector('[data-testid="local-message"]');
      seen.add(m?.getAttribute("data-state") ?? "gone");
      seen.add(`badge:${document.querySelector('[data-testid="connection"]')?.getAttribute("data-status") ?? ""}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return [...seen];
  });
  expect(states.filter((s) => !s.startsWith("badge:"))).toEqual(["unknown"]);
  // One badge throughout: the looks are quiet (no `connecting` flash every few seconds).
  expect(states.filter((s) => s.startsWith("badge:"))).toHaveLength(1);
  serverBack();
  // The next look (14 s after the failure: 2 + 4 + 8 s; 7.5 s from here) finds the turn.
  await expect(page.getByTestId("local-message")).toHaveCount(0, { timeout: 15_000 });
  await oneTurnForTheMessage(page, request, sid);
  expect(errors).toEqual([]);
};

/**
 * The same, but the lost request never reached the server: once it is back the next look shows
 * no such turn, and the message reads "Not sent" with Retry — on the message only: no red
 * "Connection failed" banner saying it again (a re-check found one that stayed until Retry).
 * Retry then sends it once.
 */
export const demoNotSentFoundWhenTheServerIsBack: Check = async ({ page, request }) => {
  const errors = watchErrors(page, [/Failed to load resource/, /ERR_CONNECTION_REFUSED/]);
  const { sid, mine, serverBack } = await lostCreate(page, false);
  serverBack();
  await expect(mine).toHaveAttribute("data-state", "failed", { timeout: 15_000 });
  await expect(mine).toContainText("Not sent");
  // Said once ("Not sent: the message was not sent…" said it twice), and the badge no longer
  // reads failed: the server answered (a trial saw "failed · network" stay 24 s).
  await expect(mine).not.toContainText("was not sent");
  await expect(page.getByTestId("connection")).not.toHaveAttribute("data-status", "failed");
  await expect(page.getByTestId("connection-failure")).toHaveCount(0);
  await page.waitForTimeout(500);
  await expect(page.getByTestId("connection-failure")).toHaveCount(0);
  await expect(page.getByTestId("connection")).not.toHaveAttribute("data-status", "failed");
  await mine.getByRole("button", { name: "Retry" }).click();
  await expect(page.getByTestId("local-message")).toHaveCount(0, { timeout: 15_000 });
  await oneTurnForTheMessage(page, request, sid);
  expect(errors).toEqual([]);
};

/**
 * Switching to a new session after the inspector's last read (> 250 ms ago) keeps the page: the
 * old handle's close notifies its listeners once more, and the inspector must not read the
 * closed handle then (it threw "the session handle is closed" inside close(), React unmounted
 * the app, the page went blank).
 */
export const switchAfterQuietKeepsPage: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  await newSession(page, "support");
  await expect(page.getByTestId("timeline")).toBeVisible();
  // Past the inspector's 250 ms read interval, so the next change reads the log at once.
  await page.waitForTimeout(600);
  await page.getByTestId("new-session-storyteller").click();
  await expect(page.getByTestId("agent-name")).toHaveText("storyteller");
  await expect(page.getByTestId("composer")).toBeVisible();
  await page.waitForTimeout(600);
  await page.getByTestId("session-item").first().click();
  await expect(page.getByTestId("agent-name")).toHaveText(/support|storyteller/);
  await expect(page.getByTestId("composer")).toBeVisible();
  expect(errors).toEqual([]);
};

/**
 * Stop pressed while offline (a trial: the cancel request failed at once, nothing said so, and
 * the reply ran to its end once back online): nothing is sent while offline, and once back
 * online the cancel goes out once and the turn ends cancelled.
 */
export const demoStopWhileOffline: Check<"page" | "context"> = async ({ page, context }) => {
  const cancels: string[] = [];
  page.on("request", (r) => {
    if (new URL(r.url()).pathname.endsWith("/cancel")) cancels.push(r.method());
  });
  await newSession(page, "storyteller");
  await sendMessage(page, "Tell a story, 3000 words, 20 ms");
  await expect(page.getByTestId("connection")).toHaveText("live");
  await context.setOffline(true);
  await expect(page.getByTestId("connection")).toHaveText("offline");
  await page.getByTestId("cancel").click();
  // The page says the stop is waiting for the network (a re-check: it said nothing).
  await expect(page.getByTestId("cancel")).toHaveText("Stopping…");
  await expect(page.getByTestId("composer")).toHaveAttribute("placeholder", "Stopping once back online…");
  await page.waitForTimeout(1_000);
  expect(cancels, "nothing is sent while offline").toEqual([]);
  await context.setOffline(false);
  const turn = page.getByTestId("turn").last();
  await expect(turn.getByTestId("turn-status")).toHaveText("cancelled", { timeout: 15_000 });
  await expect(page.getByTestId("cancel")).toHaveCount(0);
  await expect(page.getByTestId("composer")).not.toHaveAttribute("placeholder", /Stopping/);
  // Firefox's request events come over BiDi, possibly after the page already shows the answer.
  await expect.poll(() => cancels.join(",")).toBe("POST");
};
