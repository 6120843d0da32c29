import { test } from "@playwright/test";
import { closeAbortsExport, refundEventsExported } from "./checks/events";

// The check lives in checks/events.ts so that firefox.spec.ts runs the same code in Firefox.

test("after a refund, exportEvents() returns the persisted events in order, typed, as the server lists them", ({ page, request }) => refundEventsExported({ page, request }));
test("close() during exportEvents() aborts the export: it rejects with aborted", ({ page }) => closeAbortsExport({ page }));
