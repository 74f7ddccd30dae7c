//! Reading session files line by line, as pi does: split on `\n`, decode lossily,
//! skip blank and malformed lines. Memory stays bounded by the longest line.

pub mod signature;

use crate::js::json::{self, RawObject};
use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, Read};

/// One physical line of a session file.
pub struct Line<'a> {
    /// 1-based line number.
    pub number: u64,
    /// Byte offset of the line's start in the file.
    pub offset: u64,
    /// Byte offset just past the line (and its terminator).
    pub end: u64,
    /// The text without its `\n` or `\r\n` terminator, invalid UTF-8 replaced by U+FFFD.
    pub text: Cow<'a, str>,
    /// False for a final line that ended without `\n`.
    pub terminated: bool,
}

/// What a line holds.
pub enum LineKind<'a> {
    /// Empty or whitespace only: ignored.
    Blank,
    /// Not a JSON object: skipped, with the reason.
    Malformed(String),
    /// A JSON object, members unparsed.
    Object(RawObject<'a>),
}

/// Classifies a line's text the way pi's loader treats it.
pub fn classify(text: &str) -> LineKind<'_> {
    if json::js_trim(text).is_empty() {
        return LineKind::Blank;
    }
    match json::scan_object(text.as_bytes()) {
        Ok(Some(obj)) => LineKind::Object(obj),
        // pi keeps truthy scalars as junk entries; sessiondb skips them (a deliberate
        // difference from pi, listed in the README).
        Ok(None) => LineKind::Malformed("not a JSON object".into()),
        Err(e) => LineKind::Malformed(format!("invalid JSON: {e}")),
    }
}

/// Streams the lines of a file.
pub struct LineReader<R> {
    inner: BufReader<R>,
    buf: Vec<u8>,
    number: u64,
    offset: u64,
}

impl<R: Read> LineReader<R> {
    /// A reader over `inner`.
    pub fn new(inner: R) -> Self {
        LineReader::starting_at(inner, 0)
    }

    /// A reader over `inner`, which is positioned at byte `offset` of the file.
    pub fn starting_at(inner: R, offset: u64) -> Self {
        LineReader { inner: BufReader::with_capacity(1 << 20, inner), buf: Vec::new(), number: 0, offset }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next line, or `None` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        self.buf.clear();
        let n = self.inner.read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(None);
        }
        let start = self.offset;
        self.offset += n as u64;
        self.number += 1;
        let mut bytes = &self.buf[..];
        let terminated = bytes.last() == Some(&b'\n');
        if terminated {
            bytes = &bytes[..bytes.len() - 1];
            if bytes.last() == Some(&b'\r') {
                bytes = &bytes[..bytes.len() - 1];
            }
        }
        Ok(Some(Line {
            number: self.number,
            offset: start,
            end: self.offset,
            // Validating as UTF-8 first is several times faster than the lossy scan, which
            // only runs on lines that need it.
            text: match std::str::from_utf8(bytes) {
                Ok(t) => std::borrow::Cow::Borrowed(t),
                Err(_) => String::from_utf8_lossy(bytes),
            },
            terminated,
        }))
    }
}
