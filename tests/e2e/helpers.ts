import type { APIRequestContext, Page } from "@playwright/test";
import { expect } from "./expect";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

// Playwright loads specs as CommonJS here (the workspace package is not "type": "module").
export const SCREENSHOTS = join(__dirname, "artifacts", "screenshots");

/** Saves the page's final state to tests/e2e/artifacts/screenshots/<name>.png. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Fails the test on uncaught page errors and console errors the test did not expect. */
export function watchErrors(page: Page, allow: RegExp[] = []): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${String(e)}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !allow.some((r) => r.test(m.text()))) errors.push(`console: ${m.text()}`);
  });
  return errors;
}

/** Opens the demo (optionally with a query string) and creates a session of `agent`. */
export async function newSession(page: Page, agent: string, query = ""): Promise<string> {
  await page.goto(`/${query}`);
  await page.getByTestId(`new-session-${agent}`).click();
  await expect(page.getByTestId("agent-name")).toHaveText(agent);
  const id = (await page.getByTestId("session-id").textContent())?.trim() ?? "";
  expect(id).not.toBe("");
  await expect(page.getByTestId("connection")).toHaveText(/idle|done/);
  return id;
}

export async function sendMessage(page: Page, text: string): Promise<void> {
  await page.getByTestId("composer").fill(text);
  await page.getByTestId("send").click();
}

/** The id of the newest turn shown. */
export async function lastTurnId(page: Page): Promise<string> {
  const id = await page.getByTestId("turn").last().getAttribute("data-turn-id");
  expect(id).toBeTruthy();
  return id as string;
}

/** The final assistant text of a turn as the server persisted it (merged `model.message`s, main thread). */
export async function persistedText(request: APIRequestContext, sessionId: string, turnId: string): Promise<string> {
  const parts: string[] = [];
  let token: string | undefined;
  do {
    const url = `/api/v1/sessions/${sessionId}/turns/${encodeURIComponent(turnId)}/events?order=asc&limit=100${token ? `&page_token=${encodeURIComponent(token)}` : ""}`;
    const res = await request.get(url);
    expect(res.ok()).toBe(true);
    const body = (await res.json()) as { data: { type: string; thread_id: string | null; content?: unknown }[]; pagination?: { next_page_token?: string } };
    for (const e of body.data) {
      if (e.type !== "model.message" || e.thread_id !== "main") continue;
      if (typeof e.content === "string") parts.push(e.content);
      else if (Array.isArray(e.content)) parts.push(e.content.map((p: { text?: string }) => p.text ?? "").join(""));
    }
    token = body.pagination?.next_page_token;
  } while (token);
  return parts.join("");
}

/** The assistant text of a turn as the page shows it (main-thread messages, in order). */
export async function shownText(page: Page, turnId: string): Promise<string> {
  const texts = await page.locator(`[data-testid="turn"][data-turn-id="${turnId}"] [data-testid="message"][data-thread-id="main"] [data-testid="message-text"]`).allTextContents();
  return texts.join("");
}

/**
 * Records every text the connection badge shows (a MutationObserver installed before the app
 * loads, surviving reloads); read it with `badgeHistory(page)`.
 */
export async function recordBadge(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __badge: string[] };
    w.__badge = [];
    const seen = () => {
      const el = document.querySelector('[data-testid="connection"]');
      const t = el?.textContent ?? null;
      if (t !== null && w.__badge[w.__badge.length - 1] !== t) w.__badge.push(t);
    };
    new MutationObserver(seen).observe(document, { subtree: true, childList: true, characterData: true });
  });
}

export async function badgeHistory(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __badge: string[] }).__badge);
}
