import { test } from "@playwright/test";
import { servedWithCsp, markupRendersAsText, unsafeAuthUrlNotLinked } from "./checks/security";

// The checks live in checks/security.ts so that firefox.spec.ts runs the same code in Firefox.
test("the page is served with the CSP, has no inline scripts and no violations", ({ page, request }) => servedWithCsp({ page, request }));
test("markup in the user's message and in model text renders as text", ({ page }) => markupRendersAsText({ page }));
test("an MCP auth_url that is not http(s) is not rendered as a link", ({ page }) => unsafeAuthUrlNotLinked({ page }));
