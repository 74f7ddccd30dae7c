//! One session's row and its entry ids: what the layers above read of them, the same on every
//! backend ([`Sessions`], implemented in `store::sqlite::sessions` and
//! `store::postgres::sessions`).

use crate::error::Result;
use crate::store::handle::Db;

pub use crate::store::interface::sessions::*;

/// The stored row of session `sid`.
pub fn session_row(db: &Db, sid: i64) -> Result<SessionRow> {
    db.store().session_row(sid)
}

/// The key of the session whose file is at the absolute `path`.
pub fn sid_by_path(db: &Db, path: &str) -> Result<Option<i64>> {
    db.store().sid_by_path(path)
}

/// Whether session `sid` has an entry with id `id`.
pub fn entry_id_exists(db: &Db, sid: i64, id: &str) -> Result<bool> {
    db.store().entry_id_exists(sid, id)
}

/// pi's `getEntryCount()` for a session whose ids may repeat: distinct ids.
pub fn distinct_entry_ids(db: &Db, sid: i64) -> Result<i64> {
    db.store().distinct_entry_ids(sid)
}

/// Removes session `sid` with its entries.
pub fn delete(db: &Db, sid: i64) -> Result<()> {
    db.store().delete_session(sid)
}

/// The session recorded at `path`, with its file's signature.
pub fn file_at(db: &Db, path: &str) -> Result<Option<SessionFile>> {
    db.store().file_at(path)
}
