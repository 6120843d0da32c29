/**
 * Sessions that behave (issue 13), through the README's React quickstart page: a session is
 * remembered as soon as it is created (a reload of an empty chat does not create another), the
 * stored pointer is scoped by agent (two agents on one origin never restore each other's
 * session), and `client.forget(id)` makes `restore()` resolve null.
 */
import { test, type Page } from "@playwright/test";
import { expect } from "./expect";
import { watchErrors } from "./helpers";

function countCreates(page: Page): { n: number } {
  const count = { n: 0 };
  page.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/sessions") count.n++;
  });
  return count;
}

async function open(page: Page, agent: string): Promise<void> {
  await page.goto(`/quickstart.html?agent=${agent}`);
  await expect(page.getByTestId("status")).toHaveText("idle");
}

test("a new session is remembered at once: reloading the empty chat creates no second one", async ({ page }) => {
  const errors = watchErrors(page);
  const creates = countCreates(page);
  await open(page, "support");
  expect(creates.n).toBe(1);
  await page.reload();
  await expect(page.getByTestId("status")).toHaveText("idle");
  await page.reload();
  await expect(page.getByTestId("status")).toHaveText("idle");
  expect(creates.n).toBe(1);
  expect(errors).toEqual([]);
});

test("two agents on one origin do not restore each other's session", async ({ page }) => {
  const errors = watchErrors(page);
  const creates = countCreates(page);
  await open(page, "storyteller");
  await page.getByTestId("composer").fill("Tell a story, 20 words");
  await page.getByTestId("send").click();
  await expect(page.getByTestId("status")).toHaveText("idle");
  await expect(page.getByTestId("text").last()).toContainText("Il était une fois");

  // The other agent on the same origin: its own, new session — not the storyteller's.
  await open(page, "support");
  expect(creates.n).toBe(2);
  await expect(page.getByTestId("user-message")).toHaveCount(0);
  await page.getByTestId("composer").fill("Where is ORD-2031?");
  await page.getByTestId("send").click();
  await expect(page.getByTestId("user-message")).toHaveText(/Where is ORD-2031\?/);
  await expect(page.getByTestId("status")).not.toHaveText(/submitting|streaming/);

  // Back to each agent: each restores its own conversation, nothing new is created.
  await open(page, "storyteller");
  await expect(page.getByTestId("user-message")).toHaveText(/Tell a story, 20 words/);
  await expect(page.getByTestId("text").last()).toContainText("Il était une fois");
  await open(page, "support");
  await expect(page.getByTestId("user-message")).toHaveText(/Where is ORD-2031\?/);
  expect(creates.n).toBe(2);
  expect(errors).toEqual([]);
});

test("forget(id): restore() resolves null afterwards, in that scope only", async ({ page }) => {
  await page.goto("/sdk.html");
  await expect(page.locator("#status")).toHaveText("ready");
  const out = await page.evaluate(async () => {
    const { AgentClient } = window.forgestream;
    const client = new AgentClient({ baseUrl: "", storageNamespace: "e2e-forget" });
    const a = await client.createSession({ agent: { name: "support" } }, { scope: "a" });
    const b = await client.createSession({ agent: { name: "support" } }, { scope: "b" });
    const ids = { a: a.id, b: b.id };
    window.release(a);
    window.release(b);
    const before = await client.restore({ scope: "a" });
    const beforeId = before?.id ?? null;
    window.release(before);
    client.forget(ids.a);
    const after = await client.restore({ scope: "a" });
    const other = await client.restore({ scope: "b" });
    const out = { ids, beforeId, after: after?.id ?? null, other: other?.id ?? null, unscoped: (await client.restore())?.id ?? null };
    window.release(other);
    return out;
  });
  expect(out.beforeId).toBe(out.ids.a);
  expect(out.after).toBeNull();
  expect(out.other).toBe(out.ids.b);
  expect(out.unscoped).toBeNull();
});
