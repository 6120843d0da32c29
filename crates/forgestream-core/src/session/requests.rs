//! The active run's requests: the connection machine's commands become effects, and request
//! results become the machine's inputs.
use alloc::format;
use alloc::string::String;

use super::paging::{NextPage, PageGuard};
use super::{
    ErrorCode, Method, Purpose, RequestId, ResponseKind, RunStep, Session, SessionError, Settled,
    Transport, MAX_EVENT_PAGES, MAX_TURN_CHECKS, TURN_CHECK_STEP_MS,
};
use crate::reduce::TurnStatus;
use crate::resume::{self, Command, ConnectionStatus};
use crate::session::Effect;
use crate::wire;

/// Decodes a JSON body: UTF-8 checked once, then read by the hand-written decoder
/// (`wire::json`; the same one as the SSE path's, so the wasm carries each type's decoder once).
pub(super) fn parse_json<T: wire::json::Decode>(body: &[u8]) -> Result<T, String> {
    let text = core::str::from_utf8(body).map_err(|_| String::from("body is not UTF-8"))?;
    wire::json::from_str(text).map_err(|e| format!("{e}"))
}

impl Session {
    /// Carries out every command the connection machine queued.
    pub(super) fn drain_run(&mut self) {
        loop {
            let Some(command) = self.run.as_mut().and_then(|r| r.conn.poll_command()) else {
                return;
            };
            self.run_command(command);
        }
    }

    fn run_request(
        &mut self,
        step: RunStep,
        method: Method,
        url: String,
        last_event_id: Option<u64>,
        body: Option<String>,
        response: ResponseKind,
    ) {
        // At most one request per run: the machine aborted the previous one already; this
        // closes one it could not know about (a rebuild's second page).
        self.abort_run_request();
        let id = self.request(
            Purpose::Run(step),
            method,
            url,
            last_event_id,
            body,
            response,
        );
        if let Some(run) = self.run.as_mut() {
            run.open = Some((id, step));
        }
    }

