//! The frames a leading tab keeps while no follower listens (issue 19, W3; the rule is in
//! [`super::tabs`]).
//!
//! Why here and not in the executor: handing every frame to the page's tab layer (two `String`
//! copies, a UTF-8 → UTF-16 decode, a JS call, an array slot) cost a tab alone on its session
//! ≈60 ms a second at 2,000 frames/s, for frames nobody asked for. Here a frame costs a copy of
//! its bytes onto the end of one buffer and an offset: no allocation per frame once the buffer
//! has grown. The frames are handed over ([`KeptFrames::take`]) only when a follower appears.
use alloc::string::String;
use alloc::vec::Vec;

/// At most this many frames are kept; past it the oldest half goes. A tail is enough: a tab that
/// opens mid-stream reads the history first and needs only the frames since (about a second's
/// worth); one that needs older ones rebuilds from the listings. Keeping the whole turn cost W1
/// ≈10 MB of wasm memory (18.8× its text) that linear memory never gives back.
pub const MAX_KEPT_FRAMES: usize = 2_048;
/// At most this many bytes of frame data are kept (UTF-8, 256 KiB); past it the oldest half goes.
pub const MAX_KEPT_BYTES: usize = 256 * 1024;

/// The contiguous, ascending frames of one turn, in two halves: new frames go onto `newer`;
/// when it holds half the caps (frames or bytes), `older` is dropped and `newer` becomes it.
///
/// Why halves and not one buffer cut at its front: dropping the oldest half of one buffer
/// moved the other half (≈128 KiB) to the front every ~1,000 frames, 7% of the SDK's W1
/// in-page time in the wasm (BENCHMARKS.md, `String::Drain::drop`); swapping two buffers moves
/// nothing and keeps both allocations for reuse.
#[derive(Debug, Default)]
pub(super) struct KeptFrames {
    turn_id: String,
    older: Half,
    newer: Half,
}

/// Frames `first`, `first + 1`, … one after the other in `text`.
#[derive(Debug, Default)]
struct Half {
    /// The sequence number of the first frame.
    first: u64,
    /// Every frame's `data`, one after the other.
    text: String,
    /// Where each frame's `data` ends in `text`.
    ends: Vec<usize>,
}

impl Half {
    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    /// The sequence number the next frame must have.
    fn next(&self) -> u64 {
        self.first.saturating_add(self.ends.len() as u64)
    }

    fn frames(&self) -> impl Iterator<Item = (u64, &str)> + '_ {
        let starts = core::iter::once(0).chain(self.ends.iter().copied());
        self.ends
            .iter()
            .zip(starts)
            .enumerate()
            .map(|(i, (&end, start))| {
                let data = self.text.get(start..end).unwrap_or_default();
                (self.first.saturating_add(i as u64), data)
            })
    }
}

impl KeptFrames {
    /// Whether nothing is kept.
    pub(super) fn is_empty(&self) -> bool {
        self.older.ends.is_empty() && self.newer.ends.is_empty()
    }

    /// Keeps frame `seq` of `turn_id`: a frame of another turn, or one that does not follow the
    /// newest kept, starts the kept frames again; one at or below the newest is a duplicate.
    pub(super) fn push(&mut self, turn_id: &str, seq: u64, data: &str) {
        let next = self.newer.next();
        if self.turn_id != turn_id || self.is_empty() || seq > next {
            self.clear();
            if self.turn_id != turn_id {
                self.turn_id = String::from(turn_id);
            }
            self.newer.first = seq;
        } else if seq < next {
            return;
        }
        if data.len() > MAX_KEPT_BYTES {
            // Over the cap alone: nothing is kept, and the next frame starts again.
            self.clear();
            return;
        }
        if self.newer.ends.len() >= MAX_KEPT_FRAMES / 2
            || self.newer.text.len().saturating_add(data.len()) > MAX_KEPT_BYTES / 2
        {
            // The older half goes; its buffers are reused for the frames from here on.
            core::mem::swap(&mut self.older, &mut self.newer);
            self.newer.clear();
            self.newer.first = seq;
        }
        let bytes = self.older.text.len() + self.newer.text.len() + data.len();
        if bytes > MAX_KEPT_BYTES {
            // A frame over half the byte cap makes a half of its own: the older one goes too.
            self.older.clear();
        }
        self.newer.text.push_str(data);
        self.newer.ends.push(self.newer.text.len());
    }

