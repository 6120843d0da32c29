//! The hot path: one network read → SSE parser → reducer → connection machine, frames borrowed
//! from the read (a frame inside it is never copied; a text delta is appended to its message
//! straight from the read's bytes).
use alloc::format;
use alloc::string::String;

use super::frame_log::{self, Envelope};
use super::{ErrorCode, RequestId, RunStep, Session, SessionError, Settled, StorageEffect};
use crate::resume;
use crate::session::checkpoint::is_valid_id;
use crate::sse::SseItemRef;
use crate::wire;

impl Session {
    fn is_open_stream(&self, id: RequestId) -> bool {
        matches!(self.run_step(id), Some(RunStep::Post | RunStep::Subscribe))
    }

    pub(super) fn on_bytes(&mut self, id: RequestId, bytes: &[u8]) {
        if !self.is_open_stream(id) {
            return;
        }
        if !bytes.is_empty() {
            // Bytes are liveness even when they complete no frame: a frame arriving more
            // slowly than the idle timeout is not a silent stream.
            if let Some(run) = self.run.as_mut() {
                run.conn.handle(resume::Input::BytesArrived, self.now_ms);
            }
        }
        // The parser leaves the run for the call so the callback can borrow the whole engine;
        // nothing in `apply_item` replaces the run (the machine's commands run afterwards).
        let Some(mut parser) = self.run.as_mut().and_then(|r| r.parser.take()) else {
            return;
        };
        let now = self.now_ms;
        let parsed = parser.feed_with(bytes, |item| self.apply_item(item, now));
        if let Some(run) = self.run.as_mut() {
            run.parser = Some(parser);
        }
        if let Err(e) = parsed {
            // Items before and after the oversize frame were applied; the parser skipped it.
            self.warn("protocol", format!("{e}"));
        }
        // After the read, not inside it: closing the subscribe resets its parser.
        self.rejoin_relay();
    }

    /// A 2xx stream response's head: the live stream, or — not an event stream — a failure at
    /// once naming what came back (the connection machine then aborts the request).
    pub(super) fn on_stream_head(
        &mut self,
        id: RequestId,
        status: u16,
        content_type: Option<&str>,
        redirected: bool,
    ) {
        if self.is_open_stream(id) {
            if let Err(e) = crate::sse::check_event_stream(status, content_type, redirected) {
                self.cause = Some(SessionError {
                    code: ErrorCode::InvalidResponse,
                    message: format!("{e}"),
                    retryable: false,
                    status: Some(status),
                });
                self.feed_conn(resume::Input::InvalidResponse);
                return;
            }
        }
        self.on_stream_opened(id, status);
    }

    /// One `EventSource` message. `last_event_id` is this frame's id (TrueForge sends one with
    /// every frame).
    pub(super) fn on_frame(&mut self, id: RequestId, data: &str, last_event_id: &str) {
        if !self.is_open_stream(id) {
            return;
        }
        let now = self.now_ms;
        // The browser parsed the frame whole; the same cap as the fetch transport's parser keeps
        // it out of the reducer (a 100 MB frame would otherwise be applied whole).
        if data.len() > self.config.max_frame_bytes {
            let e = crate::sse::SseError::FrameTooLarge {
                limit_bytes: self.config.max_frame_bytes,
            };
            self.warn("protocol", format!("{e}"));
            // Its number counts as processed (as a malformed frame's does), so the next frame
            // is no gap.
            let seq = self.sequence_number(last_event_id);
            if let Some(run) = self.run.as_mut() {
                run.conn.handle(
                    resume::Input::Event {
                        sequence_number: seq,
                        turn_done: false,
                    },
                    now,
                );
            }
            return;
        }
        let seq = self.sequence_number(last_event_id);
        self.apply_frame(seq, data, now);
        self.rejoin_relay();
    }

    /// A frame relayed by the leading tab (already checked to be the next number of the relay's
    /// turn): applied as an `EventSource` frame is.
    pub(super) fn on_relayed_frame(&mut self, id: RequestId, seq: u64, data: &str) {
        if !self.is_open_stream(id) {
            return;
        }
        if data.len() > self.config.max_frame_bytes {
            let e = crate::sse::SseError::FrameTooLarge {
                limit_bytes: self.config.max_frame_bytes,
            };
            self.warn("protocol", format!("{e}"));
            self.feed_conn(resume::Input::Event {
                sequence_number: Some(seq),
                turn_done: false,
            });
            return;
        }
        let now = self.now_ms;
        self.apply_frame(Some(seq), data, now);
    }