    pub(super) fn run_command(&mut self, command: Command) {
        let turn_id = self.run.as_ref().and_then(|r| r.turn_id.clone());
        match command {
            Command::PostTurn => {
                let body = self
                    .run
                    .as_mut()
                    .and_then(|r| r.create_body.take())
                    .unwrap_or_else(|| String::from("{}"));
                // Before the POST: a reload before `turn.created` then finds the turn by listing
                // (never a second POST), since nothing else would be stored yet.
                let after = self.run.as_ref().and_then(|r| r.previous_turn_id.clone());
                self.write_creating(after);
                let url = self.config.api.turns(&self.id, "");
                self.run_request(
                    RunStep::Post,
                    Method::Post,
                    url,
                    None,
                    Some(body),
                    ResponseKind::Stream,
                );
            }
            Command::Subscribe { after } => {
                let Some(tid) = turn_id else {
                    // The machine only subscribes after the create stream or a lookup named
                    // the turn; anything else is a bug of ours, shown as one.
                    self.fail_internal("no turn id to subscribe to");
                    return;
                };
                if self.subscribes_by_relay() {
                    // Another tab holds the live stream: follow its relayed frames.
                    self.open_relay(tid, after);
                    return;
                }
                let url = self.config.api.subscribe(&self.id, &tid, after);
                match self.config.transport {
                    Transport::Fetch => {
                        let method = match self.config.api.subscribe_method() {
                            "POST" => Method::Post,
                            _ => Method::Get,
                        };
                        let body = self.config.api.subscribe_body(after);
                        // `Last-Event-ID` only with a real cursor: `after = 0` means "from the
                        // first event", which the query (or body) says already, and the header
                        // makes a cross-origin subscribe need a CORS preflight for nothing. Not
                        // at all once a resume with it was refused (the cursor is in the query).
                        let header = self
                            .run
                            .as_ref()
                            .is_some_and(|r| r.conn.sends_resume_header());
                        self.run_request(
                            RunStep::Subscribe,
                            method,
                            url,
                            (after > 0 && header).then_some(after),
                            body,
                            ResponseKind::Stream,
                        );
                    }
                    Transport::EventSource => {
                        self.abort_run_request();
                        let id = self.next_request;
                        self.next_request += 1;
                        self.requests.push((id, Purpose::Run(RunStep::Subscribe)));
                        self.effects.push_back(Effect::OpenEventSource { id, url });
                        if let Some(run) = self.run.as_mut() {
                            run.open = Some((id, RunStep::Subscribe));
                        }
                    }
                }
            }
            Command::GetTurn if self.run.as_ref().is_some_and(|r| r.ended_in_history) => {
                // The history just read shows the turn ended: nothing to read again.
                self.feed_conn(resume::Input::TurnFetched { terminal: true });
            }
            Command::Rebuild if self.run.as_ref().is_some_and(|r| r.ended_in_history) => {
                // … nor to rebuild: the view holds the turn's persisted events already.
                if let Some(run) = self.run.as_mut() {
                    run.ended_in_history = false;
                }
                self.feed_conn(resume::Input::RebuildDone { terminal: true });
            }
            Command::GetTurn => match turn_id {
                Some(tid) => {
                    let url = self.config.api.turn(&self.id, &tid);
                    self.run_request(
                        RunStep::GetTurn,
                        Method::Get,
                        url,
                        None,
                        None,
                        ResponseKind::Whole,
                    );
                }
                None => self.fail_internal("no turn id to read"),
            },
            Command::Rebuild => match turn_id {
                Some(tid) => {
                    if let Some(run) = self.run.as_mut() {
                        run.rebuild_turn = None;
                        run.rebuild_pages = PageGuard::default();
                    }
                    // The turn's state is read *before* its events: a turn already finished then
                    // has all its events persisted. (Read after, a turn finishing between the two
                    // requests would be settled from a listing taken while it still ran.)
                    let url = self.config.api.turn(&self.id, &tid);
                    self.run_request(
                        RunStep::RebuildTurn,
                        Method::Get,
                        url,
                        None,
                        None,
                        ResponseKind::Whole,
                    );
                }
                None => self.fail_internal("no turn id to rebuild"),
            },
            Command::LookupNewestTurn => {
                let url = self.config.api.turns(&self.id, "?limit=1&order=desc");
                self.run_request(
                    RunStep::Lookup,
                    Method::Get,
                    url,
                    None,
                    None,
                    ResponseKind::Whole,
                );
            }
            Command::RefreshHeaders => {
                let id = self.next_request;
                self.next_request += 1;
                self.requests.push((id, Purpose::Run(RunStep::Headers)));
                self.effects.push_back(Effect::RefreshHeaders { id });
            }
            Command::Abort => self.abort_run_request(),
            Command::PostCancel => {
                let url = self.config.api.cancel(&self.id);
                // Fire and forget: the stream reports the outcome with `turn.done` (cancelled).
                self.request(
                    Purpose::Cancel(None),
                    Method::Post,
                    url,
                    None,
                    Some(String::from("{}")),
                    ResponseKind::Whole,
                );
            }
            Command::Persist { after } => {
                let floor = self.run.as_ref().map_or(0, |r| r.persisted_floor);
                if let Some(tid) = turn_id.filter(|_| after > floor) {
                    self.write_checkpoint(Some(tid), after);
                }
            }
            Command::ClearPersisted => self.write_checkpoint(None, 0),
            Command::Status(status) => self.on_status(status),
            Command::OutcomeStillUnknown => {
                let error = resume::ConnectionError::CreateOutcomeUnknown;
                let e = SessionError::connection(error, self.cause.as_ref());
                self.create_outcome_concluded(error, &e);
            }
            Command::ResumeFallback(fallback) => {
                let message = match fallback {
                    resume::ResumeFallback::QueryCursor => {
                        "the resume was refused (a 400, or a network failure that looks like a CORS preflight refusing Last-Event-ID): subscribing again with the cursor in the query only"
                    }
                    resume::ResumeFallback::Rebuild => {
                        "the resume was refused again: rebuilding the turn from the listings"
                    }
                };
                self.warn("recovery", String::from(message));
            }
            Command::CancelUndelivered => self.warn(
                "cancel",
                format!(
                    "the turn could not be stopped: {} cancel requests failed; it goes on (Stop again, or send a message to interrupt it)",
                    resume::MAX_CANCEL_SENDS
                ),
            ),
            Command::Silence(silence) => {
                if let Some(run) = self.run.as_mut() {
                    run.silence = silence;
                }
                self.dirty = true;
            }
        }
    }

