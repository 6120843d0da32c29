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

/// The contiguous, ascending frames of one turn.
#[derive(Debug, Default)]
pub(super) struct KeptFrames {
    turn_id: String,
    /// The sequence number of the first kept frame.
    first: u64,
    /// Every kept frame's `data`, one after the other.
    text: String,
    /// Where each frame's `data` ends in `text`.
    ends: Vec<usize>,
}

impl KeptFrames {
    /// Whether nothing is kept.
    pub(super) fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Keeps frame `seq` of `turn_id`: a frame of another turn, or one that does not follow the
    /// newest kept, starts the kept frames again; one at or below the newest is a duplicate.
    pub(super) fn push(&mut self, turn_id: &str, seq: u64, data: &str) {
        let next = self.first.saturating_add(self.ends.len() as u64);
        if self.turn_id != turn_id || self.is_empty() || seq > next {
            self.clear();
            if self.turn_id != turn_id {
                self.turn_id = String::from(turn_id);
            }
            self.first = seq;
        } else if seq < next {
            return;
        }
        self.text.push_str(data);
        self.ends.push(self.text.len());
        if self.ends.len() > MAX_KEPT_FRAMES || self.text.len() > MAX_KEPT_BYTES {
            self.drop_oldest_half();
        }
    }

    /// The kept frames, `(turn_id, [(sequence_number, data)])`, oldest first; none are kept after.
    pub(super) fn take(&mut self) -> Option<(String, Vec<(u64, String)>)> {
        if self.is_empty() {
            return None;
        }
        let mut frames = Vec::with_capacity(self.ends.len());
        let mut start = 0;
        for (i, &end) in self.ends.iter().enumerate() {
            let data = self.text.get(start..end).unwrap_or_default();
            frames.push((self.first.saturating_add(i as u64), String::from(data)));
            start = end;
        }
        self.clear();
        Some((self.turn_id.clone(), frames))
    }

    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    fn drop_oldest_half(&mut self) {
        let drop = self.ends.len().div_ceil(2);
        let cut = self.ends.get(drop - 1).copied().unwrap_or(0);
        self.text.drain(..cut);
        self.ends.drain(..drop);
        for end in &mut self.ends {
            *end -= cut;
        }
        self.first = self.first.saturating_add(drop as u64);
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
        for seq in 1..=(MAX_KEPT_FRAMES as u64 + 1) {
            k.push("t1", seq, &format!("{seq},"));
        }
        let (_, frames) = taken(&mut k);
        let pushed = MAX_KEPT_FRAMES + 1;
        assert_eq!(frames.len(), pushed - pushed.div_ceil(2));
        for (seq, data) in &frames {
            assert_eq!(data, &format!("{seq},"));
        }
        assert_eq!(frames.last().map(|f| f.0), Some(MAX_KEPT_FRAMES as u64 + 1));
        // Bytes count too: two frames of over half the byte cap keep only the newest.
        let big = "x".repeat(MAX_KEPT_BYTES / 2 + 1);
        k.push("t1", 1, &big);
        k.push("t1", 2, &big);
        let (_, frames) = taken(&mut k);
        assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), vec![2]);
    }
}
