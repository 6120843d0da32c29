//! Endpoint paths of both server families (PROTOCOL.md §4). IDs are opaque strings and are
//! percent-encoded into paths (gateway ids contain dots, which stay as they are).
use alloc::format;
use alloc::string::{String, ToString};

/// Which server family the client talks to (option `flavor`: `"trueforge"` | `"gateway"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// Open-source TrueForge: `/api/v1`, `GET …/subscribe?after_sequence_number=N`.
    TrueForge,
    /// TrueFoundry gateway: `/v1/agents`, `POST …/subscribe` with `{"after_sequence_number":N}`.
    Gateway,
}

impl Flavor {
    fn prefix(self) -> &'static str {
        match self {
            Flavor::TrueForge => "/api/v1",
            Flavor::Gateway => "/v1/agents",
        }
    }
}

/// Builds request URLs under one base URL (`http://host:port` or `https://gw/<tenant>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Api {
    base: String,
    pub flavor: Flavor,
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Percent-encodes one path segment (RFC 3986 unreserved characters stay).
pub(crate) fn segment(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
    out
}

impl Api {
    /// The base URL without its trailing slash (`""` = same origin).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// `base` without a trailing slash is used as is; an empty base means same-origin paths.
    pub fn new(base: &str, flavor: Flavor) -> Self {
        Api {
            base: base.trim_end_matches('/').to_string(),
            flavor,
        }
    }

    /// The base URL's origin (`scheme://host[:port]`, RFC 6454 §4 on the URL as written), or
    /// `None` for a relative base (same-origin paths) or one without `://`.
    pub fn origin(&self) -> Option<&str> {
        // A byte search: `str::find` with a `&str` pattern pulls the two-way searcher (~1.5 KB)
        // into the wasm for this one call.
        let after_scheme = self.base.as_bytes().windows(3).position(|w| w == b"://")? + 3;
        let rest = self.base.get(after_scheme..)?;
        let end = rest
            .find(['/', '?', '#'])
            .map_or(self.base.len(), |i| after_scheme + i);
        self.base.get(..end).filter(|o| o.len() > after_scheme)
    }

    fn url(&self, path: &str) -> String {
        [self.base.as_str(), self.flavor.prefix(), path].concat()
    }

    /// `POST /sessions`.
    pub fn sessions(&self) -> String {
        self.url("/sessions")
    }

    /// `GET /sessions/{sid}`.
    pub fn session(&self, sid: &str) -> String {
        self.url(&format!("/sessions/{}", segment(sid)))
    }

    /// `POST` (create) / `GET` (list) `/sessions/{sid}/turns`; `query` is appended as is.
    pub fn turns(&self, sid: &str, query: &str) -> String {
        self.url(&format!("/sessions/{}/turns{query}", segment(sid)))
    }

    /// `GET /sessions/{sid}/turns/{tid}`.
    pub fn turn(&self, sid: &str, tid: &str) -> String {
        self.url(&format!(
            "/sessions/{}/turns/{}",
            segment(sid),
            segment(tid)
        ))
    }

    /// The subscribe URL: TrueForge puts the exclusive cursor in the query; the gateway takes it
    /// in the POST body (see [`Api::subscribe_body`]).
    pub fn subscribe(&self, sid: &str, tid: &str, after: u64) -> String {
        let base = format!("{}/subscribe", self.turn(sid, tid));
        match self.flavor {
            Flavor::TrueForge => format!("{base}?after_sequence_number={after}"),
            Flavor::Gateway => base,
        }
    }

    /// `GET` for TrueForge, `POST` for the gateway.
    pub fn subscribe_method(&self) -> &'static str {
        match self.flavor {
            Flavor::TrueForge => "GET",
            Flavor::Gateway => "POST",
        }
    }

    /// The gateway's subscribe body `{"after_sequence_number":N}`; none for TrueForge.
    pub fn subscribe_body(&self, after: u64) -> Option<String> {
        match self.flavor {
            Flavor::TrueForge => None,
            Flavor::Gateway => Some(format!("{{\"after_sequence_number\":{after}}}")),
        }
    }

    /// `GET /sessions/{sid}/turns/{tid}/events` (oldest first), one page.
    pub fn turn_events(&self, sid: &str, tid: &str, page_token: Option<&str>) -> String {
        let mut url = format!("{}/events?order=asc&limit=100", self.turn(sid, tid));
        if let Some(token) = page_token {
            url.push_str("&page_token=");
            url.push_str(&segment(token));
        }
        url
    }

    /// `GET /sessions/{sid}/events` (newest first), one page.
    pub fn session_events(&self, sid: &str, page_token: Option<&str>) -> String {
        let mut url = format!("{}/events?limit=100", self.session(sid));
        if let Some(token) = page_token {
            url.push_str("&page_token=");
            url.push_str(&segment(token));
        }
        url
    }

    /// `POST /sessions/{sid}/cancel`.
    pub fn cancel(&self, sid: &str) -> String {
        format!("{}/cancel", self.session(sid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_is_scheme_host_and_port_of_the_base() {
        let origin = |base: &str| Api::new(base, Flavor::TrueForge).origin().map(String::from);
        assert_eq!(origin("http://h:8790"), Some("http://h:8790".into()));
        assert_eq!(
            origin("https://gw.example/tenant/"),
            Some("https://gw.example".into())
        );
        assert_eq!(
            origin("https://gw.example?x=1"),
            Some("https://gw.example".into())
        );
        assert_eq!(origin(""), None);
        assert_eq!(origin("/api"), None);
        assert_eq!(origin("http://"), None);
    }

    #[test]
    fn paths_of_both_flavors() {
        let tf = Api::new("http://127.0.0.1:8790/", Flavor::TrueForge);
        assert_eq!(
            tf.subscribe("s1", "t1.local", 3),
            "http://127.0.0.1:8790/api/v1/sessions/s1/turns/t1.local/subscribe?after_sequence_number=3"
        );
        assert_eq!(tf.subscribe_body(3), None);
        let gw = Api::new("https://gw/tenant", Flavor::Gateway);
        assert_eq!(
            gw.subscribe("s.z", "t.z.e", 3),
            "https://gw/tenant/v1/agents/sessions/s.z/turns/t.z.e/subscribe"
        );
        assert_eq!(
            gw.subscribe_body(3).as_deref(),
            Some("{\"after_sequence_number\":3}")
        );
        assert_eq!(
            tf.session("a/b"),
            "http://127.0.0.1:8790/api/v1/sessions/a%2Fb"
        );
    }
}
