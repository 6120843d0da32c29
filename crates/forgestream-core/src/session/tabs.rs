//! One live connection per session per origin (issue 14): the rules by which tabs share it.
//!
//! Every tab of an origin that follows a session runs its own engine. With [`Role::Leader`] or
//! [`Role::Follower`] set (the executor holds, or waits for, a Web Lock per session), only the
//! leader opens subscribes; a follower's subscribe becomes a *relay*: the engine emits
//! [`TabEffect::Follow`] instead of a request and applies the frames the leader relays
//! ([`TabInput::Relayed`]) exactly as it applies an `EventSource` frame, so every tab's view is
//! the same and each keeps its own cursor. The rules:
//!
//! - **Relaying.** Every numbered frame an engine applies from its own live stream (the leader's
//!   subscribe, or any tab's create-turn stream) is relayed ([`TabEffect::Relay`]) while a
//!   follower was heard ([`TabInput::FollowerHeard`]) within [`FOLLOWER_TTL_MS`]; otherwise it
//!   is kept in the engine, and when a follower is heard again the kept frames are handed to the
//!   executor ([`TabEffect::Keep`], to answer replays) and the newest is relayed, so a follower
//!   that missed frames sees the gap and asks for them. A solo engine relays nothing. (Relaying
//!   each frame cost a tab alone on its session ≈100 ms a second of `postMessage` at 2,000
//!   frames/s, and handing it to the executor ≈60 ms more: issue 19, W3.)
//! - **Applying a relayed frame.** Only on an open relay, only for the turn the relay follows:
//!   at or below the cursor it is ignored (a duplicate: replays and takeovers overlap); the next
//!   number is applied; a number past the next (a gap) is not applied — the engine asks once for
//!   the frames after its cursor ([`TabEffect::Follow`] again: the executor feeds them from the
//!   frames it kept, or asks the leader to replay). When no tab has them — the leader answers
//!   that its replay starts later ([`TabInput::ReplayShort`]: it keeps only the last 256 KiB of
//!   a long turn), or the gap is still open [`REPLAY_WAIT_MS`] later — the follower subscribes
//!   to the turn itself from its cursor (the server replays its buffer, deltas included:
//!   PROTOCOL §4) and goes back to the relay once its cursor has reached the newest relayed
//!   frame. Why not rebuild from the listings: they hold no deltas, so a reply still streaming
//!   is not in them — a tab opened 10 s into a long reply showed no text until the reply ended,
//!   then `liveUnavailable` (a session-28 trial).
//! - **Takeover.** [`Role::Leader`] on a follower closes its relay and resubscribes at once from
//!   its own cursor (after frames came through the relay the connection machine checks the turn
//!   first, as for every resubscribe; before, the machine still waits for its subscribe's answer
//!   and a real subscribe is sent in the relay's place — what a page's first leader does);
//!   [`Role::Follower`] on a leader closes its subscribe (or its create-turn stream, once
//!   `turn.created` named the turn: before, that stream is the only way to learn it) and follows
//!   the relay from its cursor; the connection machine is not told (to it the stream goes on).
//! - **Lease.** A leader emits [`TabEffect::Heartbeat`] every [`HEARTBEAT_MS`] while a follower
//!   was heard within [`FOLLOWER_TTL_MS`] (followers answer each heartbeat, so beats go on for as
//!   long as one is there); a follower that has heard nothing from a leader (no heartbeat, no
//!   relayed frame) for the lease the last heartbeat gave ([`DEFAULT_LEASE_MS`] until one says
//!   otherwise) emits [`TabEffect::Steal`] (the executor first probes — a live leader answers
//!   with a heartbeat at once, and counts the probe as a follower heard — and takes the lock with
//!   `steal: true` only when no answer came: a frozen tab keeps its lock), and again after each
//!   further lease until it leads. A leader alone on its session beats once, when it takes the
//!   lead (the followers of a leader it replaced answer that beat), then not at all: each beat
//!   is a `BroadcastChannel` message, whose cost on a busy page is a wake-up of another thread
//!   or process (≈ 1 ms of the main thread per beat in W3, 4 a second); a tab that starts
//!   following announces itself (a replay request, or the probe when its first lease ends) and
//!   the beats start then.
use alloc::string::String;
use alloc::vec::Vec;

