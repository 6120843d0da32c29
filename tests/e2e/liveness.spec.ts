import { test } from "@playwright/test";
import { crashedOwnerShowsStalled, silentToolCallBehindIdleCuts, unauthorizedResumeAsksForNewHeaders } from "./checks/liveness";

// Issue 14's liveness rules over the emulator (tests/e2e/checks/liveness.ts, also run in Firefox
// by firefox.spec.ts): a long silent tool call behind idle cuts, and a crashed owner's silent 200.

test("a silent tool call behind idle cuts ends done, never failed, with bounded subscribes", ({ page, request }) => silentToolCallBehindIdleCuts({ page, request }));
test("a crashed owner's silent stream shows stalled, never failed, and a new turn goes through", ({ page, request }) => crashedOwnerShowsStalled({ page, request }));
test("a 401 on reconnect asks the header provider again and resumes from the same cursor; a second 401 shows auth", ({ page }) => unauthorizedResumeAsksForNewHeaders({ page }));
