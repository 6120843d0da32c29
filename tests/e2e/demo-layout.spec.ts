import { test, expect, type Page } from "@playwright/test";
import AxeBuilder from "@axe-core/playwright";
import { newSession, sendMessage } from "./helpers";
import { approvalAnnouncedFocusMoves, longWordsWrapInTheBubble, newPhoneSession, PHONE, phoneControlsFitWhileReconnecting, phoneFaultLabelFits, phoneLayout, phoneNestedCardsFit, REFUND, replyAnnouncedOnce, scrollingUpTheHistoryMovesEvenly, wideColumns } from "./checks/layout";

// The demo as a phone user and a screen-reader / keyboard user meet it. The layout, live-region
// and focus checks live in checks/layout.ts so that firefox.spec.ts runs the same code in Firefox;
// axe-core stays here, Chromium-only: @axe-core/playwright needs Playwright's own page (it injects
// axe through Playwright's frames), which the Firefox adapter does not provide.

/** axe-core's serious and critical violations on the page as it is now (rule id → offending nodes). */
async function seriousViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact ?? "", nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary ?? ""}`) }));
}

test.describe("at 360 × 740", () => {
  test.use({ viewport: PHONE });

  test("no sideways scroll; tabs reach every panel; the approval card and composer fit", ({ page }) => phoneLayout({ page }));
  test("nested subagent cards and a question's card fit the width", ({ page }) => phoneNestedCardsFit({ page }));
  test("a long word or URL in the user's message wraps inside its bubble", ({ page }) => longWordsWrapInTheBubble({ page }));
  test("the session controls stay inside the width while reconnecting", ({ page }) => phoneControlsFitWhileReconnecting({ page }));
  test("a fault label in the top bar wraps", ({ page }) => phoneFaultLabelFits({ page }));

  test("axe-core: no serious or critical violations (empty chat, approval pending, inspector)", async ({ page }) => {
    await newPhoneSession(page, "support");
    expect(await seriousViolations(page), "empty chat").toEqual([]);
    await sendMessage(page, REFUND);
    await expect(page.getByTestId("approval-card")).toBeVisible();
    expect(await seriousViolations(page), "approval pending").toEqual([]);
    await page.getByTestId("tab-inspector").click();
    await expect(page.getByTestId("timeline-row").first()).toBeVisible();
    expect(await seriousViolations(page), "inspector").toEqual([]);
  });
});

test("at 1280 px the three columns show side by side, without tabs", ({ page }) => wideColumns({ page }));

test.describe("axe-core at 1280 px: no serious or critical violations", () => {
  test.use({ viewport: { width: 1280, height: 800 } });

  test("welcome and empty chat", async ({ page }) => {
    await page.goto("/");
    await expect(page.getByTestId("core-version")).toHaveText(/^\d+\.\d+\.\d+$/);
    expect(await seriousViolations(page), "welcome").toEqual([]);
    await newSession(page, "storyteller");
    expect(await seriousViolations(page), "empty chat").toEqual([]);
  });

  test("streaming", async ({ page }) => {
    await newSession(page, "storyteller");
    // Long enough (about 90 s) to still stream after axe's run on a loaded machine.
    await sendMessage(page, "Tell a story, 3000 words, 30 ms");
    await expect(page.getByTestId("message-text").first()).not.toBeEmpty();
    expect(await seriousViolations(page), "streaming").toEqual([]);
    await expect(page.getByTestId("turn").last()).toHaveAttribute("data-status", "running");
    await page.getByTestId("cancel").click();
    await expect(page.getByTestId("turn").last()).not.toHaveAttribute("data-status", "running");
  });

  test("approval pending", async ({ page }) => {
    await newSession(page, "support");
    await sendMessage(page, REFUND);
    await expect(page.getByTestId("approval-card")).toBeVisible();
    expect(await seriousViolations(page), "approval pending").toEqual([]);
  });

  test("Vue page", async ({ page }) => {
    await page.goto("/vue.html");
    await expect(page.getByTestId("core-version")).toHaveText(/^\d+\.\d+\.\d+$/);
    await expect(page.getByTestId("connection")).toHaveText(/idle|done/);
    expect(await seriousViolations(page), "Vue page").toEqual([]);
  });
});

test("screen readers: the composer is labelled; the finished reply is announced once, not per delta", ({ page }) => replyAnnouncedOnce({ page }));

test("screen readers: a new approval card is announced; focus moves on after Allow and after Deny", ({ page }) => approvalAnnouncedFocusMoves({ page }));

test("scrolling up a history moves the content by what was scrolled; at the top the older turns come above", ({ page, request }) => scrollingUpTheHistoryMovesEvenly({ page, request }));
