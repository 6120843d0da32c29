import { test } from "@playwright/test";
import { demoAnswerRaceSaysWhoWon, twoTabsApproveAtOnce } from "./checks/actions";

// The checks live in checks/actions.ts so that firefox.spec.ts runs the same code in Firefox.
test("two tabs approving at once → one continuation POST; the other tab's promise says conflict; both views end done with the same text", ({ context, request }) => twoTabsApproveAtOnce({ context, request }));
test("the demo: Allow in one tab and Deny in the other at once → one answer sent; the tab that lost says so", ({ context, request }) => demoAnswerRaceSaysWhoWon({ context, request }));
