//! `POST /sessions` (`client.createSession(body)`): the request, and the new session's id read
//! from the answer. Happens before any engine exists, so it is a pair of functions, not a
//! command.
use alloc::format;
use alloc::string::String;

use super::{Api, ErrorCode, HttpRequest, Method, ResponseKind, SessionError};
use crate::wire;

/// The create request: `POST {base}/sessions` with `body` (a JSON object: TrueForge
/// `{"agent":{"name"}}` or `{"agent":{"spec"}}`, gateway `{"agent_name"}`), read whole.
pub fn create_session_request(api: &Api, body: String) -> HttpRequest {
    HttpRequest {
        id: 0,
        method: Method::Post,
        url: api.sessions(),
        last_event_id: None,
        json_body: Some(body),
        response: ResponseKind::Whole,
    }
}

/// The new session's id from the create answer (`{"data":{"id",…}}`; the rest is app data).
/// Errors: the HTTP error of a non-2xx status; `invalid-response` for another shape or an id
/// that could not be used in a URL or a storage record
/// ([`is_valid_id`](super::checkpoint::is_valid_id)).
pub fn created_session_id(status: u16, body: &[u8]) -> Result<String, SessionError> {
    /// The one member read of the created session.
    struct Created {
        id: String,
    }
    impl wire::json::Decode for Created {
        fn decode(r: &mut wire::json::Reader<'_>) -> Result<Self, wire::json::JsonError> {
            let mut id = None;
            let mut seq = r.object("a session object")?;
            while let Some(key) = r.next_key(&mut seq)? {
                match key.as_ref() {
                    "id" => wire::json::field(r, &mut id, "id")?,
                    _ => r.skip()?,
                }
            }
            Ok(Created {
                id: wire::json::required(r, id, "id")?,
            })
        }
    }
    if !(200..300).contains(&status) {
        return Err(SessionError::http(status, body));
    }
    let id = super::requests::parse_json::<wire::Single<Created>>(body)
        .map(|s| s.data.id)
        .map_err(|e| {
            SessionError::new(
                ErrorCode::InvalidResponse,
                format!("malformed session: {e}"),
            )
        })?;
    if !super::checkpoint::is_valid_id(&id) {
        return Err(SessionError::new(
            ErrorCode::InvalidResponse,
            "malformed session: unusable id",
        ));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Flavor;

    #[test]
    fn the_created_id_is_read_and_checked() {
        let r = create_session_request(&Api::new("http://h", Flavor::TrueForge), "{}".into());
        assert_eq!(
            (r.method, r.url.as_str()),
            (Method::Post, "http://h/api/v1/sessions")
        );
        assert_eq!(
            created_session_id(201, br#"{"data":{"id":"s-1","agent":{}}}"#),
            Ok("s-1".into())
        );
        let e = created_session_id(404, br#"{"error":{"message":"no agent"}}"#).unwrap_err();
        assert_eq!((e.code, e.status), (ErrorCode::NotFound, Some(404)));
        for bad in [
            &br#"{"data":{}}"#[..],
            b"nope",
            br#"{"data":{"id":"../x"}}"#,
        ] {
            let e = created_session_id(200, bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidResponse);
        }
    }
}
