//! Writing sessions and entry lines, the same on every backend ([`Writes`], implemented in
//! `store::sqlite::write` and `store::postgres::write`): session rows, appends, forks and
//! branch sources, and the types they take.

use crate::error::Result;
use crate::store::handle::Db;
use crate::store::keys::{EntryKey, SessionKey};

use crate::js::json::RawObject;
use crate::store::derive::Derived;
pub use crate::store::interface::write::*;
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
        self.lines.write_parsed(text, ParsedLine::of(obj))
    }

    /// Stores one entry line read beforehand ([`ParsedLine::of`] of `text`).
    pub fn write_parsed(&mut self, text: &str, line: ParsedLine) -> Result<()> {
        self.lines.write_parsed(text, line)
    }

    /// Stores one entry line, `text`, that row `src.key` of the same database holds exactly
    /// (`seen` is read from the line as [`ParsedLine::of`] reads it): where the backend can,
    /// the line is shared rather than copied.
    pub fn share(&mut self, src: &SharedLine, text: &str, seen: &Observation) -> Result<()> {
        self.lines.share(src, text, seen)
    }

    /// Saves the statistics (and re-links parents of an irregular tree); returns them.
    pub fn finish(self) -> Result<SessionStats> {
        self.lines.finish()
    }
}

/// A packer of lines for an import's read-ahead thread, when `db` keeps its lines packed.
pub fn line_packer(db: &Db) -> Result<Option<crate::store::codec::Packer>> {
    db.store().line_packer()
}

/// Adds the session row; returns its sid.
pub fn insert_session(db: &Db, n: &NewSession<'_>) -> Result<SessionKey> {
    db.store().insert_session(n)
}

/// Makes the new, empty session `copy` a copy of every entry of session `source` (pi's
/// `forkFrom`): entry rows sharing the source's lines, search and usage rows, statistics and
/// the joined message text. Runs in the caller's transaction.
pub fn copy_session(db: &Db, source: SessionKey, copy: SessionKey) -> Result<()> {
    db.store().copy_session(source, copy)
}

/// Whether [`append_new_entry`] on `db` checks itself that the new entry's id is free.
pub fn append_checks_id(db: &Db) -> bool {
    db.store().append_checks_id()
}

/// [`append_entry`] for a new entry of a SessionManager, whose id was drawn without asking
/// the database, in a transaction of its own unless one is open: where
/// [`append_checks_id`], the append itself checks the id is free (saving a round trip) and
/// reads the session's row only when `state` does not know it.
pub fn append_new_entry(
    db: &Db,
    sid: SessionKey,
    text: &str,
    parent: Option<(EntryKey, Derived)>,
    state: &mut AppendState,
) -> Result<Appended> {
    db.store().append_new_entry(sid, text, parent, state)
}

/// A session's statistics as stored, and its last line number and tree regularity.
pub fn load_stats(db: &Db, sid: SessionKey) -> Result<StoredStats> {
    db.store().load_stats(sid)
}

/// Appends one entry line to session `sid` under its parent (the leaf), with derived columns
/// from the parent and the session's statistics and write time updated. Returns the new key.
pub fn append_entry(db: &Db, sid: SessionKey, text: &str, parent: Option<(EntryKey, Derived)>) -> Result<EntryKey> {
    db.store().append_entry(sid, text, parent)
}

/// Key and derived columns of entry `id` in session `sid` (the later line for a repeated id).
pub fn entry_node(db: &Db, sid: SessionKey, id: &str) -> Result<Option<(EntryKey, Derived)>> {
    db.store().entry_node(sid, id)
}

/// The rows stored under `keys` (absent keys skipped), in that order, each as a line a new
/// session may share and the line itself: consecutive keys are read by one range query.
pub fn branch_source_rows(db: &Db, keys: &[EntryKey]) -> Result<Vec<(SharedLine, String)>> {
    db.store().branch_source_rows(keys)
}

/// Starts a bulk write by this process (an import) until [`leave_bulk`] (see
/// [`Writes::enter_bulk`]).
pub fn enter_bulk(db: &Db) {
    db.store().enter_bulk();
}

/// Between two transactions of a bulk write.
pub fn between_bulk_transactions(db: &Db) {
    db.store().between_bulk_transactions();
}

/// Ends [`enter_bulk`]'s mode.
pub fn leave_bulk(db: &Db) {
    db.store().leave_bulk();
}
