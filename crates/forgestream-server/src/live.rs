//! Live turn streams: per turn, the encoded SSE frames of every event emitted so far (deltas
//! included), replayable from any sequence number, with TrueForge's retention rules
//! (PROTOCOL.md §4): a TTL refreshed by each event while running, a shorter one after
//! `turn.done`, and admission refused when less than a threshold remains.

use bytes::Bytes;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;
use tokio::time::{Duration, Instant};

/// Encodes one SSE frame exactly as TrueForge writes it: `data: <json>\nid: <seq>\n\n`
/// (data before id, no `event:` line; §3).
pub fn encode_frame(json: &str, sequence_number: u64) -> Bytes {
    Bytes::from(format!("data: {json}\nid: {sequence_number}\n\n"))
}

struct Inner {
    /// Frame `n` (0-based) has sequence number `n + 1`.
    frames: Vec<Bytes>,
    /// Sequence number of the `turn.done` frame, once written.
    done_seq: Option<u64>,
    expires_at: Instant,
}

/// The live stream of one turn.
pub struct LiveTurn {
    inner: Mutex<Inner>,
    /// Bumped on every append and on expiry, so waiting subscribers wake.
    version: watch::Sender<u64>,
    stream_ttl: Duration,
    done_ttl: Duration,
    /// Set when the owning worker "crashed" (`crash-after-events`): connections served by the
    /// owner are cut (a network error), nothing more is appended.
    crashed: AtomicBool,
}

/// What a subscriber reads in one go.
pub struct Snapshot {
    /// Frames with sequence numbers `from..`, in order.
    pub frames: Vec<(u64, Bytes)>,
    /// Sequence number of `turn.done`, if written.
    pub done_seq: Option<u64>,
    /// When the buffer expires.
    pub expires_at: Instant,
}

impl LiveTurn {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Appends one event's JSON, returning its sequence number (1-based, no gaps).
    /// `is_done` marks the `turn.done` frame and switches retention to the done TTL.
    pub fn append(&self, json: &str, is_done: bool) -> u64 {
        let seq = {
            let mut inner = self.lock();
            if inner.done_seq.is_some() || self.is_crashed() {
                // A stream ends with exactly one turn.done; nothing follows it.
                return inner.frames.len() as u64;
            }
            let seq = inner.frames.len() as u64 + 1;
            inner.frames.push(encode_frame(json, seq));
            if is_done {
                inner.done_seq = Some(seq);
                inner.expires_at = Instant::now() + self.done_ttl;
            } else {
                inner.expires_at = Instant::now() + self.stream_ttl;
            }
            seq
        };
        self.version.send_modify(|v| *v += 1);
        seq
    }

    /// Marks the owner as crashed and wakes every connection (those served by the owner then
    /// abort). Later appends are ignored.
    pub fn crash(&self) {
        self.crashed.store(true, Ordering::SeqCst);
        self.version.send_modify(|v| *v += 1);
    }

    /// Whether the owner crashed (see [`LiveTurn::crash`]).
    pub fn is_crashed(&self) -> bool {
        self.crashed.load(Ordering::SeqCst)
    }

    /// Number of frames written so far (the last sequence number).
    pub fn len(&self) -> u64 {
        self.lock().frames.len() as u64
    }

    /// Whether nothing has been written yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `turn.done` was written.
    pub fn is_done(&self) -> bool {
        self.lock().done_seq.is_some()
    }

    /// Frames after the exclusive cursor `after`.
    pub fn snapshot_after(&self, after: u64) -> Snapshot {
        let inner = self.lock();
        let start = (after as usize).min(inner.frames.len());
        Snapshot {
            frames: inner.frames[start..]
                .iter()
                .enumerate()
                .map(|(i, f)| ((start + i) as u64 + 1, f.clone()))
                .collect(),
            done_seq: inner.done_seq,
            expires_at: inner.expires_at,
        }
    }

    /// When the buffer expires.
    pub fn expires_at(&self) -> Instant {
        self.lock().expires_at
    }

