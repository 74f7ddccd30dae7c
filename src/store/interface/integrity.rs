//! What `check` reads, the same on every backend ([`Integrity`], implemented in
//! `store::sqlite::integrity` and `store::postgres::integrity`): the database's own checks
//! (SQLite's; none on PostgreSQL), shared lines, and session and entry columns.

use crate::error::{Error, Result};
use crate::store::keys::{EntryKey, SessionKey};

/// True for the errors of a damaged database file, which `check` reports instead of failing.
pub fn is_corruption(e: &Error) -> bool {
    matches!(e, Error::Database { kind: crate::error::DbFailure::Corrupt, .. })
}

/// A row whose foreign key points at a missing row.
pub struct ForeignKeyProblem {
    pub table: String,
    pub rowid: Option<i64>,
    pub parent: String,
}

/// A copied row whose line is not where it points, or not recorded as shared.
pub struct SharedLineProblem {
    /// The copy's key.
    pub key: EntryKey,
    /// The key it takes its line from.
    pub from: EntryKey,
    /// The line is missing (or held by another copy), not merely unrecorded.
    pub missing: bool,
}

/// A session row as the check reads it.
pub struct CheckedSession {
    pub sid: SessionKey,
    pub id: String,
    pub path: String,
    pub cwd: Option<String>,
    pub entry_count: i64,
    pub last_seq: i64,
    pub tree_ok: bool,
}

/// An entry line as the check reads it.
pub struct CheckedEntry {
    pub seq: i64,
    pub id: Option<String>,
    pub parent_id: Option<String>,
    pub kind: Option<String>,
    /// Only for labels, context edits and compactions.
    pub body: Option<String>,
    /// Why its stored line cannot be read back as it was written (a packed line whose frame
    /// is damaged: its checksum or length disagrees, or its dictionary is missing).
    pub damaged: Option<String>,
}

/// What `check` reads.
pub trait Integrity {
    /// Hands `f` each line of SQLite's integrity check (`ok` when it found nothing), until `f`
    /// returns `false`.
    fn integrity_check(&self, f: &mut dyn FnMut(String) -> bool) -> Result<()>;
    /// Hands `f` each broken foreign key, until `f` returns `false`.
    fn foreign_key_check(&self, f: &mut dyn FnMut(ForeignKeyProblem) -> bool) -> Result<()>;
    /// Hands `f` each copied row with a problem, until `f` returns `false`.
    fn shared_line_check(&self, f: &mut dyn FnMut(SharedLineProblem) -> bool) -> Result<()>;
    /// Every session, as the check reads it.
    fn checked_sessions(&self) -> Result<Vec<CheckedSession>>;
    /// Session `sid`, as the check reads it.
    fn checked_session(&self, sid: SessionKey) -> Result<Option<CheckedSession>>;
    /// Every line of session `sid` in file order, as the check reads it.
    fn checked_entries(&self, sid: SessionKey) -> Result<Vec<CheckedEntry>>;
}
