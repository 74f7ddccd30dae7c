//! What `check` reads, the same on every backend ([`Integrity`], implemented in
//! `store::sqlite::integrity` and `store::postgres::integrity`): the database's own checks
//! (SQLite's; none on PostgreSQL), shared lines, and session and entry columns.

use crate::store::handle::Db;
use crate::store::keys::SessionKey;

use crate::error::Result;
pub use crate::store::interface::integrity::*;

/// Hands `f` each line of SQLite's integrity check (`ok` when it found nothing), until `f`
/// returns `false`.
pub fn integrity_check(db: &Db, mut f: impl FnMut(String) -> bool) -> Result<()> {
    db.store().integrity_check(&mut f)
}

/// Hands `f` each broken foreign key, until `f` returns `false`.
pub fn foreign_key_check(db: &Db, mut f: impl FnMut(ForeignKeyProblem) -> bool) -> Result<()> {
    db.store().foreign_key_check(&mut f)
}

/// Hands `f` each copied row with a problem, until `f` returns `false`.
pub fn shared_line_check(db: &Db, mut f: impl FnMut(SharedLineProblem) -> bool) -> Result<()> {
    db.store().shared_line_check(&mut f)
}

/// Every session, as the check reads it.
pub fn sessions(db: &Db) -> Result<Vec<CheckedSession>> {
    db.store().checked_sessions()
}

/// Session `sid`, as the check reads it.
pub fn session(db: &Db, sid: SessionKey) -> Result<Option<CheckedSession>> {
    db.store().checked_session(sid)
}

/// Every line of session `sid` in file order, as the check reads it.
pub fn entries(db: &Db, sid: SessionKey) -> Result<Vec<CheckedEntry>> {
    db.store().checked_entries(sid)
}
