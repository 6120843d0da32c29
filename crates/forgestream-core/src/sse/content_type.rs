//! Whether a 2xx response is an event stream at all (HTML Living Standard §9.2: the stream is
//! served as `text/event-stream`). A proxy's or SSO's login page, a JSON error body or a redirect
//! to either answers 200 too; parsed as SSE it would show `live` and then reconnect for minutes.
use alloc::string::String;
use core::fmt;

/// A 2xx answer to a stream request that is not an event stream: what came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotEventStream {
    /// HTTP status.
    pub status: u16,
    /// The `Content-Type` header (cut to 64 bytes), `None` when absent.
    pub content_type: Option<String>,
    /// The fetch followed a redirect (`Response.redirected`).
    pub redirected: bool,
}

impl fmt::Display for NotEventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redirected = if self.redirected {
            " after a redirect"
        } else {
            ""
        };
        match &self.content_type {
            Some(ct) => write!(
                f,
                "expected text/event-stream, the server answered {}{redirected} with {ct:?}",
                self.status
            ),
            None => write!(
                f,
                "expected text/event-stream, the server answered {}{redirected} with no Content-Type",
                self.status
            ),
        }
    }
}

/// Checks a stream response: its media type (before any `;` parameters, ASCII
/// case-insensitive, surrounding spaces ignored) must be `text/event-stream`, and it must not
/// come from a followed redirect (the stream URL never redirects; a redirect is a login page).
///
/// # Errors
///
/// [`NotEventStream`] naming the status, the content type and the redirect.
pub fn check_event_stream(
    status: u16,
    content_type: Option<&str>,
    redirected: bool,
) -> Result<(), NotEventStream> {
    let media_type = content_type.map(|ct| ct.split(';').next().unwrap_or_default().trim());
    let is_stream = media_type.is_some_and(|m| m.eq_ignore_ascii_case("text/event-stream"));
    if is_stream && !redirected {
        return Ok(());
    }
    Err(NotEventStream {
        status,
        content_type: content_type.map(|ct| {
            let mut end = ct.len().min(64);
            while !ct.is_char_boundary(end) {
                end -= 1;
            }
            String::from(&ct[..end])
        }),
        redirected,
    })
}

#[cfg(test)]
mod tests {
    use super::check_event_stream;
    use alloc::string::ToString;

    #[test]
    fn only_an_event_stream_that_was_not_redirected_passes() {
        for ok in [
            "text/event-stream",
            "text/event-stream; charset=utf-8",
            " Text/Event-Stream ;charset=UTF-8",
        ] {
            assert_eq!(check_event_stream(200, Some(ok), false), Ok(()), "{ok}");
        }
        let html = check_event_stream(200, Some("text/html; charset=utf-8"), false).unwrap_err();
        assert_eq!(
            html.to_string(),
            "expected text/event-stream, the server answered 200 with \"text/html; charset=utf-8\""
        );
        let json = check_event_stream(200, Some("application/json"), false).unwrap_err();
        assert!(json.to_string().contains("application/json"));
        let none = check_event_stream(200, None, false).unwrap_err();
        assert!(none.to_string().contains("no Content-Type"));
        let redirected = check_event_stream(200, Some("text/event-stream"), true).unwrap_err();
        assert!(redirected.to_string().contains("after a redirect"));
        for near in ["text/event-streams", "text/plain", "event-stream", ""] {
            assert!(
                check_event_stream(200, Some(near), false).is_err(),
                "{near}"
            );
        }
        let long = "x".repeat(1000);
        let cut = check_event_stream(200, Some(&long), false).unwrap_err();
        assert_eq!(cut.content_type.map(|c| c.len()), Some(64));
    }
}