use super::kept_frames::KeptFrames;
use super::{Effect, RequestId, RunStep, Session};
use crate::resume::{self, ConnectionStatus};

/// A leader's heartbeat period while a follower listens ([`FOLLOWER_TTL_MS`]), ms.
pub const HEARTBEAT_MS: u64 = 250;
/// How long a follower waits for a sign of the leader before it steals the lock, ms, unless the
/// leader's heartbeat names another lease ([`TabInput::LeaderSeen`]).
pub const DEFAULT_LEASE_MS: u64 = 1000;
/// Bounds of a lease named by a heartbeat, ms.
pub const LEASE_RANGE_MS: (u64, u64) = (HEARTBEAT_MS, 60_000);
/// How long a follower waits for the frames of a gap before it rebuilds from the listings, ms.
pub const REPLAY_WAIT_MS: u64 = 2000;
/// A leader relays its frames while a follower was heard within this long, ms: several
/// heartbeats of a hidden leader (whose timers the browser clamps to ≥ 1 s), each of which a
/// follower answers.
pub const FOLLOWER_TTL_MS: u64 = 5_000;
/// How long a follower's relay stays open while the leader's heartbeats say its live stream is
/// not (it reconnects, or the server is down), ms: then the relay is cut as the leader's stream
/// was, and this tab reconnects on its own pace (reading the turn, then following the relay
/// again) — its badge says `reconnecting` with the leader's instead of `live` until the idle
/// watchdog (45 s: a trial saw two tabs disagree that long after the server was killed). Long
/// enough for a leader's ordinary reconnect (a read and a subscribe) to pass unnoticed.
pub const LEADER_QUIET_MS: u64 = 2_000;
/// How often a leader whose live stream is gone (412) tells the followers again, ms.
pub const GONE_REPEAT_MS: u64 = 1_000;

/// This engine's part among the tabs of its origin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Role {
    /// No sharing (Web Locks or `BroadcastChannel` missing, or `followOtherTabs: false`): the
    /// engine opens its own subscribes, as every tab did before issue 14.
    #[default]
    Solo,
    /// Holds the session's lock: opens the live stream and relays its frames.
    Leader,
    /// Waits for the lock: follows the leader's relayed frames instead of subscribing.
    Follower,
}

impl Role {
    /// `"solo"` / `"leader"` / `"follower"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Solo => "solo",
            Role::Leader => "leader",
            Role::Follower => "follower",
        }
    }
}

