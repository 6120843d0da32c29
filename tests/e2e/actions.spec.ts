import { test } from "@playwright/test";
import { twoTabsApproveAtOnce } from "./checks/actions";

// The checks live in checks/actions.ts so that firefox.spec.ts runs the same code in Firefox.
test("two tabs approving at once → one continuation POST; the other tab's promise says conflict; both views end done with the same text", ({ context, request }) => twoTabsApproveAtOnce({ context, request }));
