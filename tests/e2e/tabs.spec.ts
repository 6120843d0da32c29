import { test } from "@playwright/test";
import { turnsMadeElsewhere } from "./checks/elsewhere";
import { eightSessionsAllStream, eightTabsOneStream, followerCancelsSameText, lateTabCancelsWhileCatchingUp, forgottenInAnotherTab, leaderCancels, leaderLiveStreamGone, leaderClosedMidStream, lateTabShowsALongReply, leaderFrozenMidStream, serverDownBothTabsReconnect, soloLeaderPostsNothing, stuckTurnEndsInBothTabs, twoTabs } from "./checks/tabs";

// The checks live in checks/tabs.ts so that firefox.spec.ts runs the same code in Firefox.
test("two tabs on one session show the same final text", ({ context, request }) => twoTabs({ context, request }));
test("a session forgotten in one tab closes in the other, with a notice", ({ context, request }) => forgottenInAnotherTab({ context, request }));
test("a tab opened late in a long reply shows it live from its start, then follows the leader again", ({ context, request }) => lateTabShowsALongReply({ context, request }));
test("a late tab on a slow link cancels while it still catches up: both tabs keep the same stopped text", ({ context, request }) => lateTabCancelsWhileCatchingUp({ context, request }));
test("8 tabs on one session: one live stream at a time, all 8 transcripts equal the persisted text", ({ context, request }) => eightTabsOneStream({ context, request }));
test("the leader tab closes mid-stream: a follower takes over from its cursor, text intact", ({ context, request }) => leaderClosedMidStream({ context, request }));
// Chromium only: freezing a page is a CDP command (`Page.setWebLifecycleState`).
test("the leader tab is frozen mid-stream: a follower steals the lock after the lease, text intact", ({ context, request }) => leaderFrozenMidStream({ context, request }));
test("a tab alone on its session posts nothing on the channel (no frames, no heartbeats); a follower heard gets both from then on", ({ context, request }) => soloLeaderPostsNothing({ context, request }));
test("8 tabs on 8 different sessions all stream a turn to done; no idle tab holds a connection", ({ context, request }) => eightSessionsAllStream({ context, request }));
test("the leader tab cancels: the follower shows the turn cancelled too (no turn.done frame to relay)", ({ context, request }) => leaderCancels({ context, request }));
test("a follower presses Cancel mid-reply: both tabs end cancelled with the same stopped text", ({ context, request }) => followerCancelsSameText({ context, request }));
test("the leader's live stream is gone (412): the follower shows it too and may send", ({ context, request }) => leaderLiveStreamGone({ context, request }));
test("the leader cancels a turn whose live stream is gone: the follower shows it cancelled too", ({ context, request }) => stuckTurnEndsInBothTabs("cancel")({ context, request }));
test("the leader sends over a turn whose live stream is gone: the follower shows it cancelled and the new turn done", ({ context, request }) => stuckTurnEndsInBothTabs("send")({ context, request }));
test("the server goes down mid-stream: the follower reads reconnecting with the leader within seconds, and both finish with the server's text", ({ context, request }) => serverDownBothTabsReconnect({ context, request }));
test("turns another browser made show on a return to the page, and a message refused for one waiting there brings its approval card", ({ page, request }) => turnsMadeElsewhere({ page, request }));
