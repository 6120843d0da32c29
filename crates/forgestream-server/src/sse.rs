//! The SSE response body of a create-turn or subscribe request: replay the live buffer after
//! the exclusive cursor, follow it live, end after writing `turn.done` (PROTOCOL.md §3), and
//! apply the connection's stream faults on the way out.

use crate::fault::FaultSpec;
use crate::live::LiveTurn;
use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use tokio::time::{sleep, sleep_until, Duration, Instant};

/// How one SSE connection is served.
pub struct StreamPlan {
    /// Exclusive cursor: the first frame written has sequence number `after + 1`.
    pub after: u64,
    /// Stream faults for this connection (already admitted by the ledger).
    pub fault: Option<FaultSpec>,
    /// Close without `turn.done` after this long (TrueForge `TURN_SUBSCRIBE_TIMEOUT_MS`).
    pub subscribe_timeout: Duration,
    /// Whether the turn's owner serves this connection, so that a (simulated) crash of the
    /// owner cuts it. With one replica every connection is the owner's; in multi-replica mode
    /// only the creating stream is.
    pub served_by_owner: bool,
    /// Multi-replica delivery: read the buffer, and sleep this long whenever nothing was new
    /// (TrueForge's Redis poll); `None` = woken on every append.
    pub poll: Option<Duration>,
    /// Counts this connection as open for its session until the body drops
    /// ([`crate::gauge`]); `None`: not counted.
    pub open: Option<crate::gauge::OpenStream>,
}

fn dropped() -> std::io::Error {
    std::io::Error::other("forgestream fault: connection dropped")
}

/// Builds the 200 `text/event-stream` response with TrueForge's headers.
pub fn sse_response(live: Arc<LiveTurn>, plan: StreamPlan) -> Response {
    let served_by_owner = plan.served_by_owner;
    let poll = plan.poll;
    let fault = plan.fault.unwrap_or_default();
    let after = if fault.ignore_cursor { 0 } else { plan.after };
    let timeout = fault
        .subscribe_timeout_ms
        .map(Duration::from_millis)
        .unwrap_or(plan.subscribe_timeout);
    let idle_cut = fault.idle_cut_ms.map(Duration::from_millis);
    let open = plan.open;
    let body = async_stream::stream! {
        // Dropped with the body: the connection no longer counts as open.
        let _open = open;
        let deadline = Instant::now() + timeout;
        // When this connection last wrote a byte (the `idle-cut-ms` proxy cuts after silence).
        let mut last_write = Instant::now();
        // `stall-after-events`: the read stalls — nothing more is written, the body stays open.
        let mut stalled = fault.stall_after_events == Some(0);
        let mut rx = live.watch();
        let mut cursor = after;
        let mut frames_written = 0u64;
        let mut bytes_written = 0u64;
        let mut rng = ChaCha8Rng::seed_from_u64(fault.seed);
        loop {
            if stalled {
                // Headers (and maybe some frames) sent, then nothing: only the subscribe timeout,
                // the proxy's idle cut or the client ends it.
                let cut_at = idle_cut.map(|d| last_write + d);
                tokio::select! {
                    _ = sleep_until(deadline) => return,
                    _ = sleep_until(cut_at.unwrap_or(deadline)), if cut_at.is_some() => {
                        yield Err(dropped());
                        return;
                    }
                }
            }
            rx.borrow_and_update();
            let snapshot = live.snapshot_after(cursor);
            let got_frames = !snapshot.frames.is_empty();
            for (seq, frame) in snapshot.frames {
                cursor = seq;
                let is_done = snapshot.done_seq == Some(seq);
                if is_done && fault.end_without_done {
                    return;
                }
                if let Some(ms) = fault.drip_ms {
                    sleep(Duration::from_millis(ms)).await;
                }
                let mut pieces: Vec<Bytes> = Vec::new();
                match fault.split {
                    Some((lo, hi)) => {
                        let mut rest = frame;
                        while !rest.is_empty() {
                            let n = rng.gen_range(lo..=hi).min(rest.len());
                            pieces.push(rest.split_to(n));
                        }
                    }
                    None => pieces.push(frame),
                }
                for piece in pieces {
                    if let Some(limit) = fault.drop_at_byte {
                        if bytes_written + piece.len() as u64 >= limit {
                            let keep = (limit - bytes_written) as usize;
                            if keep > 0 {
                                yield Ok::<Bytes, std::io::Error>(piece.slice(..keep));
                            }
                            // Let the prefix reach the socket before the abort.
                            sleep(Duration::from_millis(30)).await;
                            yield Err(dropped());
                            return;
                        }
                    }
                    bytes_written += piece.len() as u64;
                    last_write = Instant::now();
                    yield Ok(piece);
                    if fault.split.is_some() {
                        tokio::task::yield_now().await;
                    }
                }
                frames_written += 1;
                if fault.drop_after_events == Some(frames_written) {
                    sleep(Duration::from_millis(30)).await;
                    yield Err(dropped());
                    return;
                }
                if is_done {
                    return;
                }
                if fault.stall_after_events == Some(frames_written) {
                    stalled = true;
                    break;
                }
            }
            if stalled {
                continue;
            }
            if live.is_crashed() && served_by_owner {
                sleep(Duration::from_millis(30)).await;
                yield Err(dropped());
                return;
            }
            if live.expires_at() <= Instant::now() {
                return;
            }
            // A cursor at or past the end of a finished turn lands here and waits, like the
            // real server, until the subscribe timeout or the buffer's expiry.
            if poll.is_some() && got_frames {
                // A poll that found something reads again at once; only an empty read sleeps.
                continue;
            }
            let heartbeat = fault.heartbeat_ms.map(Duration::from_millis);
            let cut_at = idle_cut.map(|d| last_write + d);
            let mut beat = false;
            let mut cut = false;
            tokio::select! {
                changed = rx.changed(), if poll.is_none() => {
                    if changed.is_err() {
                        return;
                    }
                }
                _ = sleep(poll.unwrap_or_default()), if poll.is_some() => {}
                _ = sleep_until(deadline) => return,
                _ = sleep_until(snapshot.expires_at) => {}
                _ = sleep(heartbeat.unwrap_or(Duration::from_secs(3600))), if heartbeat.is_some() => {
                    beat = true;
                }
                _ = sleep_until(cut_at.unwrap_or(deadline)), if cut_at.is_some() => {
                    cut = true;
                }
            }
            if cut {
                // A proxy closing a connection that wrote nothing for `idle-cut-ms`.
                yield Err(dropped());
                return;
            }
            if beat {
                last_write = Instant::now();
                yield Ok(Bytes::from_static(b": heartbeat\n\n"));
            }
        }
    };
    let mut response = Response::new(Body::from_stream(body));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
    response
}
