import { test } from "@playwright/test";
import { demoLoads, demoOptimisticSend, demoUnknownRetryFindsTheTurn, switchAfterQuietKeepsPage, vuePageLoads } from "./checks/demo";

// The checks live in checks/demo.ts so that firefox.spec.ts runs the same code in Firefox.
test("the demo page loads the wasm core", ({ page }) => demoLoads({ page }));
test("the Vue page loads the wasm core", ({ page }) => vuePageLoads({ page }));
test("the demo shows the message at once while the server is down; Retry sends it", ({ page }) => demoOptimisticSend({ page }));
test("a message whose answer was lost with the server down says so within the lookup budget; Retry finds its turn and posts nothing", ({ page, request }) => demoUnknownRetryFindsTheTurn({ page, request }));
test("switching sessions after a quiet moment keeps the page (the inspector reads no closed handle)", ({ page }) => switchAfterQuietKeepsPage({ page }));
