//! Tunables of the connection state machine (DESIGN.md "Sans-IO connection logic").

/// Timing and retry policy of one [`Connection`](super::Connection).
///
/// All durations are milliseconds. [`Config::default`] gives the values the SDK ships with;
/// the web layer maps the app's `reconnect: {...}` option onto these fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Base of the exponential backoff, ms (default 500). Attempt `n` (1-based) waits a uniform
    /// random delay in `[floor, max(floor, min(backoff_cap_ms, backoff_base_ms · 2^(n-1)))]`
    /// ("full jitter" above a floor), where `floor = min(backoff_floor_ms, backoff_cap_ms)`.
    /// A server `retry:` field replaces this base (clamped to `[retry_min_ms, retry_max_ms]`).
    pub backoff_base_ms: u64,
    /// Upper bound of every reconnect delay, ms (default 30 000). `Retry-After` is clamped to it
    /// as well, so no wait the machine schedules is ever longer.
    pub backoff_cap_ms: u64,
    /// Lowest reconnect delay after a failed attempt, ms (default 250; never above
    /// `backoff_cap_ms`). Full jitter alone draws from 0, so a `retry: 0` field and a run of 503s
    /// reconnected 11–229 ms apart: the floor keeps every wait the machine schedules at or above
    /// it. `Retry-After` and `retry:` move the base within `[floor, cap]` too.
    pub backoff_floor_ms: u64,
    /// Lowest `retry:` value (and `Retry-After`) honoured, ms (default 250): a server cannot make
    /// the client hammer it.
    pub retry_min_ms: u64,
    /// Highest `retry:` value honoured as the backoff base, ms (default 30 000).
    pub retry_max_ms: u64,
    /// Idle watchdog, ms (default 45 000): an open request that yields no headers, events,
    /// comments or body bytes for this long is aborted and retried. Comments count as liveness
    /// (FIELD C3), and so do the bytes of a frame still arriving
    /// ([`super::Input::BytesArrived`]); a subscribe cursor past the end of a finished turn
    /// hangs on real servers (PROTOCOL §9).
    pub idle_timeout_ms: u64,
    /// Minimum spacing of `Persist` checkpoints while events stream in, ms (default 1 000).
    /// A pending checkpoint is always flushed when the stream ends, fails, goes offline or is
    /// disconnected.
    pub persist_interval_ms: u64,
    /// Consecutive failed attempts allowed before `Failed(TooManyAttempts)` (default 20).
    /// The counter resets when a stream delivers a new sequence number, and when a stream that
    /// stayed healthy for [`healthy_after_ms`](Self::healthy_after_ms) ends (issue 14).
    pub max_attempts: u32,
    /// A stream request held open this long from when it was sent, with no error status, was a
    /// healthy connection, ms (default 10 000; from the request, as Firefox shows a silent 200
    /// only with its first byte): when it ends (a proxy's idle cut, a subscribe timeout,
    /// the idle watchdog) the attempt counter starts over, as it does when new events arrive.
    /// Without it, a silent tool call behind a proxy that cuts idle connections every 60 s used
    /// up `max_attempts` with connections that each worked.
    pub healthy_after_ms: u64,
    /// Longest idle watchdog of a live stream, ms (default 180 000; never below
    /// `idle_timeout_ms`). Each watchdog cycle on which the turn still reads `running` doubles
    /// the next stream's watchdog (`idle_timeout_ms · 2^n`) up to this bound; the next frame
    /// brings it back to `idle_timeout_ms`. A silent turn is then re-checked at 45 s, 90 s,
    /// 180 s, 180 s… instead of every 45 s forever, and never given up on.
    pub max_idle_timeout_ms: u64,
    /// Silent watchdog cycles (the turn still reads `running`, no frame since) after which the
    /// connection reports `stalled` (default 2). A soft flag: a crashed owner and a long silent
    /// tool call look the same from outside, so the machine keeps probing; the next frame clears
    /// it.
    pub stalled_after_cycles: u32,
    /// How long the machine looks for the turn of a create POST that got no definite answer
    /// before it reports `Failed(CreateOutcomeUnknown)`, ms (default 10 000; PROTOCOL §8.3).
    /// Counted from the first `LookupNewestTurn`: the lookup is retried with the usual backoff
    /// while the next try would start before this deadline, and a lookup still unanswered at it
    /// is aborted. Milliseconds, not attempts: what a user waits on is time, and attempts do not
    /// bound it — a lookup to a host that does not answer hangs until the idle watchdog
    /// (`idle_timeout_ms`, 45 s), and 20 backoff waits of up to `backoff_cap_ms` are minutes.
    /// `max_attempts` still applies. A `Refresh` (or `Online`) after the failure looks again
    /// with a new budget; going offline pauses the lookup and `Online` starts a new budget.
    pub create_lookup_budget_ms: u64,
    /// After `Failed(CreateOutcomeUnknown)`, how long until the machine looks the create up
    /// again by itself, ms (default 2 000; 0: never, only `Refresh` / `Online` look again).
    /// Each look that gets no answer doubles the wait, up to `backoff_cap_ms`. A server that
    /// was down (a restart, a deploy) is found again without the user pressing Retry, and the
    /// message then reads sent (its turn followed) or not sent. These looks are quiet: the
    /// status stays `Failed(CreateOutcomeUnknown)` while one runs (no `connecting` flash every
    /// few seconds) and changes only when one answers; none runs while offline.
    pub outcome_recheck_ms: u64,
    /// Seed of the jitter generator (splitmix64). The web layer passes something random
    /// (`crypto.getRandomValues`); tests pass a constant so delays are reproducible.
    pub jitter_seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            backoff_base_ms: 500,
            backoff_cap_ms: 30_000,
            backoff_floor_ms: 250,
            retry_min_ms: 250,
            retry_max_ms: 30_000,
            idle_timeout_ms: 45_000,
            persist_interval_ms: 1_000,
            max_attempts: 20,
            healthy_after_ms: 10_000,
            max_idle_timeout_ms: 180_000,
            stalled_after_cycles: 2,
            create_lookup_budget_ms: 10_000,
            outcome_recheck_ms: 2_000,
            jitter_seed: 0x5eed_f0f6_e57e_a111,
        }
    }
}
