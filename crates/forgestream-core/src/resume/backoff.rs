//! Exponential backoff with full jitter, driven by a seeded splitmix64 generator.
//!
//! The core has no randomness source, so the caller seeds it ([`Config::jitter_seed`]).
//!
//! [`Config::jitter_seed`]: super::Config::jitter_seed

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, good enough to spread reconnects.
#[derive(Debug, Clone)]
pub(crate) struct Jitter {
    state: u64,
}

impl Jitter {
    pub(crate) fn new(seed: u64) -> Self {
        Jitter { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value uniform in `[0, max]` (inclusive). The modulo bias is below 2^-40 for any
    /// delay a browser could wait, which is irrelevant for spreading reconnects.
    pub(crate) fn up_to(&mut self, max: u64) -> u64 {
        let raw = self.next_u64();
        match max.checked_add(1) {
            Some(span) => raw % span,
            None => raw,
        }
    }
}

/// The delay of attempt `attempt` (1-based): uniform in `[floor, max(floor, ceiling)]` with
/// `floor = min(floor_ms, cap_ms)` — full jitter, never below the floor, never above the cap.
pub(crate) fn delay(
    jitter: &mut Jitter,
    base_ms: u64,
    floor_ms: u64,
    cap_ms: u64,
    attempt: u32,
) -> u64 {
    let floor = floor_ms.min(cap_ms);
    let top = ceiling(base_ms, cap_ms, attempt).max(floor);
    floor.saturating_add(jitter.up_to(top - floor))
}

/// The ceiling of attempt `attempt` (1-based): `min(cap, base · 2^(attempt-1))`, saturating.
pub(crate) fn ceiling(base_ms: u64, cap_ms: u64, attempt: u32) -> u64 {
    let shift = attempt.saturating_sub(1);
    let grown = if shift >= 64 {
        if base_ms == 0 {
            0
        } else {
            u64::MAX
        }
    } else {
        let factor = 1u64 << shift;
        base_ms.saturating_mul(factor)
    };
    grown.min(cap_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_grows_then_caps() {
        assert_eq!(ceiling(500, 30_000, 1), 500);
        assert_eq!(ceiling(500, 30_000, 2), 1_000);
        assert_eq!(ceiling(500, 30_000, 7), 30_000);
        assert_eq!(ceiling(500, 30_000, 200), 30_000);
        assert_eq!(ceiling(0, 30_000, 200), 0);
        assert_eq!(ceiling(u64::MAX, u64::MAX, 3), u64::MAX);
    }

    #[test]
    fn jitter_stays_in_range_and_is_reproducible() {
        let mut a = Jitter::new(7);
        let mut b = Jitter::new(7);
        for max in [0u64, 1, 10, 500, 30_000, u64::MAX] {
            let x = a.up_to(max);
            assert!(x <= max);
            assert_eq!(x, b.up_to(max));
        }
        assert_eq!(Jitter::new(1).up_to(0), 0);
    }

    #[test]
    fn delays_keep_the_floor_and_the_cap() {
        let mut j = Jitter::new(9);
        for attempt in 1..40 {
            for (base, floor, cap) in [
                (0, 250, 30_000),
                (20, 250, 200),
                (500, 250, 30_000),
                (1, 0, 5),
            ] {
                let d = delay(&mut j, base, floor, cap, attempt);
                assert!(d >= floor.min(cap) && d <= cap, "{base} {floor} {cap}: {d}");
            }
        }
        // A zero base (`retry: 0` without a floor on the field) still waits the floor.
        assert!((0..100).all(|_| delay(&mut j, 0, 250, 30_000, 1) == 250));
    }

    /// The generator is splitmix64 exactly: its published first outputs for seed 0 (any change to
    /// its constants, shifts or operations changes them).
    #[test]
    fn jitter_is_splitmix64() {
        let mut j = Jitter::new(0);
        assert_eq!(j.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(j.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(j.next_u64(), 0x06c4_5d18_8009_454f);
    }

    /// Full jitter spreads the delays of one attempt evenly over `[floor, ceiling]`: 20,000
    /// draws in 10 equal buckets each hold 10 % ± 1.5 %, the mean is the middle ± 1 %, and both
    /// ends are reached (a narrowed or shifted spread synchronises reconnecting clients).
    #[test]
    fn delays_spread_evenly_between_the_floor_and_the_ceiling() {
        let mut j = Jitter::new(0x5eed);
        let (floor, base, cap, attempt) = (250u64, 500u64, 30_000u64, 4u32);
        let top = ceiling(base, cap, attempt);
        assert_eq!(top, 4_000);
        let n = 20_000u64;
        let mut buckets = [0u64; 10];
        let (mut sum, mut lo, mut hi) = (0u64, u64::MAX, 0u64);
        for _ in 0..n {
            let d = delay(&mut j, base, floor, cap, attempt);
            let bucket = ((d - floor) * 10 / (top - floor + 1)) as usize;
            buckets[bucket] += 1;
            sum += d;
            lo = lo.min(d);
            hi = hi.max(d);
        }
        for (i, count) in buckets.iter().enumerate() {
            assert!(
                (1_700..=2_300).contains(count),
                "bucket {i}: {count} of {n} ({buckets:?})"
            );
        }
        let mean = sum / n;
        let middle = (floor + top) / 2;
        assert!(
            mean.abs_diff(middle) <= middle / 100,
            "mean {mean}, middle {middle}"
        );
        assert!(lo < floor + 20 && hi > top - 20, "range {lo}..={hi}");
    }

    #[test]
    fn jitter_spreads_values() {
        let mut j = Jitter::new(42);
        let values: alloc::vec::Vec<u64> = (0..64).map(|_| j.up_to(1_000)).collect();
        let distinct = values
            .iter()
            .filter(|v| values.iter().filter(|w| w == v).count() == 1)
            .count();
        assert!(distinct > 32, "splitmix64 should rarely repeat: {values:?}");
        assert!(values.iter().any(|v| *v < 500) && values.iter().any(|v| *v >= 500));
    }
}
