import { defineConfig } from "@playwright/test";

// The emulator is started by scripts/test, which passes its URL in FORGESTREAM_URL. Debian's
// browsers are used, no tool downloads one here: project `chromium` runs every spec in
// /usr/bin/chromium; project `firefox` runs firefox.spec.ts (the checks of tests/e2e/checks/) in
// /usr/bin/firefox-esr through geckodriver and WebDriver BiDi. `E2E_REPORT` names the JSON report
// (scripts/test runs the two projects as two steps, one report each).
const baseURL = process.env.FORGESTREAM_URL ?? "http://127.0.0.1:8790";

export default defineConfig({
  testDir: ".",
  testMatch: /.*\.spec\.ts$/,
  outputDir: "artifacts/results",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  reporter: [["list"], ["json", { outputFile: process.env.E2E_REPORT ?? "artifacts/report.json" }]],
  use: {
    baseURL,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
  },
  projects: [
    {
      name: "chromium",
      testIgnore: /firefox\.spec\.ts$/,
      use: {
        launchOptions: {
          executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
          args: [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
          ],
        },
      },
    },
    // Its own output folder: each run empties the folders of the projects it runs.
    { name: "firefox", testMatch: /firefox\.spec\.ts$/, outputDir: "artifacts/results-firefox" },
  ],
});
