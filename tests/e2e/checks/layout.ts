import type { Page } from "@playwright/test";
import { expect } from "../expect";
import type { Check } from "./types";
import { lastTurnId, newSession, sendMessage, shot, shownText, watchErrors } from "../helpers";

// The demo as a phone user and a screen-reader / keyboard user meet it: the narrow layout (tabs
// below 720 px), the live regions, the composer's label, focus after Allow/Deny. Run in Chromium
// by tests/e2e/demo-layout.spec.ts (beside its axe-core checks) and in Firefox by
// tests/e2e/firefox.spec.ts.

export const PHONE = { width: 360, height: 740 };
export const REFUND = "Refund €49.50 on ORD-2031, it arrived broken";

/** The page scrolls sideways when its content is wider than the viewport. */
async function expectNoSidewaysScroll(page: Page, where: string): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  expect(scrollWidth, `${where}: document scrollWidth ${scrollWidth} > innerWidth ${innerWidth}`).toBeLessThanOrEqual(innerWidth);
}

/** The element lies inside the viewport horizontally (nothing of it clipped at either edge). */
async function expectWithinWidth(page: Page, testId: string): Promise<void> {
  const box = await page.getByTestId(testId).first().boundingBox();
  expect(box, `${testId} has a box`).not.toBeNull();
  const width = page.viewportSize()?.width ?? 0;
  expect(box!.x, `${testId} left edge`).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, `${testId} right edge`).toBeLessThanOrEqual(width);
}

/**
 * The composer's placeholder fits its box: laid out in a copy of the textarea's content box (same
 * font, width, wrapping), the text is no taller than the box and no line wider. A textarea clips
 * what does not fit without a scrollbar for a placeholder, so the end of the hint was just gone.
 */
async function expectPlaceholderFits(page: Page, where: string): Promise<void> {
  const fit = await page.getByTestId("composer").evaluate((el) => {
    const t = el as HTMLTextAreaElement;
    const cs = getComputedStyle(t);
    const padX = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight);
    const padY = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom);
    const probe = document.createElement("div");
    for (const k of ["fontFamily", "fontSize", "fontWeight", "fontStyle", "letterSpacing", "wordSpacing", "lineHeight", "textTransform", "tabSize"] as const) probe.style[k] = cs[k];
    probe.style.position = "absolute";
    probe.style.visibility = "hidden";
    probe.style.whiteSpace = "pre-wrap";
    probe.style.overflowWrap = "break-word";
    probe.style.width = `${t.clientWidth - padX}px`;
    probe.textContent = t.placeholder;
    document.body.appendChild(probe);
    const out = { placeholder: t.placeholder, needed: probe.scrollHeight, available: t.clientHeight - padY, wide: probe.scrollWidth > probe.clientWidth + 0.5 };
    probe.remove();
    return out;
  });
  expect(fit.wide, `${where}: a word of "${fit.placeholder}" is wider than the composer`).toBe(false);
  expect(fit.needed, `${where}: "${fit.placeholder}" needs ${fit.needed}px, the composer shows ${fit.available}px`).toBeLessThanOrEqual(fit.available + 0.5);
}

/** Opens a session of `agent` from the Sessions tab of the narrow layout (the viewport already a phone's). */
export async function newPhoneSession(page: Page, agent: string): Promise<void> {
  await page.goto("/");
  await expect(page.getByTestId("core-version")).toHaveText(/^\d+\.\d+\.\d+$/);
  await expectNoSidewaysScroll(page, "first visit");
  // A first visit starts on the agents: the chat tab has nothing yet.
  await expect(page.getByTestId("tab-sessions")).toHaveAttribute("aria-selected", "true");
  await page.getByTestId(`new-session-${agent}`).click();
  await expect(page.getByTestId("agent-name")).toHaveText(agent);
  await expect(page.getByTestId("tab-chat")).toHaveAttribute("aria-selected", "true");
  await expect(page.getByTestId("connection")).toHaveText(/idle|done/);
}

