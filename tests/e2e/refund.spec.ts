import { test } from "@playwright/test";
import { refundApproved, refundDenied } from "./checks/demo";

// The approve and deny flows live in checks/demo.ts so that firefox.spec.ts runs the same code in Firefox.

test("refund flow: approval card → approve → final answer", ({ page, request }) => refundApproved({ page, request }));
test("deny: the paused turn shows the refusal, the next turn answers it", ({ page }) => refundDenied({ page }));