/// What the executor tells the engine about the other tabs ([`Input::Tab`](super::Input::Tab)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TabInput<'a> {
    /// The executor got the lock ([`Role::Leader`]), lost it or waits for it
    /// ([`Role::Follower`]), or shares nothing ([`Role::Solo`]).
    Role(Role),
    /// A frame another tab relayed (its [`TabEffect::Relay`]), or one the executor kept and
    /// feeds again after a [`TabEffect::Follow`].
    Relayed {
        /// The frame's turn.
        turn_id: &'a str,
        /// Its sequence number (`id:`).
        sequence_number: u64,
        /// Its `data`.
        data: &'a str,
    },
    /// A leader's heartbeat: it promises the next sign of life within `lease_ms` (a hidden
    /// leader, whose timers the browser clamps, names a longer lease).
    LeaderSeen {
        /// ms; clamped to [`LEASE_RANGE_MS`].
        lease_ms: u64,
        /// The leader's live stream is open: the heartbeat is the relay's liveness, as a
        /// server's comment is a stream's. While the leader reconnects (or gave up) it is not,
        /// and a follower's relay goes silent, so its idle watchdog sees what the leader sees
        /// instead of showing `live` for as long as the leader's heartbeats come.
        streaming: bool,
    },
    /// Another tab following this session spoke (it answered a heartbeat, probed for a
    /// leader, or asked for a replay): relay frames for the next [`FOLLOWER_TTL_MS`].
    FollowerHeard,
    /// The leader's followed turn ended (its [`TabEffect::Ended`]): a follower still
    /// following `turn_id` through the relay reads the turn (ended → rebuilt from the
    /// listings, as a follower's own cancel does; still running → the relay goes on).
    TurnEnded {
        /// The turn.
        turn_id: &'a str,
    },
    /// The leader's subscribe to `turn_id` was answered 412 (its [`TabEffect::LiveGone`]): a
    /// follower following it through the relay handles it as its own subscribe's 412 —
    /// rebuilt from the listings, then `done` or `liveUnavailable`, as the leader shows.
    LiveGone {
        /// The turn.
        turn_id: &'a str,
    },
    /// The leader answered this tab's replay request for `turn_id` without the frame right
    /// after the cursor asked for (it kept only a tail, or nothing): a follower still waiting
    /// for that gap subscribes itself from its cursor at once instead of after
    /// [`REPLAY_WAIT_MS`].
    ReplayShort {
        /// The turn.
        turn_id: &'a str,
    },
}

/// What the engine asks the executor to do about the other tabs
/// ([`Effect::Tab`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TabEffect {
    /// Send this frame of this engine's own live stream to the other tabs (and keep it, to
    /// answer a replay).
    Relay {
        /// The frame's turn.
        turn_id: String,
        /// Its sequence number.
        sequence_number: u64,
        /// Its `data`.
        data: String,
    },
    /// Keep these frames of `turn_id` (oldest first, contiguous) beside the relayed ones, to
    /// answer replays: the engine kept them while no follower listened.
    Keep {
        /// The frames' turn.
        turn_id: String,
        /// `(sequence_number, data)`, ascending by one.
        frames: Vec<(u64, String)>,
    },
    /// Follow `turn_id` through the relay: feed the frames after `after` already kept (as
    /// [`TabInput::Relayed`], in order, on a later task), and ask the leader to replay those it
    /// has beyond them; then keep feeding relayed frames.
    Follow {
        /// The turn.
        turn_id: String,
        /// The follower's cursor (exclusive).
        after: u64,
    },
    /// Tell the followers that the turn this leader followed ended. Why: a turn can end
    /// without a frame to relay — a cancel is confirmed by reading the turn and rebuilding it
    /// from the listings (whose events carry no sequence numbers), before or instead of the
    /// stream's `turn.done` — and a follower that never sees the end shows `live` for good
    /// (the leader's heartbeats keep its relay alive).
    Ended {
        /// The turn.
        turn_id: String,
    },
    /// Tell the followers that the live stream of the turn this leader follows is gone (its
    /// subscribe was answered 412). Why: the leader rebuilds the turn from the listings, whose
    /// events carry no sequence numbers and are not relayed, and ends `liveUnavailable`; a
    /// follower that is not told shows `live` for as long as the leader's heartbeats come (a
    /// new-user trial: 75 s and more, Send disabled).
    LiveGone {
        /// The turn.
        turn_id: String,
    },
    /// Tell the followers this leader is alive (and the lease it promises).
    Heartbeat {
        /// Its live stream is open ([`TabInput::LeaderSeen::streaming`]).
        streaming: bool,
    },
    /// The leader said nothing for a lease: take the lock with `steal: true`.
    Steal,
}

