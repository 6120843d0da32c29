import { test } from "@playwright/test";
import { demoLoads, demoOptimisticSend, demoNotSentFoundWhenTheServerIsBack, demoUnknownFoundWhenTheServerIsBack, demoUnknownRetryFindsTheTurn, switchAfterQuietKeepsPage, vuePageLoads } from "./checks/demo";

// The checks live in checks/demo.ts so that firefox.spec.ts runs the same code in Firefox.
test("the demo page loads the wasm core", ({ page }) => demoLoads({ page }));
test("the Vue page loads the wasm core", ({ page }) => vuePageLoads({ page }));
test("the demo shows the message at once while the server is down; Retry sends it", ({ page }) => demoOptimisticSend({ page }));
test("a message whose answer was lost with the server down says so within the lookup budget; Retry finds its turn and posts nothing", ({ page, request }) => demoUnknownRetryFindsTheTurn({ page, request }));
test("a message whose answer was lost reads \"Maybe not sent\" while the server is down and becomes its turn's by itself once the server is back (no Retry)", ({ page, request }) => demoUnknownFoundWhenTheServerIsBack({ page, request }));
test("a lost message the server never got reads \"Not sent\" by itself once the server is back, on the message only (no connection banner); Retry sends it once", ({ page, request }) => demoNotSentFoundWhenTheServerIsBack({ page, request }));
test("switching sessions after a quiet moment keeps the page (the inspector reads no closed handle)", ({ page }) => switchAfterQuietKeepsPage({ page }));