    /// A receiver that changes on every append.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// Approximate heap bytes held by the frames (for the memory report).
    pub fn frame_bytes(&self) -> usize {
        self.lock().frames.iter().map(Bytes::len).sum()
    }
}

/// All live turns by turn id.
pub struct LiveRegistry {
    turns: Mutex<HashMap<String, Arc<LiveTurn>>>,
    stream_ttl: Duration,
    done_ttl: Duration,
}

impl LiveRegistry {
    /// A registry whose buffers use these TTLs.
    pub fn new(stream_ttl: Duration, done_ttl: Duration) -> Self {
        Self {
            turns: Mutex::new(HashMap::new()),
            stream_ttl,
            done_ttl,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<LiveTurn>>> {
        match self.turns.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Creates the live buffer of a new turn.
    pub fn create(&self, turn_id: &str) -> Arc<LiveTurn> {
        let (version, _) = watch::channel(0);
        let live = Arc::new(LiveTurn {
            inner: Mutex::new(Inner {
                frames: Vec::new(),
                done_seq: None,
                expires_at: Instant::now() + self.stream_ttl,
            }),
            version,
            stream_ttl: self.stream_ttl,
            done_ttl: self.done_ttl,
            crashed: AtomicBool::new(false),
        });
        self.lock().insert(turn_id.to_owned(), live.clone());
        live
    }

    /// The live buffer of a turn, unless it never existed here or has expired.
    pub fn get(&self, turn_id: &str) -> Option<Arc<LiveTurn>> {
        let mut turns = self.lock();
        let live = turns.get(turn_id)?.clone();
        if live.expires_at() <= Instant::now() {
            turns.remove(turn_id);
            live.version.send_modify(|v| *v += 1);
            return None;
        }
        Some(live)
    }

    /// Forgets a turn's buffer at once (its owner crashed: the stream is gone, subscribe 412).
    pub fn remove(&self, turn_id: &str) {
        if let Some(live) = self.lock().remove(turn_id) {
            live.version.send_modify(|v| *v += 1);
        }
    }

    /// Live buffers of turns whose `turn.done` is not written yet (graceful shutdown ends them).
    pub fn unfinished(&self) -> Vec<(String, Arc<LiveTurn>)> {
        self.lock()
            .iter()
            .filter(|(_, live)| !live.is_done() && !live.is_crashed())
            .map(|(id, live)| (id.clone(), live.clone()))
            .collect()
    }

    /// Drops expired buffers and wakes their subscribers (their streams then close).
    /// Returns how many were dropped.
    pub fn sweep(&self) -> usize {
        let now = Instant::now();
        let mut turns = self.lock();
        let expired: Vec<String> = turns
            .iter()
            .filter(|(_, live)| live.expires_at() <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            if let Some(live) = turns.remove(id) {
                live.version.send_modify(|v| *v += 1);
            }
        }
        expired.len()
    }

    /// Number of buffers held.
    pub fn count(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_numbered_from_one_and_replay_after_the_cursor() {
        let registry = LiveRegistry::new(Duration::from_secs(60), Duration::from_secs(5));
        let live = registry.create("t");
        assert_eq!(live.append("{\"a\":1}", false), 1);
        assert_eq!(live.append("{\"a\":2}", false), 2);
        assert_eq!(live.append("{\"a\":3}", true), 3);
        assert_eq!(
            live.append("{\"late\":1}", false),
            3,
            "nothing after turn.done"
        );
        let snap = live.snapshot_after(1);
        assert_eq!(snap.frames.len(), 2);
        assert_eq!(snap.frames[0].0, 2);
        assert_eq!(&snap.frames[0].1[..], b"data: {\"a\":2}\nid: 2\n\n");
        assert_eq!(snap.done_seq, Some(3));
        assert!(live.snapshot_after(10).frames.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn buffers_expire_after_the_done_ttl() {
        let registry = LiveRegistry::new(Duration::from_secs(60), Duration::from_secs(5));
        let live = registry.create("t");
        live.append("{}", true);
        tokio::time::advance(Duration::from_secs(4)).await;
        assert!(registry.get("t").is_some());
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(registry.get("t").is_none());
        assert_eq!(registry.count(), 0);
    }
}
