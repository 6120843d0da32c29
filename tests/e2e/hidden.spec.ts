import { test } from "@playwright/test";
import { hiddenPageKeepsUp } from "./checks/hidden";

// The check (and how it makes the page hidden) lives in checks/hidden.ts so that firefox.spec.ts
// runs the same code in Firefox.
test("a hidden page streams a turn in the network's time and shows done without becoming visible", ({ page, request }) => hiddenPageKeepsUp({ page, request }));