/// The engine's tab state.
#[derive(Debug, Default)]
pub(super) struct Tabs {
    pub(super) role: Role,
    /// The follower's open relay (a pseudo-request: [`RunStep::Subscribe`] with no request).
    relay: Option<RequestId>,
    /// A gap was seen at this time and the frames after the cursor asked for.
    replay_asked_ms: Option<u64>,
    /// The newest sequence number relayed past a gap (where a subscribe past it must reach).
    gap_newest: u64,
    /// The last sign of the leader (or when this engine became a follower).
    leader_seen_ms: u64,
    /// Since when the leader's heartbeats say its live stream is not open (`None`: it is, or a
    /// frame came since): see [`LEADER_QUIET_MS`].
    leader_quiet_since_ms: Option<u64>,
    /// A leader in `liveUnavailable` tells the followers again from this time on
    /// ([`GONE_REPEAT_MS`]).
    next_gone_ms: u64,
    lease_ms: u64,
    next_heartbeat_ms: u64,
    /// A relayed frame is being applied (not to be relayed again).
    pub(super) applying_relayed: bool,
    /// When a follower was last heard ([`TabInput::FollowerHeard`]).
    follower_seen_ms: Option<u64>,
    /// The frames not relayed because no follower was heard.
    kept: KeptFrames,
}

impl Tabs {
    /// The earliest time the tab rules have work (a heartbeat, a lease end, a replay wait).
    pub(super) fn poll_timeout(&self) -> Option<u64> {
        let role = match self.role {
            Role::Solo => None,
            // No timer for a beat nobody would hear (see the module's "Lease").
            Role::Leader => Some(self.next_heartbeat_ms).filter(|&at| self.follower_listens(at)),
            Role::Follower => Some(self.leader_seen_ms.saturating_add(self.lease())),
        };
        let replay = self
            .replay_asked_ms
            .filter(|_| self.relay.is_some())
            .map(|at| at.saturating_add(REPLAY_WAIT_MS));
        match (role, replay) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether a follower was heard within [`FOLLOWER_TTL_MS`] of `now`.
    fn follower_listens(&self, now: u64) -> bool {
        self.follower_seen_ms
            .is_some_and(|at| now.saturating_sub(at) <= FOLLOWER_TTL_MS)
    }

    fn lease(&self) -> u64 {
        if self.lease_ms == 0 {
            DEFAULT_LEASE_MS
        } else {
            self.lease_ms
        }
    }
}

impl Session {
    /// This engine's role among the tabs.
    pub fn role(&self) -> Role {
        self.tabs.role
    }

    /// The open relay's pseudo-request, if the run still has it open.
    fn relay_open(&self) -> Option<RequestId> {
        let relay = self.tabs.relay?;
        (self.run.as_ref()?.open == Some((relay, RunStep::Subscribe))).then_some(relay)
    }

    /// Whether a subscribe of this engine is to follow the relay instead of the network (not a
    /// follower's subscribe past a gap no tab could replay).
    pub(super) fn subscribes_by_relay(&self) -> bool {
        self.tabs.role == Role::Follower && !self.subscribes_past_gap()
    }

    /// Whether this follower reads the live stream itself past a gap (`Run::gap_subscribe`).
    pub(super) fn subscribes_past_gap(&self) -> bool {
        self.run.as_ref().is_some_and(|r| r.gap_subscribe.is_some())
    }

    /// A follower's subscribe: open the relay after `after` (the machine sees a live stream).
    pub(super) fn open_relay(&mut self, turn_id: String, after: u64) {
        self.abort_run_request();
        let id = self.next_request;
        self.next_request += 1;
        self.requests
            .push((id, super::Purpose::Run(RunStep::Subscribe)));
        if let Some(run) = self.run.as_mut() {
            run.open = Some((id, RunStep::Subscribe));
        }
        self.tabs.relay = Some(id);
        self.tabs.replay_asked_ms = None;
        self.tabs.gap_newest = 0;
        self.tabs.leader_quiet_since_ms = None;
        // The badge says `connecting` until the first relayed frame (a frame implies the open
        // stream to the machine): until then a takeover can swap in a real subscribe unseen.
        self.effects
            .push_back(Effect::Tab(TabEffect::Follow { turn_id, after }));
        // The machine subscribes only once the turn's state is known (it still runs): what a
        // `resume` / `restore` waits for, as a subscribe's answer would tell it.
        self.check_finished();
    }

