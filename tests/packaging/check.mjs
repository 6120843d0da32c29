// Loads each packaging app in Debian Chromium (playwright-core, no downloaded browser), clicks
// Send and asserts that a storyteller turn streams to `done`: the text grew over several renders,
// the connection went `live` then `done`, and the page logged no errors.
// Usage: node tests/packaging/check.mjs NAME=URL...   Prints `ok NAME …` / `FAIL NAME …` per app
// and exits non-zero when any failed.
import { chromium } from "playwright-core";

const apps = process.argv.slice(2).map((arg) => {
  const i = arg.indexOf("=");
  return { name: arg.slice(0, i), url: arg.slice(i + 1) };
});
if (apps.length === 0 || apps.some((a) => !a.name || !a.url)) {
  console.error("usage: check.mjs NAME=URL...");
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

async function check({ name, url }) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console error: ${m.text()}`));
  // The SDK aborts its own stream request once the turn is done (net::ERR_ABORTED): not a failure.
  page.on("requestfailed", (r) => {
    const why = r.failure()?.errorText ?? "";
    if (!why.includes("ERR_ABORTED")) problems.push(`request failed: ${r.url()} ${why}`);
  });
  page.on("response", (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));
  try {
    await page.goto(url);
    // The app shows the core version once init() resolved, or `error` when loading failed.
    await page.locator('[data-testid="core-version"], [data-testid="error"]').first().waitFor({ timeout: 15_000 });
    const failure = page.getByTestId("error");
    if (await failure.count()) throw new Error(`the app failed: ${await failure.first().textContent()}`);
    const version = (await page.getByTestId("core-version").textContent()) ?? "";
    if (!/^\d+\.\d+\.\d+/.test(version)) throw new Error(`core version ${JSON.stringify(version)}`);
    const send = page.getByTestId("send");
    await send.waitFor({ timeout: 15_000 });
    await page.waitForFunction(() => !document.querySelector('[data-testid="send"]')?.hasAttribute("disabled"), null, { timeout: 15_000 });
    // Record every render of the text and the connection badge from inside the page.
    await page.evaluate(() => {
      const seen = { lengths: [], statuses: [] };
      window.__seen = seen;
      const text = document.querySelector('[data-testid="text"]');
      const status = document.querySelector('[data-testid="connection"]');
      const record = () => {
        const n = text?.textContent?.length ?? 0;
        if (seen.lengths.at(-1) !== n) seen.lengths.push(n);
        const s = status?.textContent ?? "";
        if (seen.statuses.at(-1) !== s) seen.statuses.push(s);
      };
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
      record();
    });
    await send.click();
    await page.waitForFunction(
      () => ["done", "error", "cancelled"].includes(document.querySelector('[data-testid="turn-status"]')?.textContent ?? "") || document.querySelector('[data-testid="error"]'),
      null,
      { timeout: 30_000 },
    );
    if (await failure.count()) throw new Error(`the app failed: ${await failure.first().textContent()}`);
    const status = await page.getByTestId("turn-status").textContent();
    if (status !== "done") throw new Error(`turn ended ${status}`);
    await page.waitForFunction(() => document.querySelector('[data-testid="connection"]')?.textContent === "done", null, { timeout: 10_000 });
    const text = (await page.getByTestId("text").textContent()) ?? "";
    const seen = await page.evaluate(() => window.__seen);
    if (text.trim().length < 100) throw new Error(`streamed text too short: ${JSON.stringify(text)}`);
    if (!text.startsWith("Il était une fois")) throw new Error(`unexpected text: ${JSON.stringify(text.slice(0, 60))}`);
    const partial = seen.lengths.filter((n) => n > 0 && n < text.length);
    if (partial.length < 2) throw new Error(`text did not stream (renders: ${seen.lengths.join(",")})`);
    if (!seen.statuses.includes("live")) throw new Error(`never live (statuses: ${seen.statuses.join(" → ")})`);
    if (problems.length) throw new Error(problems.join("; "));
    console.log(`ok   ${name}: core ${version}, ${text.length} chars in ${seen.lengths.length} renders, connection ${seen.statuses.join(" → ")}`);
    return true;
  } catch (e) {
    console.log(`FAIL ${name}: ${e instanceof Error ? e.message : e}${problems.length ? ` [${problems.join("; ")}]` : ""}`);
    return false;
  } finally {
    await context.close();
  }
}

let ok = true;
try {
  for (const app of apps) ok = (await check(app)) && ok;
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
