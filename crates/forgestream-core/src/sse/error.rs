//! The SSE parser's one error.

use core::fmt;

/// A protocol error found while parsing an event stream.
///
/// Parsing always continues after an error: the parser skips what it could not keep and resumes
/// at the next frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseError {
    /// A frame grew past [`ParserConfig::max_frame_bytes`](super::ParserConfig::max_frame_bytes)
    /// (`limit_bytes`, in bytes) before its blank line. The frame is dropped without an event;
    /// its `id`, if any, is not committed. Items that were complete before it are unaffected,
    /// and parsing resumes after the frame's blank line.
    FrameTooLarge {
        /// The configured cap, in bytes.
        limit_bytes: usize,
    },
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FrameTooLarge { limit_bytes } => write!(
                f,
                "event-stream frame exceeded the {limit_bytes}-byte cap; the frame was dropped"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SseError {}
