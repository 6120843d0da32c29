import { expect as playwrightExpect } from "@playwright/test";
import { FirefoxLocator, locatorMatchers } from "./firefox/bidi";

/**
 * Playwright's `expect`, also for the Firefox adapter's locators (firefox/bidi.ts): their
 * assertions retry against the page as Playwright's do. Everything else — Playwright locators,
 * values, `expect.poll`, `expect(fn).toPass` — goes to Playwright's own `expect`, which works
 * outside its browsers too. Used by helpers.ts and checks/, which run in both engines.
 */
export const expect = Object.assign(
  (received: unknown, message?: string) => (received instanceof FirefoxLocator ? locatorMatchers(received, false) : playwrightExpect(received, message)),
  { poll: playwrightExpect.poll },
) as unknown as typeof playwrightExpect;
