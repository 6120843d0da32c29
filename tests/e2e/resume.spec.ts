import { test } from "@playwright/test";
import { dropConnectionMidStream, rebuildAfter412, refreshMidStream, refreshWhilePaused } from "./checks/resume";

// The checks live in checks/resume.ts so that firefox.spec.ts runs the same code in Firefox.
test("refresh mid-stream resumes the turn without duplicated or missing text", ({ page, request }) => refreshMidStream({ page, request }));
test("refresh while paused keeps the approval card, and approving works", ({ page, request }) => refreshWhilePaused({ page, request }));
test("dropping the connection mid-stream reconnects without losing text", ({ page, request }) => dropConnectionMidStream({ page, request }));
test("412 on resubscribe: the SDK rebuilds the turn from the listings", ({ page, request }) => rebuildAfter412({ page, request }));
