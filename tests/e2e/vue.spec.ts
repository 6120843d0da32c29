import { test, expect } from "@playwright/test";
import { persistedText, shot, watchErrors } from "./helpers";

test("the Vue page creates a storyteller session and streams a turn", async ({ page, request }) => {
  const errors = watchErrors(page);
  await page.goto("/vue.html");
  await expect(page.getByTestId("core-version")).toHaveText(/^\d+\.\d+\.\d+$/);
  const sessionId = page.getByTestId("session-id");
  await expect(sessionId).toHaveText(/^[0-9a-z]{26}$/);
  const sid = (await sessionId.textContent()) ?? "";

  await page.getByTestId("composer").fill("Tell a story, 150 words, 15 ms");
  await page.getByTestId("send").click();
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
});
