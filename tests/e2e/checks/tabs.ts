import { expect } from "../expect";
import type { Check } from "./types";
import { lastTurnId, newSession, persistedText, sendMessage, shot, shownText, watchErrors } from "../helpers";

// Run in Chromium by tests/e2e/tabs.spec.ts and in Firefox by tests/e2e/firefox.spec.ts.

/** Two tabs on one session show the same final text; a third opened mid-stream resumes. */
export const twoTabs: Check<"context" | "request"> = async ({ context, request }) => {
  const first = await context.newPage();
  const errors = watchErrors(first);
  const sid = await newSession(first, "storyteller");

  // The second tab opens the same session (the demo's current session is in localStorage).
  const second = await context.newPage();
  errors.push(...watchErrors(second));
  let secondPosts = 0;
  second.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname.endsWith("/turns")) secondPosts++;
  });
  await second.goto("/");
  await expect(second.getByTestId("session-id")).toHaveText(sid);
  await expect(second.getByTestId("session-list").getByTestId("session-item")).toHaveCount(1);

  // A turn started in the first tab streams into the second (it attaches to the new turn).
  await sendMessage(first, "Tell a story, 500 words, 40 ms");
  await expect(second.getByTestId("turn")).toHaveCount(1);
  await expect(second.getByTestId("message-text").last()).toHaveText(/.{40,}/s);
  await expect(second.getByTestId("connection")).toHaveText(/connecting|live/);

  // A third tab opened mid-stream resumes from the shared checkpoint.
  const third = await context.newPage();
  errors.push(...watchErrors(third));
  await third.goto("/");
  await expect(third.getByTestId("session-id")).toHaveText(sid);

  for (const page of [first, second, third]) await expect(page.getByTestId("connection")).toHaveText("done", { timeout: 30_000 });
  const turnId = await lastTurnId(first);
  const persisted = await persistedText(request, sid, turnId);
  expect(persisted.length).toBeGreaterThan(500);
  for (const page of [first, second, third]) {
    expect(await lastTurnId(page)).toBe(turnId);
    expect(await shownText(page, turnId)).toBe(persisted);
  }
  expect(secondPosts).toBe(0);
  await shot(first, "two-tabs-first");
  await shot(second, "two-tabs-second");
  expect(errors).toEqual([]);
};
