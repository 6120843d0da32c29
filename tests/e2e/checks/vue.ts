import { expect } from "../expect";
import type { Check } from "./types";
import { persistedText, shot, watchErrors } from "../helpers";

// The Vue page (www/vue.html, the Vue adapter), run in Chromium by tests/e2e/vue.spec.ts and in
// Firefox by tests/e2e/firefox.spec.ts.

/** the Vue page creates a storyteller session and streams a turn. */
export const vueStreamsATurn: Check<"page" | "request"> = async ({ page, request }) => {
  const errors = watchErrors(page);
  await page.goto("/vue.html");
  await expect(page.getByTestId("core-version")).toHaveText(/^\d+\.\d+\.\d+$/);
  const sessionId = page.getByTestId("session-id");
  await expect(sessionId).toHaveText(/^[0-9a-z]{26}$/);
  const sid = (await sessionId.textContent()) ?? "";

  await page.getByTestId("composer").fill("Tell a story, 150 words, 15 ms");
  // Enter sends, as on the React page (a trial: it did nothing here).
  await page.getByTestId("composer").focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("composer")).toHaveValue("");
  await expect(page.getByTestId("connection")).toHaveText("live");
  await expect(page.getByTestId("cancel")).toBeVisible();
  const text = page.getByTestId("message-text").last();
  await expect(text).toHaveText(/Il était une fois/);
  await expect(page.getByTestId("connection")).toHaveText("done", { timeout: 30_000 });
  await expect(page.getByTestId("turn-status")).toHaveText("done");

  const turnId = await page.getByTestId("turn").last().getAttribute("data-turn-id");
  expect(turnId).toBeTruthy();
  expect(await text.textContent()).toBe(await persistedText(request, sid, turnId as string));
  await shot(page, "vue");
  expect(errors).toEqual([]);
};

/** the Vue page reopens its session after a reload mid-stream and finishes the turn. */
export const vueReopensAfterReload: Check<"page" | "request"> = async ({ page, request }) => {
  const errors = watchErrors(page);
  await page.goto("/vue.html");
  const sessionId = page.getByTestId("session-id");
  await expect(sessionId).toHaveText(/^[0-9a-z]{26}$/);
  const sid = (await sessionId.textContent()) ?? "";

  await page.getByTestId("composer").fill("Tell a story, 600 words, 40 ms");
  await page.getByTestId("send").click();
  await expect(page.getByTestId("composer")).toHaveValue("");
  await expect(page.getByTestId("connection")).toHaveText("live");
  await expect(page.getByTestId("message-text").last()).toHaveText(/\S+ \S+ \S+/);
  await page.reload();

  // The same session, its running turn followed again, not a new empty session.
  await expect(sessionId).toHaveText(sid);
  await expect(page.getByTestId("turn")).toHaveCount(1);
  await expect(page.getByTestId("connection")).toHaveText("done", { timeout: 60_000 });
  const turnId = await page.getByTestId("turn").last().getAttribute("data-turn-id");
  expect(await page.getByTestId("message-text").last().textContent()).toBe(await persistedText(request, sid, turnId as string));
  expect(errors).toEqual([]);
};