    fn on_status(&mut self, status: ConnectionStatus) {
        if let ConnectionStatus::Failed(error) = &status {
            let unknown_turn = self.run.as_ref().is_some_and(|r| r.turn_id.is_none());
            if unknown_turn && *error != resume::ConnectionError::CreateOutcomeUnknown {
                // The POST definitely created nothing: the creating marker goes. (Outcome
                // unknown keeps it: a reload may still find the turn by listing.)
                self.write_checkpoint(None, 0);
            }
            let e = SessionError::connection(*error, self.cause.as_ref());
            self.last_error = Some(e.clone());
            if let Some(c) = self.run.as_mut().and_then(|r| r.started.take()) {
                self.settle(c, Err(e.clone()));
            }
            self.create_outcome_concluded(*error, &e);
        }
        let checked = !matches!(
            status,
            ConnectionStatus::Connecting | ConnectionStatus::Rebuilding
        );
        let ended = status == ConnectionStatus::Done
            && self
                .run
                .as_ref()
                .is_some_and(|r| r.status != ConnectionStatus::Done);
        if let Some(run) = self.run.as_mut() {
            run.status = status;
        }
        if let Some(turn_id) = self.run.as_ref().and_then(|r| r.turn_id.clone()) {
            self.check_replaced(&turn_id);
        }
        if ended {
            self.tell_turn_ended();
        }
        self.dirty = true;
        if checked {
            self.check_finished();
            self.replay_settled();
        }
    }

