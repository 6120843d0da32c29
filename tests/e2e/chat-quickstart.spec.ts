import { test } from "@playwright/test";
import { historyShowsWhileLoading, liveStreamGoneIsAnError, liveTurnGoesOnWhileHistoryLoads, longHistoryAfterReload, newestTurnsFirstOlderOnDemand, optimisticWhileServerDown, showOlderClickedThenScrollToTop, stopKeepsText, strictModeOneSession } from "./checks/chat";

// The chat-grade API (issue 13) through the README's React quickstart page. The checks live in
// checks/chat.ts so that firefox.spec.ts runs the same code in Firefox.
test("StrictMode's double mount creates one session and one stream", ({ page }) => strictModeOneSession({ page }));
test("stop keeps the streamed text on the page, marked stopped; a reload shows the server's history", ({ page }) => stopKeepsText({ page }));
test("the user's message shows at once while the server is down; once it is back the SDK finds it was not sent, and Retry sends it", ({ page }) => optimisticWhileServerDown({ page }));
test("after a reload the chat shows the timeline's history while the turns listing still loads", ({ page }) => historyShowsWhileLoading({ page }));
test("a reload mid-stream follows the running turn while the turns listing still loads", ({ page }) => liveTurnGoesOnWhileHistoryLoads({ page }));
test("a long history shows its newest turns first; scrolling up to the top adds the older ones above, keeping the user's place", ({ page }) => newestTurnsFirstOlderOnDemand({ page }));
test("after \"Show older\" clicked with the mouse, a scroll to the top still adds the next older turns", ({ page }) => showOlderClickedThenScrollToTop({ page }));
test("a history longer than a screen shows after a reload as before it: the newest 20 turns, then the older ones on Show older", ({ page }) => longHistoryAfterReload({ page }));
test("a turn whose live stream is gone (412) reads as an error, and a new message moves on", ({ page }) => liveStreamGoneIsAnError({ page }));
