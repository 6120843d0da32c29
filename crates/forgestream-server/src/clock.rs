//! Wall-clock timestamps and identifiers in the shapes TrueForge uses (PROTOCOL.md §1).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};
use time::format_description::FormatItem;
use time::macros::format_description;
use time::OffsetDateTime;

/// ISO-8601 with milliseconds and a `Z`, e.g. `2026-11-30T04:42:33.882Z`.
const ISO_MS: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

/// Now as TrueForge writes `created_at` / `completed_at`.
pub fn now_iso() -> String {
    OffsetDateTime::now_utc()
        .format(ISO_MS)
        .unwrap_or_else(|_| String::from("1970-01-01T00:00:00.000Z"))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Generates lowercase ULIDs that are strictly increasing within this process, so events,
/// turns and sessions sort by creation like the real server's (which uses monotonic ULIDs: a
/// `turn.done` right after a `*_required` event carries the next id).
pub struct UlidSource {
    state: Mutex<(u64, u128, ChaCha8Rng)>,
}

impl UlidSource {
    /// `seed` makes the random part reproducible; the time part is always the wall clock.
    pub fn new(seed: u64) -> Self {
        Self {
            state: Mutex::new((0, 0, ChaCha8Rng::seed_from_u64(seed))),
        }
    }

    /// The next id, 26 lowercase Crockford base32 characters.
    pub fn next(&self) -> String {
        let mut guard = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let (last_ms, last_rand, rng) = &mut *guard;
        let ms = now_ms();
        let rand_bits: u128 = if ms <= *last_ms {
            // Same (or an earlier, after a clock step) millisecond: keep ordering by incrementing.
            last_rand.wrapping_add(1) & ((1u128 << 80) - 1)
        } else {
            *last_ms = ms;
            rng.gen::<u128>() & ((1u128 << 79) - 1)
        };
        *last_rand = rand_bits;
        ulid::Ulid::from_parts(*last_ms, rand_bits)
            .to_string()
            .to_lowercase()
    }
}

/// Deterministic per-turn randomness: tool call ids, subagent thread UUIDs, interleaving and
/// chunk choices all come from here, so a scenario replays identically for a given seed.
pub struct TurnRng(ChaCha8Rng);

impl TurnRng {
    /// Seeds from the server seed plus a stable description of the turn (scenario name,
    /// position of the turn in its session, input text).
    pub fn new(seed: u64, salt: &str) -> Self {
        // FNV-1a: stable across Rust versions, unlike `DefaultHasher`.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in salt.as_bytes() {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        Self(ChaCha8Rng::seed_from_u64(seed ^ hash))
    }

    /// `call_` + 16 lowercase hex digits, the shape of the recorded tool call ids.
    pub fn tool_call_id(&mut self) -> String {
        format!("call_{:016x}", self.0.gen::<u64>())
    }

    /// A random (v4) UUID for a subagent `thread_id`.
    pub fn thread_uuid(&mut self) -> String {
        uuid::Builder::from_random_bytes(self.0.gen::<[u8; 16]>())
            .into_uuid()
            .to_string()
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0.gen_range(0..n.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulids_are_lowercase_and_strictly_increasing() {
        let source = UlidSource::new(7);
        let ids: Vec<String> = (0..500).map(|_| source.next()).collect();
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{} !< {}", pair[0], pair[1]);
        }
        assert!(ids
            .iter()
            .all(|id| id.len() == 26 && id == &id.to_lowercase()));
    }

    #[test]
    fn turn_rng_is_deterministic_per_seed_and_salt() {
        let a = TurnRng::new(1, "support/0/hi").tool_call_id();
        let b = TurnRng::new(1, "support/0/hi").tool_call_id();
        let c = TurnRng::new(2, "support/0/hi").tool_call_id();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.starts_with("call_") && a.len() == 21);
    }

    #[test]
    fn iso_timestamps_have_millis_and_z() {
        let ts = now_iso();
        assert_eq!(ts.len(), 24, "{ts}");
        assert!(ts.ends_with('Z') && ts.as_bytes()[19] == b'.');
    }
}
