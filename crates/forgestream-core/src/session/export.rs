//! Reading a session's persisted events for an app ([`Command::ExportEvents`],
//! `session.exportEvents()`): every page of the session timeline `GET /sessions/{sid}/events`
//! (PROTOCOL §4), as the protocol's `{turn_id, event}` items, oldest first.
//!
//! An export is one more request path of the engine, not a loop of the platform's: each page
//! is an engine [`Effect::Request`](super::Effect::Request) ([`Purpose::Export`]), answered
//! with [`Input::Response`](super::Input::Response) / [`Input::NetworkError`](super::Input::NetworkError)
//! like any other, so `Close` aborts it (and rejects it with `aborted`), and it runs beside a
//! live stream, a history load or another export.
//!
//! The items are kept decoded ([`SessionEventItem`]) and the web crate writes them with the
//! core's encoder (`wire::write`), rather than passing each item's received text through: the
//! app gets the events as the `ProtocolEvent` declarations describe them (a missing `id` or
//! `thread_id` filled in, members this SDK does not know left out, the `type` first), the same
//! values as before the encoder replaced serde's; and the encoders of the wire types cost the
//! wasm a few KB (one function per type), while keeping the text would have put a second copy of
//! every page in memory until the export settles.
//!
//! [`Command::ExportEvents`]: super::Command::ExportEvents

use alloc::format;
use alloc::vec::Vec;

use super::paging::{NextPage, PageGuard};
use super::requests::parse_json;
use super::{
    CommandId, ErrorCode, Method, Purpose, ResponseKind, Session, SessionError, Settled,
    MAX_EVENT_PAGES,
};
use crate::wire::{SessionEventItem, SessionEventsPage};

/// One export's paging state: the pages read so far and the tokens followed.
#[derive(Debug, Default)]
pub(super) struct ExportEvents {
    /// Pages as decoded, newest first (the listing's order); one reversal at the end.
    pages: Vec<Vec<SessionEventItem>>,
    guard: PageGuard,
}

impl Session {
    /// Starts export `command`: its first page's request.
    pub(super) fn export_events(&mut self, command: CommandId) {
        self.exports.push((command, ExportEvents::default()));
        self.export_page(command, None);
    }

    fn export_page(&mut self, command: CommandId, token: Option<&str>) {
        let url = self.config.api.session_events(&self.id, token);
        self.request(
            Purpose::Export(command),
            Method::Get,
            url,
            None,
            None,
            ResponseKind::Whole,
        );
    }

    /// One page's answer for export `command` (its request already forgotten). A non-2xx is
    /// the server's error ([`SessionError::http`]: 404 `not-found` for a session the server no
    /// longer has); a body that is not a timeline page is `invalid-response`.
    pub(super) fn export_response(&mut self, command: CommandId, status: u16, body: &[u8]) {
        if !(200..300).contains(&status) {
            self.export_failed(command, SessionError::http(status, body));
            return;
        }
        let page = match parse_json::<SessionEventsPage>(body) {
            Ok(page) => page,
            Err(e) => {
                let message = format!("malformed session events: {e}");
                let error = SessionError::new(ErrorCode::InvalidResponse, message);
                self.export_failed(command, error);
                return;
            }
        };
        let Some((_, export)) = self.exports.iter_mut().find(|(c, _)| *c == command) else {
            return;
        };
        export.pages.push(page.data);
        let next = export.guard.after_page(
            "session events",
            page.pagination.next_page_token,
            MAX_EVENT_PAGES,
        );
        match next {
            NextPage::Follow(token) => self.export_page(command, Some(&token)),
            NextPage::Done => self.export_done(command),
            NextPage::Cut(warning) => {
                self.warn("protocol", warning);
                self.export_done(command);
            }
        }
    }

    /// Export `command` failed (`error`): it is rejected and forgotten.
    pub(super) fn export_failed(&mut self, command: CommandId, error: SessionError) {
        if self.take_export(command).is_some() {
            self.settle(command, Err(error));
        }
    }

    fn export_done(&mut self, command: CommandId) {
        let Some(export) = self.take_export(command) else {
            return;
        };
        let mut events: Vec<SessionEventItem> = export.pages.into_iter().flatten().collect();
        // The timeline is newest first; an app reads a history oldest first.
        events.reverse();
        self.settle(command, Ok(Settled::Events(events)));
    }

    fn take_export(&mut self, command: CommandId) -> Option<ExportEvents> {
        let index = self.exports.iter().position(|(c, _)| *c == command)?;
        Some(self.exports.swap_remove(index).1)
    }
}
