//! What `sync` keeps per session file (its signature, how far it has read, whether it is
//! missing), the same on every backend ([`SyncStates`], implemented in
//! `store::sqlite::sync_state`; PostgreSQL keeps file signatures of its own, `store::postgres::files`).

use crate::hash::FxHashMap;
use crate::jsonl::signature::FileSignature;
use crate::store::interface::sessions::SessionFile;
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
    /// The session's tree is regular (see `store::interface::write::StoredStats::tree_ok`).
    pub tree_ok: bool,
}

/// What a local database keeps per session file it imported (`import` skips unchanged
/// files by it, `sync` reads on from it): a role of SQLite's (`Store::sync_states`); a server
/// keeps the signatures of its own sessions' files elsewhere (`Receiver::origin_files`).
pub trait SyncStates {
    /// The signature of every imported file, by path.
    fn known_signatures(&self) -> crate::error::Result<HashMap<PathBuf, FileSignature>>;
    /// The session recorded at `path`, with its file's signature.
    fn file_at(&self, path: &str) -> crate::error::Result<Option<SessionFile>>;
    /// The sync state of every session whose file is below `dir`, by path.
    fn states_under(&self, dir: &Path) -> crate::error::Result<FxHashMap<PathBuf, SyncState>>;
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
