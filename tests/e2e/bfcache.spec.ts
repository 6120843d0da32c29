import { test } from "@playwright/test";
import { bfcacheReturnCompletes } from "./checks/pagelife";

// Back/forward cache (issue 14, "Page lifecycle"): Playwright launches Chromium with
// `--disable-back-forward-cache` (so that `page.goBack()` always reloads); this file runs its
// own browser without that switch, with the project's other launch options.
test.use({
  launchOptions: {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    ignoreDefaultArgs: ["--disable-back-forward-cache"],
  },
});

test("bfcache: navigating away mid-stream and back shows pageshow persisted; the turn completes at once, text once", ({ page, context, request }) => bfcacheReturnCompletes({ page, context, request }));
