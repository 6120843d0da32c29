import { test } from "@playwright/test";
import { twoTabs } from "./checks/tabs";

// The check lives in checks/tabs.ts so that firefox.spec.ts runs the same code in Firefox.
test("two tabs on one session show the same final text", ({ context, request }) => twoTabs({ context, request }));
