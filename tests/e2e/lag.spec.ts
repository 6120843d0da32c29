import { test } from "@playwright/test";
import { viewKeepsUp } from "./checks/lag";

// The check (and why it counts lag in animation frames) lives in checks/lag.ts so that
// firefox.spec.ts runs the same code in Firefox.
test("the view stays within a few frames of a raw reader at ~500 frames/s and shows done right after it", ({ page }) => viewKeepsUp({ page }));
