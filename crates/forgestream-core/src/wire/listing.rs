//! Response envelopes: lists, single objects, session timeline items, errors (PROTOCOL §2, §4).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::event::Event;

/// `pagination` of a list response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pagination {
    /// Pass as `page_token` for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
    /// Pass as `page_token` for the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_page_token: Option<String>,
    /// Page size used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

/// `{"data":[…],"pagination":{…}}`. Used for turns (`Listing<Turn>`) and turn events
/// (`Listing<Event>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listing<T> {
    /// The page's items.
    pub data: Vec<T>,
    /// Paging tokens.
    #[serde(default)]
    pub pagination: Pagination,
}

/// `{"data":{…}}`: a single object (a session, a turn).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Single<T> {
    /// The object.
    pub data: T,
}

/// One item of the session timeline `GET /sessions/{sid}/events`: `{turn_id, event}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct SessionEventItem {
    /// The turn the event belongs to.
    pub turn_id: String,
    /// The merged event.
    #[cfg_attr(feature = "tsify", tsify(type = "ProtocolEvent | UnknownEvent"))]
    pub event: Event,
}

/// The session timeline page: newest first, plus `last_turn_id` (PROTOCOL §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEventsPage {
    /// Items, newest first by default.
    pub data: Vec<SessionEventItem>,
    /// Paging tokens.
    #[serde(default)]
    pub pagination: Pagination,
    /// The tip of the active branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_turn_id: Option<String>,
}

/// The `error` object of an error body.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// Human-readable message.
    #[serde(default)]
    pub message: String,
    /// Error type, when given.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Error code (string or number), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Value>,
    /// Offending parameter, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
}

/// `{"error":{message,type?,code?,param?}}`: every non-2xx JSON body (PROTOCOL §2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}