    /// The run failed with `error` (`e` as the app sees it): an unanswered create's lookup
    /// concluded. `CreateOutcomeUnknown` marks the run unconfirmed; on an unconfirmed run,
    /// `TurnNotCreated` settles the [`Command::AwaitCreateOutcome`] waiters with
    /// `Created(None)` (sending again is safe), any other failure with `e` (`NotFound`: the
    /// session itself is gone).
    ///
    /// [`Command::AwaitCreateOutcome`]: super::Command::AwaitCreateOutcome
    fn create_outcome_concluded(&mut self, error: resume::ConnectionError, e: &SessionError) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        if error == resume::ConnectionError::CreateOutcomeUnknown {
            run.unconfirmed = true;
        } else if !run.unconfirmed {
            return;
        }
        // No such turn: not sent, and sending again is safe. (No such *session* — a lookup
        // answered 404 — rejects with `not-found`: not sent either, but sending again cannot
        // work, which the waiter must be able to tell.)
        let not_created = error == resume::ConnectionError::TurnNotCreated;
        for c in core::mem::take(&mut run.outcome_waiters) {
            // Built per waiter rather than cloned: cloning a `Settled` compiles the clone of
            // every outcome it can hold (events, turns), which only this site needed.
            let outcome = if not_created {
                Ok(Settled::Created(None))
            } else {
                Err(e.clone())
            };
            self.settle(c, outcome);
        }
    }

    /// A state the connection machine cannot express: fail the run with `internal`.
    fn fail_internal(&mut self, message: &str) {
        self.abort_run_request();
        let e = SessionError::new(ErrorCode::Internal, message);
        if let Some(c) = self.run.as_mut().and_then(|r| r.started.take()) {
            self.settle(c, Err(e.clone()));
        }
        self.cause = Some(e);
        // The machine still believes a request is open: a network error closes it and lets it
        // decide (retry with backoff, or fail).
        self.feed_conn(resume::Input::NetworkError);
    }

    /// The run's request `id` and its step, if `id` is the run's open request.
    pub(super) fn run_step(&self, id: RequestId) -> Option<RunStep> {
        self.run
            .as_ref()
            .and_then(|r| r.open)
            .filter(|(open, _)| *open == id)
            .map(|(_, step)| step)
    }

    pub(super) fn on_stream_opened(&mut self, id: RequestId, status: u16) {
        if self.run_step(id).is_some() {
            self.feed_conn(resume::Input::ResponseHeaders {
                status,
                retry_after_ms: None,
            });
        }
    }

    pub(super) fn on_end(&mut self, id: RequestId) {
        if self.run_step(id).is_none() {
            return;
        }
        if let Some(run) = self.run.as_mut() {
            // WHATWG: an unterminated frame at the end is discarded.
            run.finish_frame();
            run.open = None;
        }
        self.take_request(id);
        self.feed_conn(resume::Input::Eof);
    }

    /// What a request that failed with no response says: a bare network failure, plus a hint
    /// when the request went to another origin than the page's, where the browser reports a
    /// CORS refusal (a missing `Access-Control-Allow-Origin`, or a preflight refused for a
    /// header such as `Authorization`) exactly like an unreachable server.
    fn network_failure_message(&self) -> String {
        let target = self.config.api.origin();
        match (self.config.page_origin.as_deref(), target) {
            (Some(page), Some(target)) if !page.eq_ignore_ascii_case(target) => format!(
                "the request failed (network): {target} is another origin than this page's ({page}), so this may also be a CORS refusal — check that the server allows this origin and the request's headers"
            ),
            _ => String::from("the request failed (network)"),
        }
    }

    /// Whether requests go to another origin than the page's (so they may need a preflight).
    fn cross_origin(&self) -> bool {
        match (self.config.page_origin.as_deref(), self.config.api.origin()) {
            (Some(page), Some(target)) => !page.eq_ignore_ascii_case(target),
            _ => false,
        }
    }

    pub(super) fn on_network_error(&mut self, id: RequestId) {
        let Some(purpose) = self.purpose(id).cloned() else {
            return;
        };
        let message = self.network_failure_message();
        let network = || SessionError::new(ErrorCode::Network, message.clone());
        match purpose {
            Purpose::Run(step) => {
                if self.run_step(id).is_none() {
                    return;
                }
                self.take_request(id);
                if let Some(run) = self.run.as_mut() {
                    run.finish_frame();
                    run.open = None;
                }
                self.cause = Some(network());
                let input = match step {
                    // A cross-origin subscribe failing with no response may be a preflight
                    // that refused `Last-Event-ID`: the machine retries without it once.
                    // (EventSource sends no header of ours: nothing to fall back from.)
                    RunStep::Subscribe
                        if self.config.transport == Transport::Fetch && self.cross_origin() =>
                    {
                        resume::Input::ResumeRefused
                    }
                    RunStep::Post | RunStep::Subscribe => resume::Input::NetworkError,
                    RunStep::GetTurn => resume::Input::TurnFetchFailed {
                        status: None,
                        retry_after_ms: None,
                    },
                    RunStep::Lookup => resume::Input::TurnLookupFailed {
                        status: None,
                        retry_after_ms: None,
                    },
                    RunStep::RebuildTurn | RunStep::RebuildEvents => resume::Input::RebuildFailed {
                        status: None,
                        retry_after_ms: None,
                    },
                    RunStep::Headers => resume::Input::HeadersRefreshFailed,
                };
                self.feed_conn(input);
            }
            Purpose::History => {
                self.take_request(id);
                self.history_page_failed(None, network());
            }
            Purpose::Cancel(command) => {
                self.take_request(id);
                match command {
                    Some(c) => self.settle(c, Err(network())),
                    // The running turn's cancel did not reach the server: its connection sends
                    // it again once the turn is seen running (offline: after reconnecting).
                    None => self.feed_conn(resume::Input::CancelFailed {
                        retry_after_ms: None,
                    }),
                }
            }
            Purpose::CheckTurn { turn_id, attempt } => {
                self.take_request(id);
                self.retry_check(turn_id, attempt);
            }
            Purpose::Export(command) => {
                self.take_request(id);
                self.export_failed(command, network());
            }
            Purpose::ActionCheck => {
                self.take_request(id);
                self.action_checked(id, None);
            }
            Purpose::Sync => {
                self.take_request(id);
            }
        }
    }

    pub(super) fn on_headers_refreshed(&mut self, id: RequestId, ok: bool) {
        if self.purpose(id) != Some(&Purpose::Run(RunStep::Headers)) {
            return;
        }
        self.take_request(id);
        self.feed_conn(if ok {
            resume::Input::HeadersRefreshed
        } else {
            resume::Input::HeadersRefreshFailed
        });
    }

    pub(super) fn on_response(
        &mut self,
        id: RequestId,
        status: u16,
        retry_after_ms: Option<u64>,
        body: &[u8],
    ) {
        let Some(purpose) = self.take_request(id) else {
            return;
        };
        let ok = (200..300).contains(&status);
        match purpose {
            Purpose::Run(step) => {
                let Some(run) = self
                    .run
                    .as_mut()
                    .filter(|r| r.open.map(|o| o.0) == Some(id))
                else {
                    return;
                };
                run.open = None;
                // A 401 made up for a failed header provider keeps the provider's error.
                let provider_failed = status == 401
                    && self
                        .cause
                        .as_ref()
                        .is_some_and(|c| c.code == ErrorCode::Auth && c.status.is_none());
                if !ok && !provider_failed {
                    self.cause = Some(SessionError::http(status, body));
                }
                if step == RunStep::Subscribe && status == 412 {
                    self.tell_live_gone();
                }
                self.run_response(step, status, retry_after_ms, body);
                // A new turn refused because the session moved on elsewhere (a turn running,
                // or one waiting for its approvals, that this page never saw): catch up.
                if step == RunStep::Post && matches!(status, 409 | 422) {
                    self.sync();
                }
            }
            Purpose::History => self.history_response(status, body),
            Purpose::Cancel(command) => {
                if ok && self.live_unavailable() {
                    // No stream will bring this turn's `turn.done`: read the turn again now that
                    // the server has cancelled it (the machine's refresh: state, then listing).
                    self.feed_conn(resume::Input::Refresh);
                } else if ok && self.streams_frames() {
                    // The stream (or the relay) brings what the server sent before it took the
                    // cancel, then `turn.done`: every tab shows the same stopped text. The turn
                    // is read only if that does not come (`CANCEL_CHECK_WAIT_MS`).
                    let at = self.now_ms.saturating_add(super::CANCEL_CHECK_WAIT_MS);
                    if let Some(run) = self.run.as_mut() {
                        run.cancel_check_at_ms = Some(at);
                    }
                } else if ok {
                    // Read the turn now instead of waiting for the stream's `turn.done` (which a
                    // cancel of a crashed owner's turn never writes): ended → rebuilt and
                    // settled, still running → resubscribed after the cursor (issue 14).
                    self.feed_conn(resume::Input::CheckTurn);
                }
                if let Some(c) = command {
                    let outcome = if ok {
                        Ok(Settled::Done)
                    } else {
                        Err(SessionError::http(status, body))
                    };
                    self.settle(c, outcome);
                } else if status >= 500 || status == 429 {
                    // A server error is no answer: sent again as after a network failure.
                    self.feed_conn(resume::Input::CancelFailed { retry_after_ms });
                }
            }
            Purpose::CheckTurn { turn_id, attempt } => {
                match parse_json::<wire::Single<wire::Turn>>(body).filter_ok(ok) {
                    Some(single) if single.data.id == turn_id => {
                        let changes = self.view.apply_turn(&single.data);
                        self.record(changes);
                        if !single.data.state.is_terminal() {
                            self.retry_check(turn_id, attempt);
                        }
                    }
                    _ if status == 404 => {}
                    _ => self.retry_check(turn_id, attempt),
                }
            }
            Purpose::Export(command) => self.export_response(command, status, body),
            Purpose::ActionCheck => {
                let listed = parse_json::<wire::Listing<wire::Turn>>(body)
                    .ok()
                    .filter(|_| ok)
                    .map(|page| page.data);
                self.action_checked(id, listed);
            }
            Purpose::Sync => {
                let listed = parse_json::<wire::Listing<wire::Turn>>(body)
                    .ok()
                    .filter(|_| ok)
                    .map(|page| page.data);
                self.synced(listed);
            }
        }
    }

    fn retry_check(&mut self, turn_id: String, attempt: u32) {
        if attempt < MAX_TURN_CHECKS {
            let at = self
                .now_ms
                .saturating_add(TURN_CHECK_STEP_MS.saturating_mul(u64::from(attempt)));
            self.checks_due.push((at, turn_id, attempt + 1));
        }
    }

    fn run_response(
        &mut self,
        step: RunStep,
        status: u16,
        retry_after_ms: Option<u64>,
        body: &[u8],
    ) {
        let ok = (200..300).contains(&status);
        let failed = |status| (Some(status), retry_after_ms);
        match step {
            RunStep::Post | RunStep::Subscribe => {
                // A stream request answered with a whole (error) body, or a 2xx the executor
                // read whole: the machine classifies the status.
                self.feed_conn(resume::Input::ResponseHeaders {
                    status,
                    retry_after_ms,
                });
                if ok {
                    if let Some(run) = self.run.as_mut() {
                        run.open = None;
                    }
                    self.feed_conn(resume::Input::Eof);
                }
            }
            RunStep::GetTurn => {
                let input = if ok {
                    match parse_json::<wire::Single<wire::Turn>>(body) {
                        Ok(single) => {
                            let terminal = single.data.state.is_terminal();
                            let changes = self.view.apply_turn(&single.data);
                            self.record(changes);
                            resume::Input::TurnFetched { terminal }
                        }
                        Err(e) => {
                            self.invalid(format!("malformed turn: {e}"));
                            resume::Input::TurnFetchFailed {
                                status: Some(502),
                                retry_after_ms: None,
                            }
                        }
                    }
                } else {
                    let (status, retry_after_ms) = failed(status);
                    resume::Input::TurnFetchFailed {
                        status,
                        retry_after_ms,
                    }
                };
                self.feed_conn(input);
            }
            RunStep::Lookup => {
                let input = if ok {
                    match parse_json::<wire::Listing<wire::Turn>>(body) {
                        Ok(page) => self.lookup_result(page),
                        Err(e) => {
                            self.invalid(format!("malformed turn list: {e}"));
                            resume::Input::TurnLookupFailed {
                                status: Some(502),
                                retry_after_ms: None,
                            }
                        }
                    }
                } else {
                    let (status, retry_after_ms) = failed(status);
                    resume::Input::TurnLookupFailed {
                        status,
                        retry_after_ms,
                    }
                };
                self.feed_conn(input);
            }
            RunStep::RebuildTurn => {
                if !ok {
                    let (status, retry_after_ms) = failed(status);
                    self.feed_conn(resume::Input::RebuildFailed {
                        status,
                        retry_after_ms,
                    });
                    return;
                }
                match parse_json::<wire::Single<wire::Turn>>(body) {
                    Ok(single) => {
                        if let Some(run) = self.run.as_mut() {
                            run.rebuild_turn = Some(single.data);
                        }
                        // Liveness for the idle watchdog.
                        self.feed_conn(resume::Input::ResponseHeaders {
                            status,
                            retry_after_ms: None,
                        });
                        self.rebuild_page(None);
                    }
                    Err(e) => {
                        self.invalid(format!("malformed turn: {e}"));
                        self.feed_conn(resume::Input::RebuildFailed {
                            status: Some(502),
                            retry_after_ms: None,
                        });
                    }
                }
            }
            RunStep::RebuildEvents => {
                if !ok {
                    let (status, retry_after_ms) = failed(status);
                    self.feed_conn(resume::Input::RebuildFailed {
                        status,
                        retry_after_ms,
                    });
                    return;
                }
                match parse_json::<wire::Listing<wire::Event>>(body) {
                    Ok(page) => {
                        let tid = self
                            .run
                            .as_ref()
                            .and_then(|r| r.turn_id.clone())
                            .unwrap_or_default();
                        match self.view.apply_turn_events(&tid, page.data) {
                            Ok(changes) => self.record(changes),
                            Err(e) => self.warn("protocol", format!("{e}")),
                        }
                        let next = page.pagination.next_page_token;
                        let next = match self.run.as_mut() {
                            Some(r) => {
                                r.rebuild_pages
                                    .after_page("turn events", next, MAX_EVENT_PAGES)
                            }
                            None => NextPage::Done,
                        };
                        match next {
                            NextPage::Follow(token) => {
                                self.feed_conn(resume::Input::ResponseHeaders {
                                    status,
                                    retry_after_ms: None,
                                });
                                self.rebuild_page(Some(&token));
                            }
                            NextPage::Done => self.rebuild_finished(&tid),
                            NextPage::Cut(warning) => {
                                self.warn("protocol", warning);
                                self.rebuild_finished(&tid);
                            }
                        }
                    }
                    Err(e) => {
                        self.invalid(format!("malformed turn events: {e}"));
                        self.feed_conn(resume::Input::RebuildFailed {
                            status: Some(502),
                            retry_after_ms: None,
                        });
                    }
                }
            }
            RunStep::Headers => {}
        }
    }

    fn rebuild_page(&mut self, token: Option<&str>) {
        let Some(tid) = self.run.as_ref().and_then(|r| r.turn_id.clone()) else {
            return;
        };
        let url = self.config.api.turn_events(&self.id, &tid, token);
        let id = self.request(
            Purpose::Run(RunStep::RebuildEvents),
            Method::Get,
            url,
            None,
            None,
            ResponseKind::Whole,
        );
        if let Some(run) = self.run.as_mut() {
            run.open = Some((id, RunStep::RebuildEvents));
        }
    }

    fn rebuild_finished(&mut self, tid: &str) {
        let turn = self.run.as_mut().and_then(|r| r.rebuild_turn.take());
        let terminal_before = match &turn {
            Some(t) => {
                let changes = self.view.apply_turn(t);
                self.record(changes);
                t.state.is_terminal()
            }
            None => false,
        };
        // The listing may already hold the turn's `turn.done` (it finished after the state read).
        let listed_terminal = self
            .view
            .turn(tid)
            .is_some_and(|t| t.status != TurnStatus::Running);
        self.feed_conn(resume::Input::RebuildDone {
            terminal: terminal_before || listed_terminal,
        });
    }

    /// Effect recovery (PROTOCOL §8.3): is the session's newest turn ours? Ours = a turn we did
    /// not know before the POST whose `previous_turn_id` is the turn that was newest before it.
    fn lookup_result(&mut self, page: wire::Listing<wire::Turn>) -> resume::Input {
        let before = self.run.as_ref().and_then(|r| r.previous_turn_id.clone());
        let newest = page.data.into_iter().next();
        let ours = newest.filter(|t| {
            Some(&t.id) != before.as_ref()
                && t.previous_turn_id == before
                && super::checkpoint::is_valid_id(&t.id)
        });
        match ours {
            Some(turn) => {
                if let Some(run) = self.run.as_mut() {
                    run.turn_id = Some(turn.id.clone());
                }
                self.turn_discovered(&turn.id, turn.previous_turn_id.as_deref());
                let changes = self.view.apply_turn(&turn);
                self.record(changes);
                resume::Input::TurnLookup { found_ours: true }
            }
            None => resume::Input::TurnLookup { found_ours: false },
        }
    }

    fn invalid(&mut self, message: String) {
        self.cause = Some(SessionError::new(ErrorCode::InvalidResponse, message));
    }
}

/// `Ok(v)` with a 2xx, as an option.
trait FilterOk<T> {
    fn filter_ok(self, ok: bool) -> Option<T>;
}

impl<T> FilterOk<T> for Result<T, String> {
    fn filter_ok(self, ok: bool) -> Option<T> {
        self.ok().filter(|_| ok)
    }
}
