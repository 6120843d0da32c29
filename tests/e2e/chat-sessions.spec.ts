import { test } from "@playwright/test";
import { agentsScopeRestore, forgetInScope, rememberedAtOnce } from "./checks/chat";

// Sessions that behave (issue 13), through the README's React quickstart page. The checks live in
// checks/chat.ts so that firefox.spec.ts runs the same code in Firefox.
test("a new session is remembered at once: reloading the empty chat creates no second one", ({ page }) => rememberedAtOnce({ page }));
test("two agents on one origin do not restore each other's session", ({ page }) => agentsScopeRestore({ page }));
test("forget(id): restore() resolves null afterwards, in that scope only", ({ page }) => forgetInScope({ page }));
