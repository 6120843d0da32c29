import { test as base, type BrowserContext, type Page } from "@playwright/test";
import { homedir } from "node:os";
import { join } from "node:path";
import type { CheckTools } from "../checks/types";
import { FirefoxBrowser, Geckodriver, type FirefoxContext } from "./bidi";

// Playwright Test fixtures for the Firefox checks. One Firefox per worker; every test gets a fresh
// user context (its own localStorage), as Playwright gives every test a fresh browser context, and
// `fx` = the tools a check takes. A failed test leaves a full-page PNG of each of its tabs in its
// output folder.

// The cargo-installed geckodriver (scripts/setup), never node_modules/.bin/geckodriver: that is
// the npm wrapper, which would try to download a driver.
const GECKODRIVER = process.env.GECKODRIVER || join(homedir(), ".cargo", "bin", "geckodriver");
const FIREFOX = process.env.FIREFOX || "/usr/bin/firefox-esr";

export const test = base.extend<{ firefoxContext: FirefoxContext; fx: CheckTools }, { firefox: FirefoxBrowser }>({
  firefox: [
    async ({}, use) => {
      const driver = await Geckodriver.start(GECKODRIVER);
      try {
        const browser = await FirefoxBrowser.open(driver, FIREFOX);
        await use(browser);
        await browser.close();
      } finally {
        await driver.stop();
      }
    },
    { scope: "worker", timeout: 60_000 },
  ],
  firefoxContext: async ({ firefox, baseURL }, use) => {
    const context = await firefox.newContext(baseURL!);
    await use(context);
    await context.close();
  },
  fx: async ({ firefoxContext, request }, use, testInfo) => {
    const page = await firefoxContext.newPage();
    // The adapter implements the part of Page / BrowserContext the checks use.
    await use({ page: page as unknown as Page, context: firefoxContext as unknown as BrowserContext, request });
    if (testInfo.status !== testInfo.expectedStatus) {
      for (const [i, p] of firefoxContext.pages.entries()) await p.screenshot({ path: testInfo.outputPath(`failed-tab${i}.png`), fullPage: true }).catch(() => {});
    }
  },
});