    /// Relays a frame this engine applies from its own stream (not a relayed one).
    pub(super) fn relay_frame(&mut self, turn_id: &str, seq: Option<u64>, data: &str) {
        if self.tabs.role == Role::Solo || self.tabs.applying_relayed {
            return;
        }
        if self.tabs.role == Role::Follower && self.subscribes_past_gap() {
            // Frames the other tabs have seen already (the leader relays the live ones).
            return;
        }
        let Some(sequence_number) = seq else {
            return;
        };
        if self.tabs.follower_listens(self.now_ms) {
            self.effects.push_back(Effect::Tab(TabEffect::Relay {
                turn_id: String::from(turn_id),
                sequence_number,
                data: String::from(data),
            }));
        } else {
            self.tabs.kept.push(turn_id, sequence_number, data);
        }
    }

    /// Hands the kept frames to the executor; with `relay_newest`, the newest goes as a relay
    /// (a follower that missed frames sees the gap and asks for a replay).
    fn hand_over_kept(&mut self, relay_newest: bool) {
        let Some((turn_id, mut frames)) = self.tabs.kept.take() else {
            return;
        };
        let newest = if relay_newest { frames.pop() } else { None };
        if !frames.is_empty() {
            self.effects.push_back(Effect::Tab(TabEffect::Keep {
                turn_id: turn_id.clone(),
                frames,
            }));
        }
        if let Some((sequence_number, data)) = newest {
            self.effects.push_back(Effect::Tab(TabEffect::Relay {
                turn_id,
                sequence_number,
                data,
            }));
        }
    }

    pub(super) fn on_tab(&mut self, input: TabInput<'_>) {
        let now = self.now_ms;
        match input {
            TabInput::Role(role) => self.set_role(role),
            TabInput::LeaderSeen {
                lease_ms,
                streaming,
            } => {
                self.tabs.leader_seen_ms = now;
                self.tabs.lease_ms = lease_ms.clamp(LEASE_RANGE_MS.0, LEASE_RANGE_MS.1);
                if streaming {
                    self.tabs.leader_quiet_since_ms = None;
                    if self.relay_open().is_some() {
                        // The leader is alive: the relay is not a silent stream.
                        self.feed_conn(resume::Input::Comment);
                    }
                } else if self.relay_open().is_some() {
                    let since = *self.tabs.leader_quiet_since_ms.get_or_insert(now);
                    if now.saturating_sub(since) >= LEADER_QUIET_MS {
                        self.tabs.leader_quiet_since_ms = None;
                        // The leader's stream is gone for longer than a reconnect takes: so
                        // is this relay's (the machine backs off and reads the turn itself).
                        self.close_relay(resume::Input::NetworkError);
                    }
                }
            }
            TabInput::Relayed {
                turn_id,
                sequence_number,
                data,
            } => {
                self.tabs.leader_seen_ms = now;
                self.tabs.leader_quiet_since_ms = None;
                self.on_relayed(turn_id, sequence_number, data);
            }
            TabInput::FollowerHeard => {
                let lapsed = !self.tabs.follower_listens(now);
                self.tabs.follower_seen_ms = Some(now);
                if lapsed {
                    self.hand_over_kept(true);
                }
            }
            TabInput::LiveGone { turn_id } => {
                if self.follows_by_relay(turn_id) {
                    self.tabs.leader_seen_ms = now;
                    // The relay closes as a subscribe answered 412 would.
                    self.close_relay(resume::Input::LiveGone);
                }
            }
            TabInput::ReplayShort { turn_id } => {
                if self.tabs.replay_asked_ms.is_some() && self.follows_by_relay(turn_id) {
                    self.tabs.leader_seen_ms = now;
                    self.subscribe_past_gap();
                }
            }
            TabInput::TurnEnded { turn_id } => {
                if self.follows_by_relay(turn_id) {
                    self.tabs.leader_seen_ms = now;
                    // Read the turn, as after this tab's own cancel: ended → rebuilt and
                    // settled; still running (a stale message) → the relay goes on.
                    self.feed_conn(resume::Input::CheckTurn);
                } else if self.run_turn_is(turn_id)
                    && self.connection().status == Some(&ConnectionStatus::LiveUnavailable)
                {
                    // This tab's relay closed when the live stream went (412): it shows the
                    // turn `running`, "live stream unavailable", and no frame will say it ended
                    // (a trial: for as long as the tab stayed open, after the leader's Cancel).
                    // Read it again, as the banner's Refresh does: ended → rebuilt → `done`.
                    self.feed_conn(resume::Input::Refresh);
                }
            }
        }
    }

