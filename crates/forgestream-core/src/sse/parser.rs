//! The push parser: line splitting across reads, BOM, frame cap, field handling.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::config::ParserConfig;
use super::error::SseError;
use super::field::{self, Line};
use super::frame::Frame;
use super::item::{SseEvent, SseEventRef, SseItem, SseItemRef};

/// Below this many bytes (one small frame: a live stream written one frame per write arrives
/// so) a read's lines are validated as UTF-8 by `core::str::from_utf8`; from it on, by
/// `simdutf8`, whose setup costs more than a short input takes to check (bench_core
/// `FORGESTREAM_BENCH_FRAMES`).
const SMALL_REGION_BYTES: usize = 512;

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
    frame: Frame<'static>,
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
    /// call. [`feed_with`](Self::feed_with) is the same without copying each item.
    ///
    /// # Errors
    ///
    /// [`SseError::FrameTooLarge`] when a frame in this chunk exceeded
    /// [`ParserConfig::max_frame_bytes`]: returned once per call (for the first such frame)
    /// *after* every item the chunk produced, before and after that frame, is in `out`. The
    /// parser has already skipped the frame and stays usable;
    /// [`frames_too_large`](Self::frames_too_large) counts every dropped frame.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseItem>) -> Result<(), SseError> {
        self.feed_with(chunk, |item| out.push(item.to_item()))
    }

    /// Feed one network chunk, handing each complete item to `emit` as it is found, borrowed
    /// ([`SseItemRef`]): a frame that lies inside `chunk` reaches `emit` without being copied.
    /// Items, order and errors are exactly those of [`feed`](Self::feed), for any chunking.
    ///
    /// ```
    /// use forgestream_core::sse::{SseItemRef, SseParser};
    ///
    /// let mut parser = SseParser::default();
    /// let mut seen = Vec::new();
    /// parser
    ///     .feed_with(b"data: {}\nid: 7\n\n", |item| {
    ///         if let SseItemRef::Event(e) = item {
    ///             seen.push((e.data.len(), e.id == Some("7")));
    ///         }
    ///     })
    ///     .unwrap();
    /// assert_eq!(seen, [(2, true)]);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`feed`](Self::feed): [`SseError::FrameTooLarge`] after every item of the chunk was
    /// emitted.
    pub fn feed_with<F>(&mut self, chunk: &[u8], mut emit: F) -> Result<(), SseError>
    where
        F: FnMut(SseItemRef<'_>),
    {
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
                self.process(
                    BOM.get(..matched).unwrap_or_default(),
                    &mut emit,
                    &mut error,
                );
            }
        }
        self.process(rest, &mut emit, &mut error);
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
        self.frame = Frame::default();
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

    /// Bytes the parser has allocated for the frame and line being received (capacity, not
    /// length). After a long line it gives memory back: once the line is done this is at most
    /// 64 KiB plus the frame's own size, whatever the longest line was.
    pub fn retained_capacity(&self) -> usize {
        self.frame
            .retained_capacity()
            .saturating_add(self.line.capacity())
    }

    /// The configuration this parser was built with.
    pub fn config(&self) -> ParserConfig {
        self.config
    }

    /// Splits `bytes` into lines. Scans each byte once: complete lines inside `bytes` are
    /// handled in place (their values borrowed from `bytes`), and only the unterminated tail is
    /// copied into the line buffer.
    fn process<'c, F>(&mut self, bytes: &'c [u8], emit: &mut F, error: &mut Option<SseError>)
    where
        F: FnMut(SseItemRef<'_>),
    {
        let mut rest = bytes;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest.first() == Some(&b'\n') {
                rest = rest.get(1..).unwrap_or_default();
            }
        }
        if rest.is_empty() {
            return;
        }
        // The frame's values may borrow from `bytes` until the end of this call.
        let mut frame: Frame<'c> = core::mem::take(&mut self.frame);
        // "Lines must be separated by either a U+000D CARRIAGE RETURN U+000A LINE FEED (CRLF)
        // character pair, a single U+000A LINE FEED (LF) character, or a single U+000D CARRIAGE
        // RETURN (CR) character."
        if !self.line.is_empty() {
            // A line begun in an earlier read: it ends at the first terminator of this one.
            let Some(end) = memchr::memchr2(b'\n', b'\r', rest) else {
                self.hold_partial(&mut frame, rest, error);
                self.frame = frame.into_owned();
                return;
            };
            let head = rest.get(..end).unwrap_or_default();
            rest = self.after_terminator(rest, end);
            self.end_buffered_line(&mut frame, head, emit, error);
        }
        // Every complete line left in this read lies in `region`; decode it as UTF-8 once (the
        // terminators are ASCII, so each line and value of a valid region is valid too).
        let region_len = memchr::memrchr2(b'\n', b'\r', rest).map_or(0, |last| last + 1);
        let (region, partial) = rest.split_at_checked(region_len).unwrap_or((&[], rest));
        let text = if region.len() < SMALL_REGION_BYTES {
            core::str::from_utf8(region).ok()
        } else {
            simdutf8::basic::from_utf8(region).ok()
        };
        let mut start = 0;
        let mut crlf_at = None;
        for end in memchr::memchr2_iter(b'\n', b'\r', region) {
            let is_cr = region.get(end) == Some(&b'\r');
            if crlf_at == Some(end) && !is_cr {
                // The LF of a CRLF whose CR already ended the line.
                crlf_at = None;
                start = end + 1;
                continue;
            }
            crlf_at = is_cr.then_some(end + 1);
            let line = region.get(start..end).unwrap_or_default();
            let line_text = text.and_then(|t| t.get(start..end));
            self.end_line(&mut frame, line, line_text, emit, error);
            start = end + 1;
        }
        if partial.is_empty() && region.last() == Some(&b'\r') {
            // The LF of a CRLF may be the first byte of the next read.
            self.after_cr = true;
        }
        self.hold_partial(&mut frame, partial, error);
        self.frame = frame.into_owned();
    }

    /// What follows the terminator at `end` of `rest` (a CRLF counts as one terminator; a CR at
    /// the very end of the read sets `after_cr`).
    fn after_terminator<'r>(&mut self, rest: &'r [u8], end: usize) -> &'r [u8] {
        let next = rest.get(end + 1..).unwrap_or_default();
        if rest.get(end) != Some(&b'\r') {
            return next;
        }
        match next.first() {
            Some(&b'\n') => next.get(1..).unwrap_or_default(),
            None => {
                self.after_cr = true;
                next
            }
            Some(_) => next,
        }
    }

    /// Keeps the unterminated tail of a read, or notes it while discarding.
    fn hold_partial(&mut self, frame: &mut Frame<'_>, part: &[u8], error: &mut Option<SseError>) {
        if part.is_empty() {
            return;
        }
        if self.discarding {
            self.discarded_line_started = true;
            return;
        }
        let line_bytes = self.line.len().saturating_add(part.len());
        if self.exceeds_cap(frame, line_bytes) {
            self.frame_too_large(frame, error);
            self.reset_line();
            self.discarded_line_started = true;
            return;
        }
        self.line.extend_from_slice(part);
    }

    /// The line in the line buffer ended; `head` is its part inside the current read. Its
    /// values are copied (the buffer is reused).
    fn end_buffered_line<F>(
        &mut self,
        frame: &mut Frame<'_>,
        head: &[u8],
        emit: &mut F,
        error: &mut Option<SseError>,
    ) where
        F: FnMut(SseItemRef<'_>),
    {
        // A non-empty line buffer means we are not discarding (see `hold_partial`).
        let line_bytes = self.line.len().saturating_add(head.len());
        if self.exceeds_cap(frame, line_bytes) {
            self.frame_too_large(frame, error);
            self.reset_line();
            return;
        }
        let mut buffer = core::mem::take(&mut self.line);
        buffer.extend_from_slice(head);
        let field = self
            .interpret(frame, &buffer, emit)
            .map(|f| (f.name, buffer.len().saturating_sub(f.value.len())));
        if let Some((name, value_at)) = field {
            if matches!(name, TextName::Data)
                && frame.data.is_none()
                && buffer.capacity() > LINE_CAPACITY_KEPT
            {
                // A long first `data` line (the big frame the cap is sized for): its buffer
                // becomes the frame's data in place, instead of a second copy of it. The buffer
                // leaves the parser with the frame and is freed after dispatch, so one huge
                // frame costs its size once, not twice, and nothing of it stays behind.
                buffer.drain(..value_at);
                match String::from_utf8(buffer) {
                    Ok(text) => frame.append_data(Cow::Owned(text)),
                    Err(e) => {
                        let decoded = String::from_utf8_lossy(e.as_bytes()).into_owned();
                        frame.append_data(Cow::Owned(decoded));
                    }
                }
                self.reset_line();
            } else {
                let value = buffer.get(value_at..).unwrap_or_default();
                let decoded = || Cow::Owned(String::from_utf8_lossy(value).into_owned());
                Self::set_field(frame, name, decoded);
                buffer.clear();
                self.line = buffer;
                self.reset_line();
            }
        } else {
            buffer.clear();
            self.line = buffer;
            self.reset_line();
        }
        // A data line can grow the frame beyond its raw length (U+FFFD is 3 bytes).
        if self.exceeds_cap(frame, 0) {
            self.frame_too_large(frame, error);
        }
    }

    /// A line that lies inside the current read ended. `text` is the same line as `str` when
    /// the read's lines are valid UTF-8 (then values are borrowed, not decoded again).
    fn end_line<'c, F>(
        &mut self,
        frame: &mut Frame<'c>,
        line: &'c [u8],
        text: Option<&'c str>,
        emit: &mut F,
        error: &mut Option<SseError>,
    ) where
        F: FnMut(SseItemRef<'_>),
    {
        if self.discarding {
            let blank = line.is_empty() && !self.discarded_line_started;
            self.discarded_line_started = false;
            if blank {
                // The oversized frame's blank line: the next frame starts clean.
                self.discarding = false;
            }
            return;
        }
        if self.exceeds_cap(frame, line.len()) {
            self.frame_too_large(frame, error);
            return;
        }
        if let Some(field) = self.interpret(frame, line, emit) {
            let value = field.value;
            // The value is the end of the line, so its text is the line's text from there.
            let borrowed = text.and_then(|t| t.get(line.len().saturating_sub(value.len())..));
            let decoded = || match borrowed {
                Some(v) => Cow::Borrowed(v),
                None => String::from_utf8_lossy(value),
            };
            Self::set_field(frame, field.name, decoded);
        }
        // A data line can grow the frame beyond its raw length (U+FFFD is 3 bytes).
        if self.exceeds_cap(frame, 0) {
            self.frame_too_large(frame, error);
        }
    }

    /// Applies one complete line (WHATWG HTML §9.2.6 "process the field") except the fields
    /// that store text, which it returns for the caller to decode (the caller knows whether the
    /// text can be borrowed).
    fn interpret<'l, F>(
        &mut self,
        frame: &mut Frame<'_>,
        line: &'l [u8],
        emit: &mut F,
    ) -> Option<TextField<'l>>
    where
        F: FnMut(SseItemRef<'_>),
    {
        match field::classify(line) {
            Line::Blank => {
                self.dispatch(frame, emit);
                None
            }
            Line::Comment => {
                emit(SseItemRef::Comment);
                None
            }
            Line::Field { name, value } => match name {
                b"data" => Some(TextField {
                    name: TextName::Data,
                    value,
                }),
                b"event" => Some(TextField {
                    name: TextName::Event,
                    value,
                }),
                // "If the field value does not contain U+0000 NULL, then set the last event ID
                // buffer to the field value. Otherwise, ignore the field." (0x00 is U+0000 and
                // never part of a multi-byte sequence.)
                b"id" if memchr::memchr(0, value).is_none() => Some(TextField {
                    name: TextName::Id,
                    value,
                }),
                b"retry" => {
                    if let Some(ms) = field::parse_retry(value) {
                        emit(SseItemRef::Retry(ms));
                    }
                    None
                }
                // "Otherwise: The field is ignored."
                _ => None,
            },
        }
    }

    /// Stores a `data` / `event` / `id` value (decoded only here: other lines never are).
    fn set_field<'c>(
        frame: &mut Frame<'c>,
        name: TextName,
        decoded: impl FnOnce() -> Cow<'c, str>,
    ) {
        match name {
            TextName::Data => frame.append_data(decoded()),
            TextName::Event => frame.set_event_type(decoded()),
            TextName::Id => frame.set_id(decoded()),
        }
    }

    /// "Dispatch the event" at a blank line. A frame without `data` gives no event but still
    /// commits its `id`.
    fn dispatch<F>(&mut self, frame: &mut Frame<'_>, emit: &mut F)
    where
        F: FnMut(SseItemRef<'_>),
    {
        // "Set the last event ID string of the event source to the value of the last event ID
        // buffer. The buffer does not get reset."
        let id = frame.id.take();
        if let Some(id) = &id {
            self.last_event_id.clear();
            self.last_event_id.push_str(id);
        }
        let event_type = frame.event_type.take();
        // "If the data buffer is an empty string, set the data buffer and the event type buffer
        // to the empty string and return."
        let Some(data) = frame.data.take() else {
            return;
        };
        emit(SseItemRef::Event(SseEventRef {
            // "If the event type buffer has a value other than the empty string, change the type
            // of the newly created event to equal the value of the event type buffer."
            event_type: event_type.as_deref().filter(|t| !t.is_empty()),
            data: &data,
            id: id.as_deref(),
            last_event_id: &self.last_event_id,
        }));
    }

    /// Whether the frame plus a line of `line_bytes` would exceed the cap.
    fn exceeds_cap(&self, frame: &Frame<'_>, line_bytes: usize) -> bool {
        frame.retained_bytes().saturating_add(line_bytes) > self.config.max_frame_bytes
    }

    /// Drops the current frame and skips to its blank line.
    fn frame_too_large(&mut self, frame: &mut Frame<'_>, error: &mut Option<SseError>) {
        self.frames_too_large = self.frames_too_large.saturating_add(1);
        *frame = Frame::default();
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

/// The fields whose value is kept as text.
#[derive(Debug, Clone, Copy)]
enum TextName {
    Data,
    Event,
    Id,
}

/// A `data` / `event` / `id` line's raw value, not decoded yet.
struct TextField<'l> {
    name: TextName,
    value: &'l [u8],
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
