import { test } from "@playwright/test";
import { vueFollowsTheStreamAtPhoneWidth, vueStreamsATurn, vueReopensAfterReload } from "./checks/vue";

// The checks live in checks/vue.ts so that firefox.spec.ts runs the same code in Firefox.
test("the Vue page creates a storyteller session and streams a turn", ({ page, request }) => vueStreamsATurn({ page, request }));
test("the Vue page reopens its session after a reload mid-stream and finishes the turn", ({ page, request }) => vueReopensAfterReload({ page, request }));
test("at a phone's width the Vue page follows a growing reply, and keeps the place of a user who scrolled up", ({ page, request }) => vueFollowsTheStreamAtPhoneWidth({ page, request }));
