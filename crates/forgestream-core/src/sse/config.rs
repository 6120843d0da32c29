//! Parser limits.

/// Default for [`ParserConfig::max_frame_bytes`]: 16 MiB.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Limits of one [`SseParser`](super::SseParser).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParserConfig {
    /// Most bytes one frame may hold while it is being received, in bytes (default 16 MiB).
    ///
    /// Counted: the frame's `data` buffer (values joined with LF, after UTF-8 decoding), its
    /// `event` type and `id` values, plus the whole length of the line being received (any kind
    /// of line, terminator excluded). These are the bytes the parser may have to hold, so the cap
    /// bounds its memory, and the verdict does not depend on how the stream was chunked. A frame
    /// that would exceed the cap gives [`SseError::FrameTooLarge`](super::SseError::FrameTooLarge)
    /// and is skipped up to its blank line. `0` is allowed: then every non-blank line is too
    /// large.
    pub max_frame_bytes: usize,
}

impl Default for ParserConfig {
    fn default() -> Self {
        Self {
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
        }
    }
}
