//! Fault injection (README "Fault injection"): a small comma-separated spec such as
//! `drop-at-byte=777,once` or `status=503,on=create`, taken from the `x-forgestream-fault`
//! header, the `fault` query parameter, the spec stored on the session at creation, or the
//! server-wide `--fault` — the first present wins, no merging.

use crate::error::ApiError;
use axum::http::StatusCode;
use std::collections::HashMap;
use std::sync::Mutex;

/// Which request a fault is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// `POST …/sessions`.
    CreateSession,
    /// `POST …/sessions/{sid}/turns` (its SSE body included).
    CreateTurn,
    /// `GET|POST …/turns/{tid}/subscribe`.
    Subscribe,
    /// Any other API request (only `status=` with `on=all` reaches these).
    Other,
}

/// A parsed fault spec. Unset fields inject nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultSpec {
    /// The spec text as given; part of the `once`/`times` ledger key.
    pub text: String,
    /// Abort the connection after writing this many frames (an incomplete chunked body).
    pub drop_after_events: Option<u64>,
    /// Abort the connection after exactly this many body bytes (may split a UTF-8 character).
    pub drop_at_byte: Option<u64>,
    /// Write each frame in random pieces of `min..=max` bytes (separate HTTP chunks).
    pub split: Option<(usize, usize)>,
    /// Replay from sequence 1 whatever cursor was sent (subscribe only).
    pub ignore_cursor: bool,
    /// Answer a subscribe with the real 412 body.
    pub force_412: bool,
    /// Answer with this HTTP status and a JSON error instead of serving the request.
    pub status: Option<u16>,
    /// `Retry-After` seconds sent with `status=`.
    pub retry_after_s: Option<u64>,
    /// Write a `: heartbeat` comment when idle this long (ms).
    pub heartbeat_ms: Option<u64>,
    /// Wait this long (ms) before each frame.
    pub drip_ms: Option<u64>,
    /// Close the stream cleanly instead of writing `turn.done` (like a subscribe timeout).
    pub end_without_done: bool,
    /// Close the stream (without `turn.done`) after this many ms.
    pub subscribe_timeout_ms: Option<u64>,
    /// A stalled read: after writing this many frames (0: right after the headers) the
    /// connection writes nothing more and stays open — no bytes, no EOF — until the subscribe
    /// timeout or the client leaves. The turn goes on; a new connection gets its frames.
    pub stall_after_events: Option<u64>,
    /// Like a proxy's idle timeout: cut the connection (a network error, as a proxy's reset
    /// looks to the browser) once it has written nothing for this many ms. Frames and
    /// heartbeats count as writes.
    pub idle_cut_ms: Option<u64>,
    /// Simulates a crash of the turn's worker after this many frames of the turn's stream
    /// (`turn.created` counts): the worker stops, the live buffer is gone (open streams are cut),
    /// the turn stays `running` in the store — what a `kill -9` of the real server leaves.
    /// Applies to turn creation (`on=create`); `once` = the session's first turn only.
    pub crash_after_events: Option<u64>,
    /// Multi-replica delivery for this request (README "Multi-replica mode"): a subscribe is
    /// served by polling the live buffer, sleeping this many ms whenever nothing is new; a
    /// cancel is relayed to the owner (≥ `--replica-cancel-delay-ms`).
    pub replica_poll_ms: Option<u64>,
    /// Seed for `split` piece sizes.
    pub seed: u64,
    /// Apply to only the first N matching requests per turn (`once` = 1); `None` = always.
    pub times: Option<u32>,
    /// Request kinds this applies to; default: create turn and subscribe.
    pub on: Vec<RequestKind>,
}

fn number<T: std::str::FromStr>(key: &str, value: Option<&str>) -> Result<T, ApiError> {
    value
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| ApiError::bad_request(format!("Invalid fault spec: {key} needs a number")))
}