    /// A frame's `id:` as its sequence number; an id that is not one (not an integer in
    /// `0 ..= 2^53 − 1`) is a protocol warning and `None`: the frame is applied but does not
    /// move the cursor (one `id: 18446744073709551615` would otherwise pin it).
    fn sequence_number(&mut self, id: &str) -> Option<u64> {
        match wire::sequence::parse_sequence_number(id) {
            Ok(seq) => seq,
            Err(e) => {
                self.warn("protocol", format!("{e}"));
                None
            }
        }
    }

    fn apply_item(&mut self, item: SseItemRef<'_>, now: u64) {
        match item {
            SseItemRef::Event(event) => {
                let seq = event.id.and_then(|id| self.sequence_number(id));
                self.apply_frame(seq, event.data, now);
            }
            SseItemRef::Comment => self.feed_conn(resume::Input::Comment),
            SseItemRef::Retry(ms) => self.feed_conn(resume::Input::Retry(ms)),
        }
    }

    /// Applies one frame's data to the view and reports it to the machine.
    fn apply_frame(&mut self, seq: Option<u64>, data: &str, now: u64) {
        if data.is_empty() {
            return;
        }
        let Some(run) = self.run.as_mut() else {
            return;
        };
        // Frames after one out of order in the same read: the machine closed the stream.
        if !run.conn.is_stream_open() {
            return;
        }
        // Hot path: the turn id is moved out of the run for this frame and put back below, so
        // a delta costs no string copy.
        let turn_id = match run.turn_id.take() {
            Some(id) => id,
            // A create stream names its turn only in its first event (`turn.created`).
            None => match wire::Event::from_json(data) {
                Ok(wire::Event::TurnCreated(created)) if !is_valid_id(&created.turn_id) => {
                    // `..` as a turn id would make every later URL of the turn another path.
                    self.cause = Some(SessionError {
                        code: ErrorCode::InvalidResponse,
                        message: format!(
                            "turn.created names turn id {:?}, which is not a safe id",
                            shown(&created.turn_id)
                        ),
                        retryable: false,
                        status: None,
                    });
                    self.feed_conn(resume::Input::InvalidResponse);
                    return;
                }
                Ok(wire::Event::TurnCreated(created)) => {
                    let id = created.turn_id;
                    self.turn_discovered(&id, created.previous_turn_id.as_deref());
                    id
                }
                _ => {
                    self.warn(
                        "protocol",
                        String::from("a create stream must start with turn.created; frame ignored"),
                    );
                    return;
                }
            },
        };
        // Read once: the inspector's log and the reducer's hot path share the scan.
        let text = wire::fast::text_delta(data);
        if self.config.inspect {
            let envelope = match &text {
                Some(delta) => Some(Envelope::of_text_delta(delta)),
                None => frame_log::envelope(data),
            };
            self.event_log
                .push_envelope(&turn_id, seq, envelope, data.len(), now);
        }
        // A number past the next one due (PROTOCOL §3: +1 per event, no gaps) is never applied:
        // the frames in between were not seen, so the view would show a hole. The machine's
        // cursor is the last number processed in this run (replays included).
        let cursor = self.run.as_ref().and_then(|r| r.conn.cursor());
        if let (Some(n), Some(c)) = (seq, cursor) {
            if n > c.saturating_add(1) {
                self.warn(
                    "protocol",
                    format!(
                        "sequence gap in turn {turn_id}: expected {}, received {n}; the frame is not applied and the turn is rebuilt from the listings",
                        c.saturating_add(1)
                    ),
                );
                if let Some(run) = self.run.as_mut() {
                    run.turn_id = Some(turn_id);
                    run.conn.handle(resume::Input::OutOfOrder, now);
                }
                return;
            }
        }
        if seq.is_some_and(|n| cursor.is_none_or(|c| n > c)) {
            self.relay_frame(&turn_id, seq, data);
        }
        // Recorded straight into the pending change set (drained by `take_changes`), so a burst
        // of deltas on one message costs no change-set allocation per frame. The turn's flags
        // come back from the reducer's own turn lookup (no extra lookups per frame).
        let is_text_delta = text.is_some();
        let frame = self
            .view
            .apply_live_frame_read(&turn_id, seq, data, text, &mut self.changes);
        if !is_text_delta {
            self.check_replaced(&turn_id);
        }
        if !self.changes.is_empty() {
            self.dirty = true;
        }
        let stepped_back = match (seq, self.run.as_ref()) {
            (Some(n), Some(run)) => run
                .conn
                .stream_sequence_number()
                .is_some_and(|last| n < last),
            _ => false,
        };
        if stepped_back {
            self.warn(
                "protocol",
                format!(
                    "sequence number {} steps back on the open stream; the turn is rebuilt from the listings",
                    seq.unwrap_or_default()
                ),
            );
        }
        let input = match frame.result {
            Ok(()) => {
                let turn_done = frame.after.ended;
                if turn_done && frame.after.capped {
                    self.warn(
                        "protocol",
                        format!(
                            "turn {turn_id} ended with events refused by the event cap; it is rebuilt from the listings"
                        ),
                    );
                    resume::Input::TurnDoneIncomplete
                } else {
                    resume::Input::Event {
                        sequence_number: seq,
                        turn_done,
                    }
                }
            }
            Err(crate::reduce::ReduceError::TextTooLong { .. }) if frame.before.text_limited => {
                // Warned at the first refused delta; the stream goes on (its `turn.done` ends
                // the turn) and what was received stays.
                resume::Input::Event {
                    sequence_number: seq,
                    turn_done: false,
                }
            }
            Err(crate::reduce::ReduceError::EventCapExceeded { .. }) if frame.before.capped => {
                // Warned at the first refused event; the frame still counts as processed.
                resume::Input::Event {
                    sequence_number: seq,
                    turn_done: false,
                }
            }
            Err(e) => {
                self.warn("protocol", format!("{e}"));
                resume::Input::Event {
                    sequence_number: seq,
                    turn_done: false,
                }
            }
        };
        if let Some(run) = self.run.as_mut() {
            run.turn_id = Some(turn_id);
            run.conn.handle(input, now);
            if run.cancel_check_at_ms.is_some() {
                // Frames still come after a cancel (a tab catching up on a slow link reads
                // seconds of them): the turn is read only once they stop.
                run.cancel_check_at_ms = Some(now.saturating_add(super::CANCEL_CHECK_WAIT_MS));
            }
        }
    }

