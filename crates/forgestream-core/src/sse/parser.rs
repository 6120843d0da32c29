//! The push parser: line splitting across reads, BOM, frame cap, field handling.

use alloc::string::String;
use alloc::vec::Vec;

use super::config::ParserConfig;
use super::error::SseError;
use super::field::{self, Line};
use super::frame::Frame;
use super::item::{SseEvent, SseItem};

/// The UTF-8 encoding of U+FEFF BYTE ORDER MARK.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Capacity, in bytes, the line buffer may keep after a long line; beyond it the buffer is
/// shrunk so one large frame does not pin its memory for the rest of the connection.
const LINE_CAPACITY_KEPT: usize = 64 * 1024;

/// Push parser for one logical event source (WHATWG HTML §9.2.6), across reconnects.
///
/// Feed each network read with [`feed`](Self::feed); call [`finish`](Self::finish) when a
/// connection ends. The last event ID persists across connections, so one parser per turn
/// subscription (not per connection) keeps the reconnect cursor. Never panics on any input.
///
/// ```
/// use forgestream_core::sse::{ParserConfig, SseItem, SseParser};
///
/// let mut parser = SseParser::new(ParserConfig::default());
/// let mut items = Vec::new();
/// parser.feed(b"data: {\"type\":\"x\"}\r", &mut items).unwrap();
/// parser.feed(b"\nid: 2\r\n\r\n", &mut items).unwrap();
/// assert!(matches!(&items[..], [SseItem::Event(e)] if e.id.as_deref() == Some("2")));
/// assert_eq!(parser.last_event_id(), "2");
/// ```
#[derive(Debug)]
pub struct SseParser {
    config: ParserConfig,
    /// At the start of a connection: how many bytes of a BOM have been seen so far (`Some(0..3)`);
    /// `None` once the first bytes are known to be, or not to be, a BOM.
    bom_matched: Option<usize>,
    /// Bytes of the line still being received (no terminator yet).
    line: Vec<u8>,
    /// The previous read ended with a CR that ended a line: an LF that starts the next read is
    /// the second half of that CRLF, not an empty line.
    after_cr: bool,
    /// Skipping the rest of a frame that exceeded the cap, up to its blank line.
    discarding: bool,
    /// While `discarding`: the current line has at least one byte (so its end is not blank).
    discarded_line_started: bool,
    frame: Frame,
    /// The event source's last event ID string (committed at dispatch).
    last_event_id: String,
    frames_too_large: u64,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new(ParserConfig::default())
    }
}

impl SseParser {
    /// A parser at the start of a first connection, with an empty last event ID.
    pub fn new(config: ParserConfig) -> Self {
        Self {
            config,
            bom_matched: Some(0),
            line: Vec::new(),
            after_cr: false,
            discarding: false,
            discarded_line_started: false,
            frame: Frame::default(),
            last_event_id: String::new(),
            frames_too_large: 0,
        }
    }