    /// Whether the open relay follows `turn_id`.
    fn follows_by_relay(&self, turn_id: &str) -> bool {
        self.relay_open().is_some() && self.run_turn_is(turn_id)
    }

    /// Whether this engine's run is on `turn_id`.
    fn run_turn_is(&self, turn_id: &str) -> bool {
        self.run
            .as_ref()
            .is_some_and(|r| r.turn_id.as_deref() == Some(turn_id))
    }

    /// The leader's subscribe was answered 412: the followers are told
    /// ([`TabEffect::LiveGone`]).
    pub(super) fn tell_live_gone(&mut self) {
        self.tell_followers(|turn_id| TabEffect::LiveGone { turn_id });
    }

    /// The run's turn ended (`done`): a leader tells the followers, who may never get a
    /// relayed `turn.done` ([`TabEffect::Ended`]).
    pub(super) fn tell_turn_ended(&mut self) {
        self.tell_followers(|turn_id| TabEffect::Ended { turn_id });
    }

    /// A leader tells the followers something about the turn its run follows.
    fn tell_followers(&mut self, effect: fn(String) -> TabEffect) {
        if self.tabs.role != Role::Leader {
            return;
        }
        if let Some(turn_id) = self.run.as_ref().and_then(|r| r.turn_id.clone()) {
            self.effects.push_back(Effect::Tab(effect(turn_id)));
        }
    }

    fn on_relayed(&mut self, turn_id: &str, seq: u64, data: &str) {
        if let Some(newest) = self
            .run
            .as_mut()
            .filter(|r| r.turn_id.as_deref() == Some(turn_id))
            .and_then(|r| r.gap_subscribe.as_mut())
        {
            // Past a gap on its own subscribe: only where the relay has got to matters.
            *newest = (*newest).max(seq);
            self.rejoin_relay();
            return;
        }
        let Some(id) = self.relay_open() else {
            return;
        };
        let Some(run) = self.run.as_ref() else {
            return;
        };
        if run.turn_id.as_deref() != Some(turn_id) {
            return;
        }
        let cursor = run.conn.cursor().unwrap_or(0);
        if seq <= cursor {
            return;
        }
        if seq > cursor.saturating_add(1) {
            self.tabs.gap_newest = self.tabs.gap_newest.max(seq);
            if self.tabs.replay_asked_ms.is_none() {
                self.tabs.replay_asked_ms = Some(self.now_ms);
                self.effects.push_back(Effect::Tab(TabEffect::Follow {
                    turn_id: String::from(turn_id),
                    after: cursor,
                }));
            }
            return;
        }
        self.tabs.replay_asked_ms = None;
        self.tabs.applying_relayed = true;
        self.on_relayed_frame(id, seq, data);
        self.tabs.applying_relayed = false;
    }

