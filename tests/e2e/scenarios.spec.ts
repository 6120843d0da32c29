import { test } from "@playwright/test";
import { questionOptionAnswers, questionFreeText, mcpAuthFakeOauth, subagentThreadsNest, errorTurnThenRetry, cancelStopsRunningTurn, switchingSessions } from "./checks/scenarios";

// The checks live in checks/scenarios.ts so that firefox.spec.ts runs the same code in Firefox.
test("ask_user_question: options as buttons, the answer continues the turn", ({ page, request }) => questionOptionAnswers({ page, request }));
test("ask_user_question: a free-text answer", ({ page }) => questionFreeText({ page }));
test("MCP auth: the emulator's fake authorization page, then continue", ({ page, context }) => mcpAuthFakeOauth({ page, context }));
test("subagent threads nest under the call that spawned them", ({ page }) => subagentThreadsNest({ page }));
test("an error turn shows its message, then a retry succeeds", ({ page }) => errorTurnThenRetry({ page }));
test("cancel stops a running turn", ({ page }) => cancelStopsRunningTurn({ page }));
test("switching sessions opens each with its own history", ({ page }) => switchingSessions({ page }));