/** At 360 × 740: no sideways scroll; tabs reach every panel; the approval card and composer fit. */
export const phoneLayout: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  await page.setViewportSize(PHONE);
  await newPhoneSession(page, "support");
  await expectNoSidewaysScroll(page, "empty chat");
  const composer = page.getByTestId("composer");
  await expect(composer).toBeVisible();
  // The composer is usable: most of the width, not a sliver beside the Send button.
  expect((await composer.boundingBox())!.width).toBeGreaterThan(PHONE.width * 0.6);
  // Its placeholder (the agent's example) is not cut off (the other agents' at the end).
  await expectPlaceholderFits(page, "empty chat");

  await sendMessage(page, REFUND);

  const card = page.getByTestId("approval-card");
  await expect(card).toBeVisible();
  await expect(page.getByTestId("connection")).toHaveText("paused");
  await card.scrollIntoViewIfNeeded();
  await expectNoSidewaysScroll(page, "approval pending");
  for (const id of ["approval-card", "approve", "deny", "deny-reason", "approval-arguments", "composer", "send"]) await expectWithinWidth(page, id);
  await expectPlaceholderFits(page, "approval pending");
  await shot(page, "demo-360-approval");

  // Inspector: usage and the frame timeline, the chat hidden meanwhile; the chat tab says
  // something waits there.
  await page.getByTestId("tab-inspector").click();
  await expect(page.getByTestId("usage")).toBeVisible();
  await expect(page.getByTestId("usage")).toContainText("Input breakdown");
  await expect(page.getByTestId("timeline-row").first()).toBeVisible();
  await expect(composer).toBeHidden();
  await expect(page.getByTestId("tab-chat-waiting")).toHaveText("1 waiting");
  await expectNoSidewaysScroll(page, "inspector");
  await shot(page, "demo-360-inspector");

  // Sessions: the new session is listed and reopens the chat.
  await page.getByTestId("tab-sessions").click();
  await expect(page.getByTestId("usage")).toBeHidden();
  await expect(page.getByTestId("session-item")).toHaveCount(1);
  await expectNoSidewaysScroll(page, "sessions");
  await page.getByTestId("session-item").click();
  await expect(page.getByTestId("tab-chat")).toHaveAttribute("aria-selected", "true");
  await expect(card).toBeVisible();

  // The tab bar by keyboard (WAI-ARIA tabs: arrows move and select, one tab stop).
  await page.getByTestId("tab-chat").focus();
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("tab-inspector")).toBeFocused();
  await expect(page.getByTestId("tab-inspector")).toHaveAttribute("aria-selected", "true");
  await expect(page.getByTestId("timeline")).toBeVisible();
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("tab-sessions")).toBeFocused();
  await page.keyboard.press("End");
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("tab-chat")).toBeFocused();
  await expect(card).toBeVisible();

  await card.getByTestId("approve").click();
  await expect(page.getByTestId("connection")).toHaveText("done");
  await expect(page.getByTestId("message-text").last()).toContainText(/Refund .* is /);
  await expectNoSidewaysScroll(page, "after the answer");
  await shot(page, "demo-360-done");
  // Every agent's example fits as the composer's placeholder (the longest took three lines).
  for (const agent of ["researcher", "github", "storyteller"]) {
    await page.getByTestId("tab-sessions").click();
    await page.getByTestId(`new-session-${agent}`).click();
    await expect(page.getByTestId("agent-name")).toHaveText(agent);
    await expectPlaceholderFits(page, `empty chat of ${agent}`);
  }
  expect(errors).toEqual([]);
};

/** At 1280 px the three columns show side by side, without tabs. */
export const wideColumns: Check<"page"> = async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await newSession(page, "support");
  await expect(page.getByRole("tablist")).toHaveCount(0);
  for (const id of ["session-list", "composer", "usage", "timeline"]) await expect(page.getByTestId(id)).toBeVisible();
  await expectNoSidewaysScroll(page, "1280 px");
};