    /// Once the followed turn names the turn it replaced (its `turn.created`'s
    /// `previous_turn_id`): if the view still shows that one running, read it (the interrupt
    /// rule of [`Self::turn_discovered`]). Here too for a turn this engine only attached to —
    /// another tab sent it, over a turn whose live stream was gone: this tab kept the replaced
    /// turn `running` for as long as it stayed open (a trial). Text deltas never name it, so
    /// only other frames look (one turn lookup each, until a previous turn is known), and each
    /// status change of the run (a turn read or rebuilt from the listings, no frame seen).
    pub(super) fn check_replaced(&mut self, turn_id: &str) {
        if self.run.as_ref().is_none_or(|r| r.replaced_checked) {
            return;
        }
        let Some(previous) = self.view.turn(turn_id).and_then(|t| {
            t.previous_turn_id
                .as_ref()
                .map(|p| String::from(p.as_str()))
        }) else {
            return;
        };
        if let Some(run) = self.run.as_mut() {
            run.replaced_checked = true;
        }
        if is_valid_id(&previous) {
            self.check_if_running(&previous);
        }
    }

    /// The new turn's id became known (its `turn.created`, or the effect-recovery lookup):
    /// settle `send()`, record `{turnId, seq: 0}` at once (a reload before the first cursor
    /// checkpoint must still find the turn), point "last session" here, and read the turn it
    /// replaced if the view still shows that one running (interrupt).
    pub(super) fn turn_discovered(&mut self, turn_id: &str, previous: Option<&str>) {
        if let Some(c) = self.run.as_mut().and_then(|r| r.started.take()) {
            self.settle(c, Ok(Settled::Turn(String::from(turn_id))));
        }
        // A lookup after an unknown outcome found the turn: who waited for it learns its id.
        let waiters = self
            .run
            .as_mut()
            .map(|r| core::mem::take(&mut r.outcome_waiters))
            .unwrap_or_default();
        for c in waiters {
            self.settle(c, Ok(Settled::Created(Some(String::from(turn_id)))));
        }
        self.write_checkpoint(Some(String::from(turn_id)), 0);
        self.store(StorageEffect::WritePointer {
            session_id: self.id.clone(),
        });
        if let Some(previous) = previous.filter(|p| is_valid_id(p)) {
            self.check_if_running(previous);
        }
    }
}

/// At most the first 64 bytes of a hostile id, for a message.
fn shown(id: &str) -> &str {
    let mut end = id.len().min(64);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    &id[..end]
}