    fn set_role(&mut self, role: Role) {
        let old = core::mem::replace(&mut self.tabs.role, role);
        let now = self.now_ms;
        if role != Role::Leader {
            // What this tab kept as leader answers replays should it lead again.
            self.hand_over_kept(false);
        }
        match role {
            Role::Follower => {
                self.tabs.leader_seen_ms = now;
                if let Some(run) = self.run.as_ref().filter(|_| self.relay_open().is_some()) {
                    // Told again (the executor's handler is new): ask again for what the relay
                    // has not brought yet.
                    let turn_id = run.turn_id.clone().unwrap_or_default();
                    let after = run.conn.cursor().unwrap_or(0);
                    self.effects
                        .push_back(Effect::Tab(TabEffect::Follow { turn_id, after }));
                }
                let relay = self.tabs.relay;
                let own_stream = self.run.as_ref().is_some_and(|r| {
                    r.gap_subscribe.is_none()
                        && r.conn.is_stream_open()
                        && r.open.is_some_and(|(id, step)| match step {
                            RunStep::Subscribe => Some(id) != relay,
                            // A create stream whose turn is known already: the relay brings
                            // the rest (before `turn.created` it is the only way to the turn).
                            RunStep::Post => r.turn_id.is_some(),
                            _ => false,
                        })
                });
                if own_stream {
                    // Another tab leads now: close this stream and follow the relay from the
                    // cursor. The machine is not told: to it the stream goes on.
                    self.abort_run_request();
                    let (turn_id, after) = self
                        .run
                        .as_ref()
                        .map(|r| (r.turn_id.clone().unwrap_or_default(), r.conn.cursor()))
                        .unwrap_or_default();
                    self.open_relay(turn_id, after.unwrap_or(0));
                }
            }
            Role::Leader | Role::Solo => {
                self.tabs.next_heartbeat_ms = now.saturating_add(HEARTBEAT_MS);
                if role == Role::Leader && old != Role::Leader {
                    // A new leader says so at once, heard or not: the followers of the one it
                    // replaced (which beat while they answered) learn its lease and answer it,
                    // so the beats go on without waiting for their leases to run out and
                    // probe. Alone, nobody answers and this is its only message.
                    self.beat(now);
                }
                if let Some(run) = self.run.as_mut() {
                    // Its own subscribe, if open, is the session's live stream now.
                    run.gap_subscribe = None;
                }
                // Takeover: the relay ends, and this engine subscribes from its own cursor.
                self.subscribe_instead_of_relay();
            }
        }
        if old != role {
            self.dirty = true;
        }
    }

    /// A leader's heartbeat (whether its own live stream is open), and, while that stream stays
    /// gone (412), the followers told so again about once a second: a follower that was between
    /// two reconnect attempts when it was first told (its relay cut while the server was down)
    /// follows the relay again and would otherwise wait for frames that never come — a
    /// re-check saw it read "reconnecting" for 30–90 s after a server restart.
    fn beat(&mut self, now: u64) {
        let streaming = self.run.as_ref().is_some_and(|r| r.conn.is_stream_open());
        self.effects
            .push_back(Effect::Tab(TabEffect::Heartbeat { streaming }));
        if now >= self.tabs.next_gone_ms
            && self.tabs.follower_listens(now)
            && self.connection().status == Some(&ConnectionStatus::LiveUnavailable)
        {
            self.tabs.next_gone_ms = now.saturating_add(GONE_REPEAT_MS);
            self.tell_live_gone();
        }
    }

