import { test } from "@playwright/test";
import { badRequestOnResumeFallsBack, crossOriginRefusedLastEventId, reloadFollowsTheNewerRunningTurn, openAfterReloadShowsTheRunningTurn, quickstartShowsLoadingWhileRestoring, reloadRightAfterCreatePost } from "./checks/restore";

// Issue 14: which turn a reload follows, and resumes the network refuses. The checks live in
// checks/restore.ts so that firefox.spec.ts runs the same code in Firefox.
test("a reload right after the create POST follows the new turn: one POST, the turn's text", ({ page, request }) => reloadRightAfterCreatePost({ page, request }));
test("a reload after another tab continued the session follows the newer running turn", ({ context, request }) => reloadFollowsTheNewerRunningTurn({ context, request }));
test("a 400 on resume: the cursor in the query only, a warning, the correct text", ({ page, request }) => badRequestOnResumeFallsBack({ page, request }));
test("a cross-origin server refusing Last-Event-ID in preflight: the resume goes on without it, the text is correct", ({ page, request }) => crossOriginRefusedLastEventId({ page, request }));
test("the quickstart reads loading while it restores, never idle over an empty transcript", ({ page }) => quickstartShowsLoadingWhileRestoring({ page }));
test("after a reload mid-reply, restore() and useAgentSession open onto the running turn: streaming, never loading with no turn", ({ page }) => openAfterReloadShowsTheRunningTurn({ page }));
