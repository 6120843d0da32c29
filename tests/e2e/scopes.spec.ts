/**
 * The scope is part of the last-session pointer only (issue 13, review of session 4): two scopes
 * that open one session share one engine, one history load and one snapshot, while each scope
 * still restores only its own last session.
 */
import { test } from "@playwright/test";
import { expect } from "./expect";
import { watchErrors } from "./helpers";

test("two scopes opening one session share one engine, one load and one snapshot", async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto("/sdk.html");
  await expect(page.locator("#status")).toHaveText("ready");
  // Scope "a" creates S and talks in it; scope "b" creates T, then (a shared link, a user
  // switching) b's pointer is made to name S, wherever this version keeps it.
  const ids = await page.evaluate(async () => {
    const { AgentClient } = window.forgestream;
    const client = new AgentClient({ baseUrl: "", storageNamespace: "e2e-scopes" });
    const a = await client.createSession({ agent: { name: "storyteller" } }, { scope: "a" });
    await a.send("Tell a story, 5 words");
    while (a.getSnapshot().status !== "idle") await new Promise((r) => setTimeout(r, 50));
    const b = await client.createSession({ agent: { name: "support" } }, { scope: "b" });
    const ids = { s: a.id, t: b.id };
    window.release(a);
    window.release(b);
    const keys = Object.keys(localStorage).filter((k) => localStorage.getItem(k) === ids.t);
    for (const k of keys) localStorage.setItem(k, ids.s);
    return { ...ids, pointers: keys.length };
  });
  expect(ids.pointers).toBe(1);

  await page.reload();
  await expect(page.locator("#status")).toHaveText("ready");
  const loads: string[] = [];
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    if (r.method() === "GET" && path.includes(ids.s)) loads.push(path);
  });
  const restored = await page.evaluate(async () => {
    const { AgentClient } = window.forgestream;
    const client = new AgentClient({ baseUrl: "", storageNamespace: "e2e-scopes" });
    const [a, b] = await Promise.all([client.restore({ scope: "a" }), client.restore({ scope: "b" })]);
    (window as unknown as { scoped: unknown }).scoped = { a, b };
    if (!a || !b) return { ids: [a?.id ?? null, b?.id ?? null], same: false, users: 0 };
    return { ids: [a.id, b.id], same: a.getSnapshot() === b.getSnapshot(), users: b.getSnapshot().messages.filter((m) => m.kind === "user").length };
  });
  expect(restored).toEqual({ ids: [ids.s, ids.s], same: true, users: 1 });
  // One engine loaded the history once: one turns listing, one session timeline.
  const history = `/api/v1/sessions/${ids.s}`;
  expect(loads.filter((p) => p === `${history}/turns`)).toHaveLength(1);
  expect(loads.filter((p) => p === `${history}/events`)).toHaveLength(1);

  const out = await page.evaluate(async () => {
    type Handle = InstanceType<typeof window.forgestream.AgentClient> extends { session(id: string): infer S } ? S : never;
    const { a, b } = (window as unknown as { scoped: { a: Handle; b: Handle } }).scoped;
    // What one scope sends, the other shows: one engine.
    await a.send("Tell a story, 3 words");
    const texts = b
      .getSnapshot()
      .messages.filter((m) => m.kind === "user")
      .map((m) => (m.kind === "user" ? m.text : ""));
    window.release(a);
    window.release(b);
    // An unscoped restore finds nothing: only the scopes' pointers name S.
    const fresh = new window.forgestream.AgentClient({ baseUrl: "", storageNamespace: "e2e-scopes" });
    const unscoped = await fresh.restore();
    return { texts, unscoped: unscoped?.id ?? null };
  });
  expect(out.texts).toEqual(["Tell a story, 5 words", "Tell a story, 3 words"]);
  expect(out.unscoped).toBeNull();
  expect(errors).toEqual([]);
});
