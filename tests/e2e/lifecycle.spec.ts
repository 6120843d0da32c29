import { test } from "@playwright/test";
import { gracefulShutdownShowsAbandoned } from "./checks/shutdown";
import { cancelEndsStuckTurn, crashStuckTurnShowsLiveUnavailable, newTurnCancelsStuckTurn, stuckTurnThreadsEndInterrupted } from "./checks/lifecycle";
import { freezeResumeCompletes, hmrAdoptsTheEngine, hmrRestoreAdopts, hmrWithTabsShareOneLock, offlineOnlineCompletes, stalledReadResubscribes } from "./checks/pagelife";

// What an app meets when the TrueForge server dies under it (issue 17), shown by the demo:
// - a crash (`kill -9`; here the emulator's `crash-after-events` fault, which leaves exactly
//   what a crash leaves: the turn `running` forever, its live stream gone, subscribe 412) —
//   the SDK says live updates are unavailable, and a new turn cancels the stuck one;
// - a graceful shutdown (SIGTERM) mid-stream: the stream ends with `turn.done`
//   `cancelled`/`abandoned`, and the page shows it.
// The checks live in checks/lifecycle.ts and checks/shutdown.ts so that firefox.spec.ts runs the
// same code in Firefox.

test.describe("a turn stuck running after a crash", () => {
  test("the SDK shows live updates unavailable and the turn running", ({ page, request }) => crashStuckTurnShowsLiveUnavailable({ page, request }));
  test("the user can send a new turn, which cancels the stuck one", ({ page, request }) => newTurnCancelsStuckTurn({ page, request }));
  test("the subagent threads of a stuck turn a new message cancels read interrupted, after a reload too", ({ page, request }) => stuckTurnThreadsEndInterrupted({ page, request }));
  test("Cancel ends the stuck turn and the user can go on", ({ page, request }) => cancelEndsStuckTurn({ page, request }));
});

test("a graceful shutdown mid-stream shows the turn abandoned", ({ page }) => gracefulShutdownShowsAbandoned({ page }));

// Issue 14, "Framework lifecycles" and "Page lifecycle" (checks/pagelife.ts).
test.describe("framework and page lifecycles", () => {
  test("StrictMode + three components + a hot reload (a second client, a second copy of the module): one live stream, text once", ({ page, request }) => hmrAdoptsTheEngine({ page, request }));
  test("the same with the tab leader on: one live stream, text once, the lock released on close", ({ page, request }) => hmrWithTabsShareOneLock({ page, request }));
  test("a second copy of the module restores the session the first streams: the same engine, one live stream, text once", ({ page, request }) => hmrRestoreAdopts({ page, request }));
});

test.describe("page lifecycle: a connection that died silently while the page was away", () => {
  test("freeze / resume (CDP) mid-stream: the turn completes at once, text once", ({ page, context, request }) => freezeResumeCompletes({ page, context, request }));
  test("offline / online (CDP) mid-stream: the turn completes at once, text once", ({ page, context, request }) => offlineOnlineCompletes({ page, context, request }));
  test("a stalled read: the watchdog aborts it and resubscribes, text once", ({ page, request }) => stalledReadResubscribes({ page, request }));
});
