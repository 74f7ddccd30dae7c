//! What `sync` keeps per session file (its signature, how far it has read, whether it is
//! missing), the same on every backend ([`SyncStates`], implemented in
//! `store::sqlite::sync_state`; PostgreSQL keeps file signatures of its own, `store::postgres::files`).

use crate::store::handle::Db;
use crate::store::keys::SessionKey;

pub use crate::store::interface::sync_state::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Whether `db` keeps the read position and signature of local session files.
pub fn keeps_file_states(db: &Db) -> bool {
    db.store().keeps_file_states()
}

/// The sync state of every session whose file is below `dir`, by path.
pub fn states_under(db: &Db, dir: &Path) -> crate::error::Result<HashMap<PathBuf, SyncState>> {
    db.store().states_under(dir)
}

/// The sync state of the session whose file is at `path`.
pub fn state_at(db: &Db, path: &Path) -> crate::error::Result<Option<SyncState>> {
    db.store().state_at(path)
}

/// The read position of session `sid` (`None` when it is gone).
pub fn position(db: &Db, sid: SessionKey) -> crate::error::Result<Option<Position>> {
    db.store().position(sid)
}

/// Records that session `sid`'s file was read up to `offset`, `tail` being the hash of the
/// bytes before it; the file is there.
pub fn set_position(db: &Db, sid: SessionKey, offset: i64, tail: i64) -> crate::error::Result<()> {
    db.store().set_position(sid, offset, tail)
}

/// Marks session `sid`'s file as gone (`missing`) or back.
pub fn set_missing(db: &Db, sid: SessionKey, missing: bool) -> crate::error::Result<()> {
    db.store().set_missing(sid, missing)
}