    /// The kept frames, `(turn_id, [(sequence_number, data)])`, oldest first; none are kept after.
    pub(super) fn take(&mut self) -> Option<(String, Vec<(u64, String)>)> {
        if self.is_empty() {
            return None;
        }
        let mut frames = Vec::with_capacity(self.older.ends.len() + self.newer.ends.len());
        for (seq, data) in self.older.frames().chain(self.newer.frames()) {
            frames.push((seq, String::from(data)));
        }
        self.clear();
        Some((self.turn_id.clone(), frames))
    }

    fn clear(&mut self) {
        self.older.clear();
        self.newer.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec;

    fn taken(k: &mut KeptFrames) -> (String, Vec<(u64, String)>) {
        k.take().unwrap_or_default()
    }

    #[test]
    fn keeps_contiguous_frames_of_one_turn_and_hands_them_over_once() {
        let mut k = KeptFrames::default();
        assert!(k.take().is_none());
        k.push("t1", 4, "a");
        k.push("t1", 5, "bé");
        k.push("t1", 5, "dup");
        k.push("t1", 3, "old");
        k.push("t1", 6, "");
        assert_eq!(
            taken(&mut k),
            (
                "t1".into(),
                vec![(4, "a".into()), (5, "bé".into()), (6, String::new())]
            )
        );
        assert!(k.is_empty() && k.take().is_none());
        // After a hand-over the next frame starts a new run.
        k.push("t1", 7, "c");
        assert_eq!(taken(&mut k), ("t1".into(), vec![(7, "c".into())]));
    }

    #[test]
    fn a_gap_or_another_turn_starts_again() {
        let mut k = KeptFrames::default();
        k.push("t1", 1, "a");
        k.push("t1", 3, "c");
        assert_eq!(taken(&mut k), ("t1".into(), vec![(3, "c".into())]));
        k.push("t1", 1, "a");
        k.push("t2", 1, "x");
        k.push("t2", 2, "y");
        assert_eq!(
            taken(&mut k),
            ("t2".into(), vec![(1, "x".into()), (2, "y".into())])
        );
    }

    #[test]
    fn past_the_cap_the_oldest_half_goes_and_numbers_stay_right() {
        let mut k = KeptFrames::default();
        // Every count of frames up to three caps: never more than the cap, never less than its
        // newest half, contiguous, ending at the newest, each with its own data.
        for pushed in [
            1,
            MAX_KEPT_FRAMES,
            MAX_KEPT_FRAMES + 1,
            3 * MAX_KEPT_FRAMES + 7,
        ] {
            for seq in 1..=pushed as u64 {
                k.push("t1", seq, &format!("{seq},"));
            }
            let (_, frames) = taken(&mut k);
            assert!(
                frames.len() <= MAX_KEPT_FRAMES,
                "{pushed}: {}",
                frames.len()
            );
            assert!(frames.len() >= pushed.min(MAX_KEPT_FRAMES / 2), "{pushed}");
            for (i, (seq, data)) in frames.iter().enumerate() {
                assert_eq!(data, &format!("{seq},"));
                assert_eq!(*seq, pushed as u64 + 1 - (frames.len() - i) as u64);
            }
        }
        // Bytes count too: two frames of over half the byte cap keep only the newest; small
        // frames after a big one push it out before the cap is passed; one over the cap alone
        // is not kept.
        let big = "x".repeat(MAX_KEPT_BYTES / 2 + 1);
        k.push("t1", 1, &big);
        k.push("t1", 2, &big);
        let (_, frames) = taken(&mut k);
        assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), vec![2]);
        k.push("t1", 1, &big);
        let small = "y".repeat(1000);
        for seq in 2..=200 {
            k.push("t1", seq, &small);
            let kept: usize = k.older.text.len() + k.newer.text.len();
            assert!(kept <= MAX_KEPT_BYTES, "{seq}: {kept}");
        }
        let (_, frames) = taken(&mut k);
        assert_eq!(frames.last().map(|f| f.0), Some(200));
        assert!(frames.iter().all(|f| f.1 == small));
        k.push("t1", 1, "a");
        k.push("t1", 2, &"z".repeat(MAX_KEPT_BYTES + 1));
        assert!(k.take().is_none());
    }
}
