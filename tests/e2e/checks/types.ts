import type { APIRequestContext, BrowserContext, Page } from "@playwright/test";

/**
 * What a check needs from its engine: a page (already open, blank), its browser context (more tabs
 * sharing its storage) and an HTTP client against the emulator (`baseURL` = `FORGESTREAM_URL`).
 * In Chromium these are Playwright's own fixtures; in Firefox, the WebDriver BiDi adapter of
 * `tests/e2e/firefox/bidi.ts`, which implements the part of Page / Locator the checks use and
 * throws on anything else. Checks assert with `../expect.ts`, which serves both.
 */
export interface CheckTools {
  page: Page;
  context: BrowserContext;
  request: APIRequestContext;
}

/** One end-to-end check, run by a spec file per engine; `K` names the tools it uses. */
export type Check<K extends keyof CheckTools = "page" | "request"> = (tools: Pick<CheckTools, K>) => Promise<void>;