    /// Feed one network chunk (any size, any split, including empty); complete items are pushed
    /// to `out` in stream order.
    ///
    /// The whole chunk is always consumed; a partial line waits inside the parser for the next
    /// call.
    ///
    /// # Errors
    ///
    /// [`SseError::FrameTooLarge`] when a frame in this chunk exceeded
    /// [`ParserConfig::max_frame_bytes`]: returned once per call (for the first such frame)
    /// *after* every item the chunk produced, before and after that frame, is in `out`. The
    /// parser has already skipped the frame and stays usable;
    /// [`frames_too_large`](Self::frames_too_large) counts every dropped frame.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseItem>) -> Result<(), SseError> {
        let mut error = None;
        let mut rest = chunk;
        if let Some(matched) = self.bom_matched {
            // "The UTF-8 decode algorithm strips one leading UTF-8 Byte Order Mark (BOM), if
            // any." Only at the very start of the stream, and it may arrive split across reads.
            let mut matched = matched;
            while let (Some(&byte), Some(&expected)) = (rest.first(), BOM.get(matched)) {
                if byte != expected {
                    break;
                }
                matched += 1;
                rest = rest.get(1..).unwrap_or_default();
            }
            if matched == BOM.len() {
                self.bom_matched = None;
            } else if rest.is_empty() {
                // Every byte so far could still be a BOM: wait for more.
                self.bom_matched = Some(matched);
                return Ok(());
            } else {
                // Not a BOM: the bytes held back are ordinary input.
                self.bom_matched = None;
                self.process(BOM.get(..matched).unwrap_or_default(), out, &mut error);
            }
        }
        self.process(rest, out, &mut error);
        error.map_or(Ok(()), Err)
    }

    /// End of one connection (EOF): discards an unterminated frame ("If the file ends in the
    /// middle of an event, before the final empty line, the incomplete event is not
    /// dispatched"), along with its `event` and `id`. The next [`feed`](Self::feed) is a new
    /// connection (a BOM is allowed again); [`last_event_id`](Self::last_event_id) persists.
    pub fn finish(&mut self) {
        self.bom_matched = Some(0);
        self.reset_line();
        self.after_cr = false;
        self.discarding = false;
        self.discarded_line_started = false;
        self.frame.clear();
    }

    /// The last event ID: the `id` of the last dispatched frame that had a valid one (with or
    /// without `data`), across connections; empty if none yet or after an empty `id:`. For
    /// TrueForge this is the last sequence number, sent back as `Last-Event-ID`.
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// Restores the last event ID (e.g. a cursor from storage). Taken as given: it is not
    /// checked for U+0000 because it never came from the wire through this parser.
    pub fn set_last_event_id(&mut self, id: &str) {
        self.last_event_id.clear();
        self.last_event_id.push_str(id);
    }

    /// How many frames were dropped for exceeding the cap, over this parser's life.
    pub fn frames_too_large(&self) -> u64 {
        self.frames_too_large
    }

    /// Bytes currently held for the frame and line being received, in bytes. Never exceeds
    /// [`ParserConfig::max_frame_bytes`] between calls.
    pub fn buffered_bytes(&self) -> usize {
        self.frame.retained_bytes().saturating_add(self.line.len())
    }

    /// The configuration this parser was built with.
    pub fn config(&self) -> ParserConfig {
        self.config
    }

    /// Splits `bytes` into lines. Scans each byte once: complete lines inside `bytes` are
    /// handled in place, and only the unterminated tail is copied into the line buffer.
    fn process(&mut self, bytes: &[u8], out: &mut Vec<SseItem>, error: &mut Option<SseError>) {
        let mut rest = bytes;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest.first() == Some(&b'\n') {
                rest = rest.get(1..).unwrap_or_default();
            }
        }
        // "Lines must be separated by either a U+000D CARRIAGE RETURN U+000A LINE FEED (CRLF)
        // character pair, a single U+000A LINE FEED (LF) character, or a single U+000D CARRIAGE
        // RETURN (CR) character."
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (head, tail) = rest.split_at_checked(end).unwrap_or((rest, &[]));
            let mut next = tail.get(1..).unwrap_or_default();
            if tail.first() == Some(&b'\r') {
                match next.first() {
                    Some(&b'\n') => next = next.get(1..).unwrap_or_default(),
                    // The LF of a CRLF may be the first byte of the next read.
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            self.end_line(head, out, error);
            rest = next;
        }
        self.hold_partial(rest, error);
    }

    /// Keeps the unterminated tail of a read, or notes it while discarding.
    fn hold_partial(&mut self, part: &[u8], error: &mut Option<SseError>) {
        if part.is_empty() {
            return;
        }
        if self.discarding {
            self.discarded_line_started = true;
            return;
        }
        let line_bytes = self.line.len().saturating_add(part.len());
        if self.exceeds_cap(line_bytes) {
            self.frame_too_large(error);
            self.reset_line();
            self.discarded_line_started = true;
            return;
        }
        self.line.extend_from_slice(part);
    }

    /// A line ended; `head` is its part inside the current read (after any buffered part).
    fn end_line(&mut self, head: &[u8], out: &mut Vec<SseItem>, error: &mut Option<SseError>) {
        if self.discarding {
            let blank = head.is_empty() && !self.discarded_line_started;
            self.discarded_line_started = false;
            if blank {
                // The oversized frame's blank line: the next frame starts clean.
                self.discarding = false;
            }
            return;
        }
        let line_bytes = self.line.len().saturating_add(head.len());
        if self.exceeds_cap(line_bytes) {
            self.frame_too_large(error);
            self.reset_line();
            return;
        }
        let mut buffer = core::mem::take(&mut self.line);
        let line: &[u8] = if buffer.is_empty() {
            head
        } else {
            buffer.extend_from_slice(head);
            &buffer
        };
        self.interpret(line, out);
        buffer.clear();
        self.line = buffer;
        self.reset_line();
        // A data line can grow the frame beyond its raw length (U+FFFD is 3 bytes).
        if self.exceeds_cap(0) {
            self.frame_too_large(error);
        }
    }

    /// Applies one complete line (WHATWG HTML §9.2.6 "process the field").
    fn interpret(&mut self, line: &[u8], out: &mut Vec<SseItem>) {
        match field::classify(line) {
            Line::Blank => {
                if let Some(event) = self.frame.dispatch(&mut self.last_event_id) {
                    out.push(SseItem::Event(event));
                }
            }
            Line::Comment => out.push(SseItem::Comment),
            Line::Field { name, value } => match name {
                b"data" => self.frame.append_data(&String::from_utf8_lossy(value)),
                b"event" => self.frame.set_event_type(&String::from_utf8_lossy(value)),
                // "If the field value does not contain U+0000 NULL, then set the last event ID
                // buffer to the field value. Otherwise, ignore the field." (0x00 is U+0000 and
                // never part of a multi-byte sequence.)
                b"id" if !value.contains(&0) => self.frame.set_id(&String::from_utf8_lossy(value)),
                b"retry" => {
                    if let Some(ms) = field::parse_retry(value) {
                        out.push(SseItem::Retry(ms));
                    }
                }
                // "Otherwise: The field is ignored."
                _ => {}
            },
        }
    }

    /// Whether the frame plus a line of `line_bytes` would exceed the cap.
    fn exceeds_cap(&self, line_bytes: usize) -> bool {
        self.frame.retained_bytes().saturating_add(line_bytes) > self.config.max_frame_bytes
    }

    /// Drops the current frame and skips to its blank line.
    fn frame_too_large(&mut self, error: &mut Option<SseError>) {
        self.frames_too_large = self.frames_too_large.saturating_add(1);
        self.frame.clear();
        self.discarding = true;
        self.discarded_line_started = false;
        error.get_or_insert(SseError::FrameTooLarge {
            limit_bytes: self.config.max_frame_bytes,
        });
    }

    /// Empties the line buffer, giving back memory after an unusually long line.
    fn reset_line(&mut self) {
        self.line.clear();
        if self.line.capacity() > LINE_CAPACITY_KEPT {
            self.line.shrink_to(LINE_CAPACITY_KEPT);
        }
    }
}

impl SseItem {
    /// The event, if this item is one.
    pub fn as_event(&self) -> Option<&SseEvent> {
        match self {
            Self::Event(event) => Some(event),
            _ => None,
        }
    }
}
