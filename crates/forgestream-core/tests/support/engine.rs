//! Reading a session engine's effects, shared by the engine's unit tests
//! (`src/session/tests.rs`) and its integration tests (`tests/hostile_stream.rs`), which include
//! this file with `#[path]`. It names the engine's types through the including module (`super`),
//! which imports them from `crate::session` or `forgestream_core::session`.
#![allow(dead_code)]

use super::{CommandId, Effect, HttpRequest, Method, SessionError, Settled};

/// The requests among `effects`, in order.
pub fn requests(effects: &[Effect]) -> Vec<&HttpRequest> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// The first `method` request whose URL contains `url_part`; panics naming the effects if none.
pub fn request_to<'a>(effects: &'a [Effect], method: Method, url_part: &str) -> &'a HttpRequest {
    requests(effects)
        .into_iter()
        .find(|r| r.method == method && r.url.contains(url_part))
        .unwrap_or_else(|| panic!("no {method:?} {url_part} in {effects:#?}"))
}

/// How `command` settled among `effects`, if it did.
pub fn settled(effects: &[Effect], command: CommandId) -> Option<&Result<Settled, SessionError>> {
    effects.iter().find_map(|e| match e {
        Effect::Settle {
            command: c,
            outcome,
        } if *c == command => Some(outcome),
        _ => None,
    })
}
