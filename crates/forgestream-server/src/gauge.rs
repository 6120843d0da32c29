//! How many live SSE connections (create-turn streams and subscribes) each session has open at
//! once, for tests that check one connection per session across tabs (issue 14). Read with
//! `GET /_emulator/streams/{sid}` → `{"open": n, "max": m, "opened": t}`: `open` now, `max` the
//! most open at one moment since the session's first stream (or the last reset), `opened` every
//! stream ever opened; `POST /_emulator/streams/{sid}/reset` sets `max` to `open`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Open / most-open / opened counts of one session's live streams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StreamCounts {
    /// Streams open now.
    pub open: u64,
    /// The most open at one moment.
    pub max: u64,
    /// Streams ever opened.
    pub opened: u64,
}

/// The counts of every session (shared by the runtime and each stream's guard).
#[derive(Debug, Default)]
pub struct StreamGauge {
    counts: Mutex<HashMap<String, StreamCounts>>,
}

/// Held by one stream's body: dropping it (the body ended, or the client went away) closes the
/// stream in the counts.
pub struct OpenStream {
    gauge: Arc<StreamGauge>,
    session: String,
}

impl StreamGauge {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, StreamCounts>> {
        match self.counts.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Counts one more open stream of `session` until the returned guard drops.
    pub fn open(self: &Arc<Self>, session: &str) -> OpenStream {
        let mut counts = self.lock();
        let c = counts.entry(session.to_owned()).or_default();
        c.open += 1;
        c.opened += 1;
        c.max = c.max.max(c.open);
        OpenStream {
            gauge: self.clone(),
            session: session.to_owned(),
        }
    }

    /// The counts of `session` (zeros when it never streamed).
    pub fn counts(&self, session: &str) -> StreamCounts {
        self.lock().get(session).copied().unwrap_or_default()
    }

    /// Sets `max` to what is open now.
    pub fn reset(&self, session: &str) -> StreamCounts {
        let mut counts = self.lock();
        let c = counts.entry(session.to_owned()).or_default();
        c.max = c.open;
        *c
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        let mut counts = self.gauge.lock();
        if let Some(c) = counts.get_mut(&self.session) {
            c.open = c.open.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_open_streams_and_the_most_at_once() {
        let gauge = Arc::new(StreamGauge::default());
        let a = gauge.open("s");
        let b = gauge.open("s");
        drop(a);
        let _c = gauge.open("s");
        assert_eq!(
            gauge.counts("s"),
            StreamCounts {
                open: 2,
                max: 2,
                opened: 3
            }
        );
        drop(b);
        assert_eq!(
            gauge.reset("s"),
            StreamCounts {
                open: 1,
                max: 1,
                opened: 3
            }
        );
        assert_eq!(gauge.counts("other"), StreamCounts::default());
    }
}
