//! WHATWG `text/event-stream` push parser (HTML Living Standard §9.2.6, "Interpreting an event
//! stream"; PROTOCOL.md §3).
//!
//! Bytes go in exactly as the network delivers them ([`SseParser::feed`], any chunking); complete
//! items come out in stream order ([`SseItem`]). "Need more bytes" is the normal state, never an
//! error: a partial line simply waits inside the parser. The only error is a frame that outgrows
//! [`ParserConfig::max_frame_bytes`] ([`SseError::FrameTooLarge`]); the parser then skips the
//! rest of that frame and carries on.
//!
//! Rules implemented (spec wording in the code beside each one):
//! - one UTF-8 BOM is stripped at the start of each connection, even when split across reads;
//! - CR, LF and CRLF end lines, including a CR at the end of one read and its LF in the next;
//! - UTF-8 is decoded per complete line, with U+FFFD for invalid sequences, so characters split
//!   across reads are never corrupted;
//! - `:` lines are comments, `data` lines join with LF, `event` sets the type, `id` without U+0000
//!   sets the last event ID (which persists across frames and connections), `retry` only when all
//!   ASCII digits, other fields are ignored;
//! - a blank line dispatches; a frame with no `data` line produces no event but still commits its
//!   `id`; an unterminated frame at end of stream ([`SseParser::finish`]) is discarded.
//!
//! Work is linear in the input: a read's complete lines are searched for terminators once
//! (`memchr`) and validated as UTF-8 once, and a partial line is buffered, never rescanned.
//! [`SseParser::feed_with`] hands frames out borrowed from the read (no copy when a frame lies
//! inside one read); [`SseParser::feed`] gives owned [`SseItem`]s.

mod config;
mod content_type;
mod error;
mod field;
mod frame;
mod item;
mod parser;

pub use config::{ParserConfig, DEFAULT_MAX_FRAME_BYTES};
pub use content_type::{check_event_stream, NotEventStream};
pub use error::SseError;
pub use item::{SseEvent, SseEventRef, SseItem, SseItemRef};
pub use parser::SseParser;
