import { demoLoads, refundApproved, vuePageLoads } from "./checks/demo";
import { dropConnectionMidStream, rebuildAfter412, refreshMidStream, refreshWhilePaused } from "./checks/resume";
import { twoTabs } from "./checks/tabs";
import { cancelEndsStuckTurn, crashStuckTurnShowsLiveUnavailable, newTurnCancelsStuckTurn } from "./checks/lifecycle";
import { interruptShowsCancelled, concurrentRestoresShareOneSubscribe, stalePointerRestoresNull, respondRightAfterRestore, reconnectGapsAboveFloor, twoHandlesOneStream } from "./checks/engine";
import { test } from "./firefox/fixtures";

// The checks that matter most in a second engine, in Debian's headless Firefox ESR over WebDriver
// BiDi (tests/e2e/firefox/bidi.ts says why not Playwright's own Firefox): the same functions the
// Chromium specs run (tests/e2e/checks/).

test("demo page loads the wasm core", ({ fx }) => demoLoads(fx));
test("Vue page loads the wasm core", ({ fx }) => vuePageLoads(fx));
test("refund flow: approval card → approve → final answer", ({ fx }) => refundApproved(fx));
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
test("the SDK shows live updates unavailable and the turn running", ({ fx }) => crashStuckTurnShowsLiveUnavailable(fx));
test("the user can send a new turn, which cancels the stuck one", ({ fx }) => newTurnCancelsStuckTurn(fx));
test("Cancel ends the stuck turn and the user can go on", ({ fx }) => cancelEndsStuckTurn(fx));
