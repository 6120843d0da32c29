//! Reading a session's persisted events for an app (`session.exportEvents()`): every page of the
//! session timeline `GET /sessions/{sid}/events` (PROTOCOL §4), as the protocol's
//! `{turn_id, event}` items, oldest first. Sans-IO like the rest of the engine: the platform
//! sends each request and hands the answer to [`ExportEvents::page`].

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::requests::parse_json;
use super::{Api, ErrorCode, HttpRequest, Method, ResponseKind, SessionError, MAX_EVENT_PAGES};
use crate::wire::{SessionEventItem, SessionEventsPage};

/// One export in progress: the pages read so far and the next request.
#[derive(Debug)]
pub struct ExportEvents {
    sid: String,
    /// Pages as decoded, newest first (the listing's order); one reversal at the end.
    pages: Vec<Vec<SessionEventItem>>,
}

/// What to do after a page.
#[derive(Debug)]
pub enum ExportStep {
    /// Send this request and pass its answer to [`ExportEvents::page`].
    Next(HttpRequest),
    /// Every page was read: the session's events, oldest first.
    Done(Vec<SessionEventItem>),
}

impl ExportEvents {
    /// Starts an export of session `sid`; returns it and the first page's request.
    pub fn start(api: &Api, sid: &str) -> (ExportEvents, HttpRequest) {
        let export = ExportEvents {
            sid: String::from(sid),
            pages: Vec::new(),
        };
        (export, request(api, sid, None))
    }

    /// Takes one page's answer (`status`, body bytes). A non-2xx answer is the server's error
    /// ([`SessionError::http`]: 404 `not_found` for a session the server no longer has); a body
    /// that is not a timeline page is `invalid_response`. Pages past the engine's bound
    /// ([`MAX_EVENT_PAGES`], 100 items each) are not requested: the export then ends with what
    /// was read, as the history load does.
    pub fn page(
        &mut self,
        api: &Api,
        status: u16,
        body: &[u8],
    ) -> Result<ExportStep, SessionError> {
        if !(200..300).contains(&status) {
            return Err(SessionError::http(status, body));
        }
        let page = parse_json::<SessionEventsPage>(body).map_err(|e| {
            SessionError::new(
                ErrorCode::InvalidResponse,
                format!("malformed session events: {e}"),
            )
        })?;
        self.pages.push(page.data);
        match page.pagination.next_page_token {
            Some(token) if (self.pages.len() as u32) < MAX_EVENT_PAGES => {
                Ok(ExportStep::Next(request(api, &self.sid, Some(&token))))
            }
            _ => {
                let pages = core::mem::take(&mut self.pages);
                let mut events: Vec<SessionEventItem> = pages.into_iter().flatten().collect();
                // The timeline is newest first; an app reads a history oldest first.
                events.reverse();
                Ok(ExportStep::Done(events))
            }
        }
    }
}

fn request(api: &Api, sid: &str, token: Option<&str>) -> HttpRequest {
    HttpRequest {
        id: 0,
        method: Method::Get,
        url: api.session_events(sid, token),
        last_event_id: None,
        json_body: None,
        response: ResponseKind::Whole,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Flavor;
    use crate::wire::Event;

    fn api() -> Api {
        Api::new("http://h", Flavor::TrueForge)
    }

    #[test]
    fn pages_are_followed_and_the_events_come_oldest_first() {
        let (mut export, first) = ExportEvents::start(&api(), "s-1");
        assert_eq!(first.method, Method::Get);
        assert_eq!(first.url, "http://h/api/v1/sessions/s-1/events?limit=100");
        let newest = br#"{"data":[
            {"turn_id":"t2","event":{"type":"turn.done","id":"e4","thread_id":null,"state":{"status":"done","output":null,"required_actions":[]}}},
            {"turn_id":"t2","event":{"type":"turn.created","id":"e3","thread_id":null,"turn_id":"t2","previous_turn_id":"t1","state":{"status":"running"}}}
        ],"pagination":{"next_page_token":"p 2"}}"#;
        let next = match export.page(&api(), 200, newest).unwrap() {
            ExportStep::Next(r) => r,
            other => panic!("expected a next page, got {other:?}"),
        };
        assert_eq!(
            next.url,
            "http://h/api/v1/sessions/s-1/events?limit=100&page_token=p%202"
        );
        let oldest = br#"{"data":[
            {"turn_id":"t1","event":{"type":"x.future","id":"e2","extra":1}},
            {"turn_id":"t1","event":{"type":"turn.created","id":"e1","thread_id":null,"turn_id":"t1","previous_turn_id":null,"state":{"status":"running"}}}
        ],"pagination":{}}"#;
        let events = match export.page(&api(), 200, oldest).unwrap() {
            ExportStep::Done(events) => events,
            other => panic!("expected the end, got {other:?}"),
        };
        let ids: Vec<_> = events.iter().map(|e| e.event.id().unwrap()).collect();
        assert_eq!(ids, ["e1", "e2", "e3", "e4"]);
        assert_eq!(events[0].turn_id, "t1");
        // An unknown type is kept whole, as received.
        assert!(
            matches!(&events[1].event, Event::Unknown { event_type, raw }
            if event_type == "x.future" && raw["extra"] == 1)
        );
    }

    #[test]
    fn errors_are_typed() {
        let (mut export, _) = ExportEvents::start(&api(), "s-1");
        let e = export
            .page(&api(), 404, br#"{"error":{"message":"no session"}}"#)
            .unwrap_err();
        assert_eq!((e.code, e.status), (ErrorCode::NotFound, Some(404)));
        let e = export.page(&api(), 200, b"{\"data\":5}").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidResponse);
    }
}