/** Screen readers: the composer is labelled; the finished reply is announced once, not per delta. */
export const replyAnnouncedOnce: Check<"page"> = async ({ page }) => {
  await newSession(page, "storyteller");
  await expect(page.getByRole("textbox", { name: "Message to storyteller" })).toBeVisible();
  // Every text the reply's live region ever held, from before the turn starts.
  await page.evaluate(() => {
    const w = window as unknown as { __announced: string[] };
    w.__announced = [];
    const region = document.querySelector('[data-testid="live-reply"]')!;
    new MutationObserver(() => {
      const t = region.textContent ?? "";
      if (t) w.__announced.push(t);
    }).observe(region, { subtree: true, childList: true, characterData: true });
  });
  const region = page.getByTestId("live-reply");
  await expect(region).toHaveAttribute("aria-live", "polite");
  await expect(region).toHaveAttribute("role", "status");
  await sendMessage(page, "Tell a story, 80 words, 15 ms");
  await expect(page.getByTestId("message-text").first()).not.toBeEmpty();
  await expect(page.getByTestId("turn-status").last()).toHaveText("done");
  const turnId = await lastTurnId(page);
  const shown = (await shownText(page, turnId)).replace(/\s+/g, " ").trim();
  expect(shown.split(" ").length).toBeGreaterThan(40);
  await expect(region).toHaveText(`storyteller replied: ${shown}`);
  const announced = await page.evaluate(() => (window as unknown as { __announced: string[] }).__announced);
  expect(announced).toEqual([`storyteller replied: ${shown}`]);
};

/** Screen readers: a new approval card is announced; focus moves on after Allow and after Deny. */
export const approvalAnnouncedFocusMoves: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  await newSession(page, "support");
  const pendingRegion = page.getByTestId("live-pending");
  await expect(pendingRegion).toHaveAttribute("aria-live", "polite");
  await sendMessage(page, REFUND);
  const card = page.getByTestId("approval-card");
  await expect(card).toBeVisible();
  await expect(pendingRegion).toHaveText("Approval needed: process_refund on orders. Allow or deny it in the card below.");
  await expect(page.getByTestId("live-reply")).toContainText("I need your approval to refund 49.5 EUR");

  // Allow by keyboard: the card goes away and focus lands in the composer, not on the page.
  await card.getByTestId("approve").focus();
  await page.keyboard.press("Enter");
  await expect(card).toHaveCount(0);
  await expect(page.getByTestId("composer")).toBeFocused();
  await expect(pendingRegion).toHaveText("");
  await expect(page.getByTestId("connection")).toHaveText("done");

  // Typing goes on from there; the next refund is denied with a reason, by mouse.
  await page.keyboard.type("Refund ORD-4821, the box was empty");
  await page.keyboard.press("Enter");
  await expect(card).toBeVisible();
  await expect(pendingRegion).toContainText("Approval needed: process_refund");
  await card.getByTestId("deny-reason").fill("needs a photo first");
  await card.getByTestId("deny").click();
  await expect(card).toHaveCount(0);
  await expect(page.getByTestId("composer")).toBeFocused();
  await expect(page.getByTestId("message-text").last()).toContainText("I did not refund ORD-4821");
  await expect(page.getByTestId("composer")).toBeFocused();
  expect(errors).toEqual([]);
};

/** The visible elements of the transcript that reach past the viewport's right edge (none may). */
async function clippedInTranscript(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const w = window.innerWidth;
    const out: string[] = [];
    for (const el of Array.from(document.querySelectorAll('[data-testid="transcript"] *'))) {
      const b = el.getBoundingClientRect();
      if (b.width > 0 && b.right > w + 0.5) out.push(`${el.tagName.toLowerCase()}.${el.getAttribute("class") ?? ""} right=${Math.round(b.right)}`);
    }
    return out.slice(-5);
  });
}

/**
 * At 360 × 740 the cards of nested subagent threads and a question's tool card stay inside the
 * viewport (the page cannot scroll sideways, so anything wider is cut off: in Firefox the state
 * badges and the subagents' replies were), and the question card has the accessible name a screen
 * reader announces: its question.
 */
