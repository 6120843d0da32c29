import type { Page } from "@playwright/test";
import { expect } from "../expect";
import type { Check } from "./types";
import { newSession, sendMessage, watchErrors } from "../helpers";

// Security of the demo: markup in user and model text renders as text, the page runs under the
// CSP `script-src 'self' 'wasm-unsafe-eval'` without violations or inline scripts, and an MCP
// `auth_url` that is not http(s) is never a link. Run in Chromium by tests/e2e/security.spec.ts and
// in Firefox by tests/e2e/firefox.spec.ts (`page.route` there: BiDi request interception).

const IMG = "<img src=x onerror=window.__xss=1>";
const SCRIPT = "<script>window.__xss=2</script>";

/** Records `securitypolicyviolation` events in `window.__csp` from before the app loads. */
async function recordCsp(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __csp: string[] };
    w.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => {
      w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
}

async function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
}

async function xssFlag(page: Page): Promise<unknown> {
  return page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss);
}

/** The page is served with the CSP, has no inline scripts and no violations. */
export const servedWithCsp: Check<"page" | "request"> = async ({ page, request }) => {
  await recordCsp(page);
  const errors = watchErrors(page);
  const res = await request.get("/");
  expect(res.ok()).toBe(true);
  const csp = res.headers()["content-security-policy"] ?? "";
  expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval'");
  expect(csp).not.toContain("unsafe-inline");
  await newSession(page, "storyteller");
  await sendMessage(page, "A story, 40 words");
  await expect(page.getByTestId("connection")).toHaveText("done");
  const scripts = await page.evaluate(() =>
    Array.from(document.scripts).map((s) => ({ src: s.src, inline: !s.src && s.textContent!.trim().length > 0 })),
  );
  expect(scripts.length).toBeGreaterThan(0);
  for (const s of scripts) {
    expect(s.inline, "inline script").toBe(false);
    expect(new URL(s.src).origin).toBe(new URL(page.url()).origin);
  }
  expect(await cspViolations(page)).toEqual([]);
  expect(errors).toEqual([]);
};

/** Markup in the user's message and in model text renders as text. */
export const markupRendersAsText: Check<"page"> = async ({ page }) => {
  await recordCsp(page);
  const errors = watchErrors(page);
  // Model text with markup: the first content delta of the create stream and the merged output
  // in `turn.done` get the payloads prepended (the emulator writes JSON with sorted keys, so a
  // delta starts with `{"content":"`).
  await page.route(/\/api\/v1\/sessions\/[^/]+\/turns$/, async (route) => {
    if (route.request().method() !== "POST") return route.continue();
    const response = await route.fetch();
    const body = (await response.text())
      .replace('{"content":"', `{"content":"${IMG}${SCRIPT}`)
      .replace('"output":{"content":"', `"output":{"content":"${IMG}${SCRIPT}`);
    await route.fulfill({ response, body });
  });
  await newSession(page, "storyteller");
  await sendMessage(page, `Hello ${IMG} and ${SCRIPT}, a story, 30 words`);
  await expect(page.getByTestId("connection")).toHaveText("done");
  await expect(page.getByTestId("user-input").last()).toContainText(IMG);
  await expect(page.getByTestId("user-input").last()).toContainText(SCRIPT);
  await expect(page.getByTestId("message-text").first()).toContainText(IMG);
  await expect(page.getByTestId("message-text").first()).toContainText(SCRIPT);
  // No element was created from the text, nothing ran.
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  expect(await page.evaluate(() => Array.from(document.scripts).filter((s) => !s.src).length)).toBe(0);
  expect(await xssFlag(page)).toBeUndefined();
  expect(await cspViolations(page)).toEqual([]);
  expect(errors).toEqual([]);
};

/** An MCP auth_url that is not http(s) is not rendered as a link. */
export const unsafeAuthUrlNotLinked: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  // The emulator's github agent sends an http auth_url (its fake OAuth page); rewrite it in
  // every API body (live stream, turn, listings) to a javascript: URL.
  const evil = "javascript:window.__xss=3";
  await page.route(/\/api\/v1\//, async (route) => {
    const response = await route.fetch();
    const body = (await response.text()).replace(/http:\/\/[^"]*\/fake-oauth\/authorize[^"]*/g, evil);
    await route.fulfill({ response, body });
  });
  await newSession(page, "github");
  await sendMessage(page, "List the open issues of forgestream/demo");
  const card = page.getByTestId("auth-card");
  await expect(card).toBeVisible();
  await expect(page.getByTestId("connection")).toHaveText("paused");
  await expect(card.getByTestId("auth-link")).toHaveCount(0);
  await expect(card).toContainText("unsafe authorization URL not linked");
  expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
  expect(await xssFlag(page)).toBeUndefined();
  expect(errors).toEqual([]);
};
