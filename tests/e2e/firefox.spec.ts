import { cyclesLeaveSessionsCollectable } from "./checks/collect";
import { demoLoads, refundApproved, refundDenied, vuePageLoads } from "./checks/demo";
import { viewKeepsUp } from "./checks/lag";
import { cancelStopsRunningTurn, errorTurnThenRetry, mcpAuthFakeOauth, questionFreeText, questionOptionAnswers, subagentThreadsNest, switchingSessions } from "./checks/scenarios";
import { markupRendersAsText, servedWithCsp, unsafeAuthUrlNotLinked } from "./checks/security";
import { gracefulShutdownShowsAbandoned } from "./checks/shutdown";
import { vueReopensAfterReload, vueStreamsATurn } from "./checks/vue";
import { dropConnectionMidStream, rebuildAfter412, refreshMidStream, refreshWhilePaused } from "./checks/resume";
import { twoTabs } from "./checks/tabs";
import { cancelEndsStuckTurn, crashStuckTurnShowsLiveUnavailable, newTurnCancelsStuckTurn } from "./checks/lifecycle";
import { interruptShowsCancelled, concurrentRestoresShareOneSubscribe, stalePointerRestoresNull, respondRightAfterRestore, reconnectGapsAboveFloor, twoHandlesOneStream, disconnectShowsIdleAtOnce, reactHandleCloseLeavesNoLiveBadge } from "./checks/engine";
import { refundEventsExported } from "./checks/events";
import { test } from "./firefox/fixtures";

// The end-to-end checks in Debian's headless Firefox ESR over WebDriver BiDi (tests/e2e/firefox/bidi.ts
// says why not Playwright's own Firefox): the same functions the Chromium specs run
// (tests/e2e/checks/), with the Chromium spec's test titles.

test("the demo page loads the wasm core", ({ fx }) => demoLoads(fx));
test("the Vue page loads the wasm core", ({ fx }) => vuePageLoads(fx));
test("refund flow: approval card → approve → final answer", ({ fx }) => refundApproved(fx));
test("after a refund, exportEvents() returns the persisted events in order, typed, as the server lists them", ({ fx }) => refundEventsExported(fx));
test("refresh mid-stream resumes the turn without duplicated or missing text", ({ fx }) => refreshMidStream(fx));
test("refresh while paused keeps the approval card, and approving works", ({ fx }) => refreshWhilePaused(fx));
test("dropping the connection mid-stream reconnects without losing text", ({ fx }) => dropConnectionMidStream(fx));
test("412 on resubscribe: the SDK rebuilds the turn from the listings", ({ fx }) => rebuildAfter412(fx));
test("two tabs on one session show the same final text", ({ fx }) => twoTabs(fx));
test("interrupt: the old turn shows cancelled / cancelled-for-next-turn at once, its late deltas ignored", ({ fx }) => interruptShowsCancelled(fx));
test("two restores at once: one session, one subscribe", ({ fx }) => concurrentRestoresShareOneSubscribe(fx));
test("a stale or corrupt last-session pointer: restore() resolves null and the pointer is cleared; the adapter creates", ({ fx }) => stalePointerRestoresNull(fx));
test("respond immediately after restore onto a paused turn works", ({ fx }) => respondRightAfterRestore(fx));
test("reconnect gaps never go below the 250 ms floor", ({ fx }) => reconnectGapsAboveFloor(fx));
test("two handles on one session stream each turn once", ({ fx }) => twoHandlesOneStream(fx));
test("disconnect() shows the connection idle at once", ({ fx }) => disconnectShowsIdleAtOnce(fx));
test("closing the React hook's own handle leaves no live badge on the page", ({ fx }) => reactHandleCloseLeavesNoLiveBadge(fx));
test("the SDK shows live updates unavailable and the turn running", ({ fx }) => crashStuckTurnShowsLiveUnavailable(fx));
test("the user can send a new turn, which cancels the stuck one", ({ fx }) => newTurnCancelsStuckTurn(fx));
test("Cancel ends the stuck turn and the user can go on", ({ fx }) => cancelEndsStuckTurn(fx));
test("deny: the paused turn shows the refusal, the next turn answers it", ({ fx }) => refundDenied(fx));
test("a graceful shutdown mid-stream shows the turn abandoned", ({ fx }) => gracefulShutdownShowsAbandoned(fx));
test("the view stays within a few frames of a raw reader at ~500 frames/s and shows done right after it", ({ fx }) => viewKeepsUp(fx));
test("ask_user_question: options as buttons, the answer continues the turn", ({ fx }) => questionOptionAnswers(fx));
test("ask_user_question: a free-text answer", ({ fx }) => questionFreeText(fx));
test("MCP auth: the emulator's fake authorization page, then continue", ({ fx }) => mcpAuthFakeOauth(fx));
test("subagent threads nest under the call that spawned them", ({ fx }) => subagentThreadsNest(fx));
test("an error turn shows its message, then a retry succeeds", ({ fx }) => errorTurnThenRetry(fx));
test("cancel stops a running turn", ({ fx }) => cancelStopsRunningTurn(fx));
test("switching sessions opens each with its own history", ({ fx }) => switchingSessions(fx));
test("the Vue page creates a storyteller session and streams a turn", ({ fx }) => vueStreamsATurn(fx));
test("the Vue page reopens its session after a reload mid-stream and finishes the turn", ({ fx }) => vueReopensAfterReload(fx));
test("the page is served with the CSP, has no inline scripts and no violations", ({ fx }) => servedWithCsp(fx));
test("markup in the user's message and in model text renders as text", ({ fx }) => markupRendersAsText(fx));
test("an MCP auth_url that is not http(s) is not rendered as a link", ({ fx }) => unsafeAuthUrlNotLinked(fx));
test("200 open/close cycles of sessions with listeners leave every handle and listener collectable", ({ fx }) => cyclesLeaveSessionsCollectable(fx));