export const phoneNestedCardsFit: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  await page.setViewportSize(PHONE);
  await newPhoneSession(page, "researcher");
  await sendMessage(page, "Research order ORD-2031 for a damaged-goods refund");
  await expect(page.getByTestId("connection")).toHaveText("done", { timeout: 20_000 });
  await expect(page.locator('[data-testid="tool-call"] [data-testid="thread"]')).toHaveCount(3);
  expect(await clippedInTranscript(page), "researcher").toEqual([]);
  await shot(page, "demo-360-subagents");

  await page.getByTestId("tab-sessions").click();
  await page.getByTestId("new-session-concierge").click();
  await expect(page.getByTestId("agent-name")).toHaveText("concierge");
  await sendMessage(page, "Plan my trip");
  await expect(page.getByTestId("question-card")).toBeVisible({ timeout: 20_000 });
  expect(await clippedInTranscript(page), "concierge").toEqual([]);
  // A screen reader announces the card by its question (its heading), as the approval card by
  // "Approve tool call?": the card is the article named so.
  const question = (await page.getByTestId("question-card").locator("h3").textContent())?.trim() ?? "";
  expect(question).not.toBe("");
  const named = page.getByRole("article", { name: question });
  await expect(named).toHaveCount(1);
  await expect(named).toHaveAttribute("data-testid", "question-card");
  expect(errors).toEqual([]);
};

/** At 360 px a long word or URL in the user's message wraps inside its bubble (a trial: cut at the transcript's edge). */
export const longWordsWrapInTheBubble: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  await page.setViewportSize(PHONE);
  await newPhoneSession(page, "support");
  await sendMessage(page, `Refund ORD-2031 ${"x".repeat(300)} https://example.com/${"a".repeat(160)}`);
  const bubble = page.getByTestId("turn").last().locator(".user-text");
  await expect(bubble).toContainText("Refund ORD-2031");
  const fit = await bubble.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, right: el.getBoundingClientRect().right }));
  expect(fit.scroll, `the bubble's content is ${fit.scroll}px wide in ${fit.client}px`).toBeLessThanOrEqual(fit.client + 1);
  expect(fit.right).toBeLessThanOrEqual(PHONE.width);
  await expectNoSidewaysScroll(page, "a long word");
  await shot(page, "demo-360-long-word");
  expect(errors).toEqual([]);
};

/**
 * At 360 px the session controls stay inside the width while the connection is in trouble: the
 * longer badge ("reconnecting · attempt 3") wraps the row instead of pushing Cancel off-screen
 * (a trial: scroll width 433 px, Cancel at x = 360–433).
 */
export const phoneControlsFitWhileReconnecting: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page, [/Failed to load resource/, /ERR_CONNECTION_REFUSED/]);
  await page.setViewportSize(PHONE);
  await newPhoneSession(page, "storyteller");
  await sendMessage(page, "Tell a story, 1500 words, 20 ms");
  await expect(page.getByTestId("connection")).toHaveText(/live/);
  let down = true;
  await page.route(/\/api\//, async (route) => {
    if (down) await route.abort("connectionrefused").catch(() => {});
    else await route.continue().catch(() => {});
  });
  await page.getByTestId("drop-connection").click();
  await expect(page.getByTestId("connection")).toHaveText("reconnecting", { timeout: 15_000 });
  await expect(page.getByTestId("connection-attempt")).toHaveText(/attempt [2-9]/, { timeout: 15_000 });
  await expectNoSidewaysScroll(page, "reconnecting");
  for (const id of ["connection-badge", "cancel", "drop-connection"]) await expectWithinWidth(page, id);
  await shot(page, "demo-360-reconnecting");
  down = false;
  await expect(page.getByTestId("connection")).toHaveText(/live|done/, { timeout: 20_000 });
  await page.getByTestId("cancel").click();
  await expect(page.getByTestId("connection")).toHaveText(/cancelled|done|idle/, { timeout: 10_000 });
  expect(errors).toEqual([]);
};

/**
 * Scrolling up a history moves the content by what was scrolled: 200 px up, every turn on screen
 * 200 px down. A trial saw 13 of 25 steps move the content the wrong way (nested
 * `content-visibility` placeholders resized as they came into view). At the top, the older turns
 * load above by themselves, keeping the reading place.
 */