    /// The tab rules' deadlines passed: heartbeat, steal, or give up waiting for a replay.
    pub(super) fn on_tab_timer(&mut self) {
        let now = self.now_ms;
        match self.tabs.role {
            Role::Solo => {}
            Role::Leader => {
                // Alone (no follower heard within FOLLOWER_TTL_MS): no beat, and `poll_timeout`
                // arms no timer for one, until a follower speaks. The deadline moves on whether
                // or not a beat goes: one left due would be due again at once (a timer loop,
                // when the follower lapsed between the deadline and its tick).
                if now >= self.tabs.next_heartbeat_ms {
                    self.tabs.next_heartbeat_ms = now.saturating_add(HEARTBEAT_MS);
                    if self.tabs.follower_listens(now) {
                        self.beat(now);
                    }
                }
            }
            Role::Follower => {
                if now >= self.tabs.leader_seen_ms.saturating_add(self.tabs.lease()) {
                    // Asked again only after another lease without a leader.
                    self.tabs.leader_seen_ms = now;
                    self.effects.push_back(Effect::Tab(TabEffect::Steal));
                }
            }
        }
        let waited = self
            .tabs
            .replay_asked_ms
            .is_some_and(|at| now >= at.saturating_add(REPLAY_WAIT_MS));
        if waited && self.relay_open().is_some() {
            // No tab replayed the gap (a leader of an older version says nothing when it has
            // no frames to give).
            self.subscribe_past_gap();
        }
    }

    /// No tab can replay the frames between this follower's cursor and the relay's: it reads
    /// the turn's live stream itself from its cursor until it has caught up with the relay
    /// ([`Self::rejoin_relay`]).
    fn subscribe_past_gap(&mut self) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        run.gap_subscribe = Some(self.tabs.gap_newest);
        self.subscribe_instead_of_relay();
    }

    /// Swaps the open relay, if any, for a real subscribe from this engine's cursor.
    fn subscribe_instead_of_relay(&mut self) {
        let Some(id) = self.relay_open() else {
            return;
        };
        let streamed = self
            .run
            .as_ref()
            .is_some_and(|r| r.status == ConnectionStatus::Live);
        let cursor = self.run.as_ref().and_then(|r| r.conn.cursor());
        if let Some(run) = self.run.as_mut() {
            run.open = None;
        }
        self.take_request(id);
        self.tabs.relay = None;
        self.tabs.replay_asked_ms = None;
        if streamed {
            // The relay's stream ends: the machine checks the turn and subscribes from this
            // engine's own cursor.
            self.feed_conn(resume::Input::Eof);
        } else {
            // Nothing came through the relay yet: the machine still waits for its subscribe's
            // answer, which a real subscribe now gives.
            self.run_command(resume::Command::Subscribe {
                after: cursor.unwrap_or(0),
            });
        }
    }

    /// A follower's subscribe past a gap has caught up (its cursor reached the newest relayed
    /// frame): it closes and the relay is followed again from the cursor — one live stream per
    /// session again. Called after each read of that subscribe and each relayed frame.
    pub(super) fn rejoin_relay(&mut self) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        let Some(newest) = run.gap_subscribe else {
            return;
        };
        if self.tabs.role != Role::Follower {
            run.gap_subscribe = None;
            return;
        }
        let cursor = run.conn.cursor().unwrap_or(0);
        let reading =
            run.conn.is_stream_open() && matches!(run.open, Some((_, RunStep::Subscribe)));
        if newest == 0 || cursor < newest || !reading {
            return;
        }
        run.gap_subscribe = None;
        let turn_id = run.turn_id.clone().unwrap_or_default();
        // Closes the subscribe (the machine is not told: to it the stream goes on).
        self.open_relay(turn_id, cursor);
    }

    /// Closes the open relay and tells the connection machine why (`input`: how its stream
    /// ended), which decides what comes next.
    fn close_relay(&mut self, input: resume::Input) {
        if let Some(run) = self.run.as_mut() {
            run.open = None;
        }
        if let Some(id) = self.tabs.relay.take() {
            self.take_request(id);
        }
        self.tabs.replay_asked_ms = None;
        self.feed_conn(input);
    }
}

#[cfg(test)]
#[path = "tabs_tests.rs"]
mod tests;
