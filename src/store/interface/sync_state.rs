//! What `sync` keeps per session file (its signature, how far it has read, whether it is
//! missing), the same on every backend ([`SyncStates`], implemented in
//! `store::sqlite::sync_state`; PostgreSQL keeps file signatures of its own, `store::postgres::files`).

use crate::store::keys::SessionKey;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A session's file as the last import or sync left it.
#[derive(Debug, Clone)]
pub struct SyncState {
    pub sid: SessionKey,
    pub size: Option<i64>,
    pub mtime: Option<i64>,
    /// Bytes of the file read and dealt with.
    pub offset: Option<i64>,
    /// FNV-1a of the bytes before `offset` (see `jsonl::signature::tail_hash`).
    pub tail: Option<i64>,
    pub missing: bool,
}

/// Where a session's file was read up to, as the transaction sees it.
pub struct Position {
    pub size: Option<i64>,
    pub mtime: Option<i64>,
    pub offset: Option<i64>,
    /// The session's tree is regular (see `store::write::StoredStats::tree_ok`).
    pub tree_ok: bool,
}

/// What `sync` keeps per session file.
pub trait SyncStates {
    /// Whether this database keeps the read position and signature of local session files
    /// (a server keeps those of its own sessions elsewhere).
    fn keeps_file_states(&self) -> bool;
    /// The sync state of every session whose file is below `dir`, by path.
    fn states_under(&self, dir: &Path) -> crate::error::Result<HashMap<PathBuf, SyncState>>;
    /// The sync state of the session whose file is at `path`.
    fn state_at(&self, path: &Path) -> crate::error::Result<Option<SyncState>>;
    /// The read position of session `sid` (`None` when it is gone).
    fn position(&self, sid: SessionKey) -> crate::error::Result<Option<Position>>;
    /// Records that session `sid`'s file was read up to `offset`, `tail` being the hash of the
    /// bytes before it; the file is there.
    fn set_position(&self, sid: SessionKey, offset: i64, tail: i64) -> crate::error::Result<()>;
    /// Marks session `sid`'s file as gone (`missing`) or back.
    fn set_missing(&self, sid: SessionKey, missing: bool) -> crate::error::Result<()>;
}
