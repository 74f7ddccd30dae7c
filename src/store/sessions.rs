//! One session's row and its entry ids: what the layers above read of them, the same on every
//! backend ([`Sessions`], implemented in `store::sqlite::sessions` and
//! `store::postgres::sessions`).

use crate::error::Result;
use crate::store::handle::Db;
use crate::store::keys::SessionKey;

pub use crate::store::interface::sessions::*;

/// The stored row of session `sid`.
pub fn session_row(db: &Db, sid: SessionKey) -> Result<SessionRow> {
    db.store().session_row(sid)
}

/// The key of the session whose file is at the absolute `path`.
pub fn sid_by_path(db: &Db, path: &str) -> Result<Option<SessionKey>> {
    db.store().sid_by_path(path)
}

/// Whether session `sid` has an entry with id `id`.
pub fn entry_id_exists(db: &Db, sid: SessionKey, id: &str) -> Result<bool> {
    db.store().entry_id_exists(sid, id)
}

/// pi's `getEntryCount()` for a session whose ids may repeat: distinct ids.
pub fn distinct_entry_ids(db: &Db, sid: SessionKey) -> Result<i64> {
    db.store().distinct_entry_ids(sid)
}

/// Removes session `sid` with its entries.
pub fn delete(db: &Db, sid: SessionKey) -> Result<()> {
    db.store().delete_session(sid)
}

/// Moves session `sid` to `place` (its path, folder, cwd and header line).
pub fn relocate(db: &Db, sid: SessionKey, place: &SessionPlace<'_>) -> Result<()> {
    db.store().relocate_session(sid, place)
}