impl FaultSpec {
    /// Parses a spec; an unknown key or bad value is a 400.
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        let mut spec = FaultSpec {
            text: text.trim().to_owned(),
            ..FaultSpec::default()
        };
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = match part.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (part, None),
            };
            match key {
                "drop-after-events" => spec.drop_after_events = Some(number(key, value)?),
                "drop-at-byte" => spec.drop_at_byte = Some(number(key, value)?),
                "split" => {
                    let v = value.unwrap_or("");
                    let (lo, hi) = v.split_once("..").unwrap_or((v, v));
                    let lo: usize = number(key, Some(lo))?;
                    let hi: usize = number(key, Some(hi.trim_start_matches('=')))?;
                    if lo == 0 || hi < lo {
                        return Err(ApiError::bad_request(
                            "Invalid fault spec: split=MIN..MAX needs 1 <= MIN <= MAX",
                        ));
                    }
                    spec.split = Some((lo, hi));
                }
                "ignore-cursor" => spec.ignore_cursor = true,
                "force-412" => spec.force_412 = true,
                "status" => {
                    let code: u16 = number(key, value)?;
                    // `StatusCode` accepts 100..=999; only real error classes make sense here.
                    if !(400..=599).contains(&code) {
                        return Err(ApiError::bad_request(
                            "Invalid fault spec: status must be an HTTP error status",
                        ));
                    }
                    spec.status = Some(code);
                }
                "retry-after" => spec.retry_after_s = Some(number(key, value)?),
                "heartbeat-ms" => spec.heartbeat_ms = Some(number::<u64>(key, value)?.max(1)),
                "drip-ms" => spec.drip_ms = Some(number(key, value)?),
                "end-without-done" => spec.end_without_done = true,
                "subscribe-timeout-ms" => spec.subscribe_timeout_ms = Some(number(key, value)?),
                "stall-after-events" => spec.stall_after_events = Some(number(key, value)?),
                "idle-cut-ms" => spec.idle_cut_ms = Some(number::<u64>(key, value)?.max(1)),
                "crash-after-events" => spec.crash_after_events = Some(number(key, value)?),
                "replica-poll-ms" => {
                    spec.replica_poll_ms = Some(number::<u64>(key, value)?.clamp(1, 60_000))
                }
                "seed" => spec.seed = number(key, value)?,
                "once" => spec.times = Some(1),
                "times" => spec.times = Some(number(key, value)?),
                "on" => {
                    for kind in value.unwrap_or("").split('+') {
                        match kind {
                            "create" => spec.on.push(RequestKind::CreateTurn),
                            "subscribe" => spec.on.push(RequestKind::Subscribe),
                            "session" => spec.on.push(RequestKind::CreateSession),
                            "all" => spec.on.extend([
                                RequestKind::CreateSession,
                                RequestKind::CreateTurn,
                                RequestKind::Subscribe,
                                RequestKind::Other,
                            ]),
                            other => {
                                return Err(ApiError::bad_request(format!(
                                    "Invalid fault spec: unknown on={other}"
                                )))
                            }
                        }
                    }
                }
                other => {
                    return Err(ApiError::bad_request(format!(
                        "Invalid fault spec: unknown key {other}"
                    )))
                }
            }
        }
        if spec.on.is_empty() {
            spec.on = vec![RequestKind::CreateTurn, RequestKind::Subscribe];
        }
        Ok(spec)
    }

    /// Whether this spec targets `kind` at all.
    pub fn targets(&self, kind: RequestKind) -> bool {
        self.on.contains(&kind)
    }

    /// The injected error for `status=`, if any.
    pub fn status_error(&self) -> Option<ApiError> {
        let code = StatusCode::from_u16(self.status?).ok()?;
        let mut err = ApiError::new(
            code,
            format!(
                "Injected fault: {} {}",
                code.as_u16(),
                code.canonical_reason().unwrap_or("error")
            ),
        );
        err.retry_after_s = self
            .retry_after_s
            .or((code == StatusCode::TOO_MANY_REQUESTS || code.as_u16() == 503).then_some(1));
        Some(err)
    }
}

/// Counts how often each (scope, spec) pair fired, for `once` / `times=N`.
#[derive(Default)]
pub struct FaultLedger {
    counts: Mutex<HashMap<String, u32>>,
}

impl FaultLedger {
    /// Whether the fault may fire for this request; counts it when it does.
    /// `scope` is the turn id (or `<session>/create` for turn creation).
    pub fn admit(&self, spec: &FaultSpec, scope: &str) -> bool {
        let Some(times) = spec.times else {
            return true;
        };
        let mut counts = match self.counts.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let count = counts.entry(format!("{scope}|{}", spec.text)).or_insert(0);
        if *count < times {
            *count += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_keys() {
        let spec = FaultSpec::parse(
            "drop-after-events=5, drop-at-byte=123,split=1..7,ignore-cursor,force-412,status=503,heartbeat-ms=200,drip-ms=50,end-without-done,seed=42,once",
        )
        .unwrap();
        assert_eq!(spec.drop_after_events, Some(5));
        assert_eq!(spec.drop_at_byte, Some(123));
        assert_eq!(spec.split, Some((1, 7)));
        assert!(spec.ignore_cursor && spec.force_412 && spec.end_without_done);
        assert_eq!(spec.status, Some(503));
        assert_eq!(spec.heartbeat_ms, Some(200));
        assert_eq!(spec.drip_ms, Some(50));
        assert_eq!(spec.seed, 42);
        assert_eq!(spec.times, Some(1));
        let spec = FaultSpec::parse("stall-after-events=0,idle-cut-ms=1000").unwrap();
        assert_eq!(spec.stall_after_events, Some(0));
        assert_eq!(spec.idle_cut_ms, Some(1000));
        assert!(spec.targets(RequestKind::CreateTurn) && spec.targets(RequestKind::Subscribe));
        assert!(!spec.targets(RequestKind::CreateSession));
    }

    #[test]
    fn rejects_unknown_keys_and_bad_values() {
        assert!(FaultSpec::parse("explode").is_err());
        assert!(FaultSpec::parse("drop-at-byte=x").is_err());
        assert!(FaultSpec::parse("split=5..2").is_err());
        assert!(FaultSpec::parse("status=200").is_err());
        // 999 is a valid `StatusCode` for the http crate, but no HTTP error status.
        assert!(FaultSpec::parse("status=999").is_err());
        assert!(FaultSpec::parse("status=600").is_err());
        assert!(FaultSpec::parse("status=599").is_ok());
        assert!(FaultSpec::parse("crash-after-events=x").is_err());
        assert!(FaultSpec::parse("stall-after-events=x").is_err());
        assert!(FaultSpec::parse("idle-cut-ms").is_err());
        assert!(FaultSpec::parse("on=nowhere").is_err());
    }

    #[test]
    fn once_fires_once_per_scope() {
        let ledger = FaultLedger::default();
        let spec = FaultSpec::parse("drop-at-byte=9,once").unwrap();
        assert!(ledger.admit(&spec, "t1"));
        assert!(!ledger.admit(&spec, "t1"));
        assert!(ledger.admit(&spec, "t2"));
        let always = FaultSpec::parse("drop-at-byte=9").unwrap();
        assert!(ledger.admit(&always, "t1") && ledger.admit(&always, "t1"));
    }
}