export const scrollingUpTheHistoryMovesEvenly: Check = async ({ page, request }) => {
  const errors = watchErrors(page);
  await page.setViewportSize({ width: 1280, height: 800 });
  const sid = await newSession(page, "storyteller");
  for (let n = 1; n <= 24; n++) {
    const r = await request.post(`/api/v1/sessions/${sid}/turns`, { data: { input: [{ type: "user.message", content: `Tell a story, 60 words, 1 ms, number ${n}` }] } });
    expect(r.ok()).toBe(true);
    await r.text();
  }
  await page.reload();
  await expect(page.getByTestId("turn")).toHaveCount(20);
  await expect(page.getByTestId("connection")).toHaveText(/idle|done/);
  const moves = await page.evaluate(async () => {
    const el = document.querySelector('[data-testid="transcript"]') as HTMLElement;
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await frames();
    const out: number[] = [];
    while (el.scrollTop >= 200 && out.length < 25) {
      const box = el.getBoundingClientRect();
      const probe = Array.from(el.querySelectorAll('[data-testid="turn"]')).find((t) => {
        const b = t.getBoundingClientRect();
        return b.bottom > box.top + 100 && b.top < box.bottom - 100;
      });
      if (!probe) break;
      const before = probe.getBoundingClientRect().top;
      el.scrollBy(0, -200);
      await frames();
      out.push(Math.round(probe.getBoundingClientRect().top - before));
    }
    return out;
  });
  expect(moves.length, "steps taken").toBeGreaterThan(5);
  expect(moves.filter((m) => Math.abs(m - 200) > 2), `moves: ${moves.join(" ")}`).toEqual([]);
  // The keyboard's way (from a fresh page: the steps above may have reached the top): Tab from
  // the transcript to "Show older" brings it into view and loads nothing by itself; Enter loads
  // the 4 older turns, and with nothing older left the focus goes to the transcript, not the page.
  await page.reload();
  await expect(page.getByTestId("turn")).toHaveCount(20);
  await expect(page.getByTestId("connection")).toHaveText(/idle|done/);
  await page.getByTestId("transcript").focus();
  await page.keyboard.press("Tab");
  await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid ?? null)).toBe("show-older");
  await page.waitForTimeout(300);
  await expect(page.getByTestId("turn")).toHaveCount(20);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("turn")).toHaveCount(24);
  await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid ?? null)).toBe("transcript");
  // Up to the top at once, from a fresh page: the 4 older turns come above by themselves (no
  // "Show older" click), and the turn that was first stays where it was on screen.
  await page.reload();
  await expect(page.getByTestId("turn")).toHaveCount(20);
  await expect(page.getByTestId("connection")).toHaveText(/idle|done/);
  await expect(page.getByTestId("show-older")).toHaveText("Show older turns (4)");
  await expect.poll(() => page.evaluate(() => (document.querySelector('[data-testid="transcript"]') as HTMLElement).scrollTop)).toBeGreaterThan(200);
  const first = page.getByTestId("turn").first();
  const firstText = await first.textContent();
  // As a user scrolls: first near the top (100 px: no widening yet), two frames for the turns
  // now on screen to take their rendered size (`content-visibility`), then the last 100 px.
  await page.evaluate(async () => {
    const el = document.querySelector('[data-testid="transcript"]') as HTMLElement;
    el.scrollTop = 100;
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  });
  await expect(page.getByTestId("turn")).toHaveCount(20);
  const before = await page.evaluate(() => {
    const el = document.querySelector('[data-testid="transcript"]') as HTMLElement;
    el.scrollTop = 0;
    return (el.querySelector('[data-testid="turn"]') as HTMLElement).getBoundingClientRect().top;
  });
  await expect(page.getByTestId("turn")).toHaveCount(24);
  await expect(page.getByTestId("show-older")).toHaveCount(0);
  const after = (await page.getByTestId("turn").filter({ hasText: firstText ?? "" }).first().boundingBox())?.y;
  expect(Math.abs((after ?? NaN) - before), `the first turn at ${before} px, then ${after} px`).toBeLessThanOrEqual(2);
  expect(errors).toEqual([]);
};

/** At 360 px a fault label in the top bar (`?fault=…`) wraps: no sideways scroll (a re-check: 401 px, the Vue link off-screen). */
export const phoneFaultLabelFits: Check<"page"> = async ({ page }) => {
  await page.setViewportSize(PHONE);
  await page.goto("/?fault=force-412,on=subscribe");
  await expect(page.getByTestId("fault")).toContainText("force-412");
  await expectNoSidewaysScroll(page, "fault label");
};
