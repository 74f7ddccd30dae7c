//! [`EntryWriter`]: a new session's lines written in order through the store's
//! [`LineWriter`], inside the caller's transaction (an import, a staged or branched session).

use crate::error::Result;
use crate::js::json::RawObject;
use crate::store::handle::Db;
use crate::store::interface::write::{LineWriter, ParsedLine, SharedLine};
use crate::store::keys::SessionKey;
use crate::store::stats::{Observation, SessionStats};

/// Writes a new session's lines in order (an import, a staged or branched session), with
/// their derived columns, search and usage rows and statistics, inside the caller's
/// transaction.
pub struct EntryWriter<'t> {
    lines: Box<dyn LineWriter + 't>,
}

impl<'t> EntryWriter<'t> {
    /// A writer for the (new, empty) session `sid`, inside an open transaction.
    pub fn new(db: &'t Db, sid: SessionKey) -> Result<Self> {
        Ok(EntryWriter { lines: db.store().line_writer(sid)? })
    }

    /// Stores one entry line (`obj` is `text` scanned).
    pub fn write(&mut self, obj: &RawObject<'_>, text: &str) -> Result<()> {
        self.lines.write_parsed(text, ParsedLine::of_line(text, obj))
    }

    /// Stores one entry line read beforehand ([`ParsedLine::of`] of `text`).
    pub fn write_parsed(&mut self, text: &str, line: ParsedLine) -> Result<()> {
        self.lines.write_parsed(text, line)
    }

    /// Stores one entry line, `text`, that row `src.key` of the same database holds exactly
    /// (`seen` is read from the line as [`ParsedLine::of`] reads it; `text` is `None` when
    /// `src.plain` says what the line is): where the backend can, the line is shared rather
    /// than copied.
    pub fn share(&mut self, src: &SharedLine, text: Option<&str>, seen: &Observation) -> Result<()> {
        self.lines.share(src, text, seen)
    }

    /// Saves the statistics (and re-links parents of an irregular tree); returns them.
    pub fn finish(self) -> Result<SessionStats> {
        self.lines.finish()
    }
}
