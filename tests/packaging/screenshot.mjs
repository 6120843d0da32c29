// Regenerates docs/demo.png (the README's screenshot): opens the demo served by forgestream-server,
// starts a `support` session, asks for a refund and captures the turn paused on the approval card.
// Usage: node tests/packaging/screenshot.mjs URL [OUT]   (URL: an emulator started with --www www/dist)
import { chromium } from "playwright-core";

const [url, out = "docs/demo.png"] = process.argv.slice(2);
if (!url) {
  console.error("usage: screenshot.mjs URL [OUT]");
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1040 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  await page.getByTestId("new-session-support").click();
  await page.getByTestId("agent-name").waitFor();
  await page.getByTestId("composer").fill("Refund €49.50 on ORD-2031, it arrived broken");
  await page.getByTestId("send").click();
  await page.getByTestId("approval-card").waitFor({ timeout: 30_000 });
  await page.waitForFunction(() => document.querySelector('[data-testid="connection"]')?.textContent === "paused", null, { timeout: 30_000 });
  await page.waitForTimeout(300); // let the last frame paint
  await page.screenshot({ path: out });
  if (errors.length) throw new Error(errors.join("; "));
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
}
