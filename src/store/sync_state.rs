//! What a sync remembers of each session's file: its signature when last read, how far it was
//! read, a hash of the bytes just before that point, and whether the file is gone. Each
//! statement sits beside the function that binds it, with named parameters and columns.

use crate::store::handle::Db;
use rusqlite::{named_params, OptionalExtension, Row};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A session's file as the last import or sync left it.
#[derive(Debug, Clone)]
pub struct SyncState {
    pub sid: i64,
    pub size: Option<i64>,
    pub mtime: Option<i64>,
    /// Bytes of the file read and dealt with.
    pub offset: Option<i64>,
    /// FNV-1a of the bytes before `offset` (see `ingest::import::tail_hash`).
    pub tail: Option<i64>,
    pub missing: bool,
}

impl SyncState {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<SyncState> {
        Ok(SyncState {
            sid: r.get("sid")?,
            size: r.get("file_size")?,
            mtime: r.get("file_mtime_ns")?,
            offset: r.get("sync_offset")?,
            tail: r.get("tail_hash")?,
            missing: r.get::<_, i64>("missing")? != 0,
        })
    }
}

/// Sync state of the sessions whose path sorts in `[:lo, :hi)` (one directory tree).
pub const SYNC_STATES_UNDER: &str = "SELECT path, sid, file_size, file_mtime_ns, sync_offset, tail_hash, missing \
    FROM sessions WHERE path >= :lo AND path < :hi";

/// The sync state of every session whose file is below `dir`, by path.
pub fn states_under(db: &Db, dir: &Path) -> crate::error::Result<HashMap<PathBuf, SyncState>> {
    let conn = db.conn()?;
    let root = dir.to_string_lossy();
    let (lo, hi) = (format!("{root}/"), format!("{root}0"));
    let mut st = conn.prepare_cached(SYNC_STATES_UNDER)?;
    let rows = st.query_map(named_params! { ":lo": lo, ":hi": hi }, |r| {
        Ok((PathBuf::from(r.get::<_, String>("path")?), SyncState::from_row(r)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Sync state of the session at a path.
pub const SYNC_STATE_BY_PATH: &str = "SELECT path, sid, file_size, file_mtime_ns, sync_offset, tail_hash, missing \
    FROM sessions WHERE path = :path";

/// The sync state of the session whose file is at `path`.
pub fn state_at(db: &Db, path: &Path) -> crate::error::Result<Option<SyncState>> {
    let conn = db.conn()?;
    let mut st = conn.prepare_cached(SYNC_STATE_BY_PATH)?;
    Ok(st.query_row(named_params! { ":path": path.to_string_lossy() }, SyncState::from_row).optional()?)
}

/// File signature, sync position and tree regularity of a session.
const POSITION: &str = "SELECT file_size, file_mtime_ns, sync_offset, tree_ok FROM sessions WHERE sid = :sid";

/// Where a session's file was read up to, as the transaction sees it.
pub struct Position {
    pub size: Option<i64>,
    pub mtime: Option<i64>,
    pub offset: Option<i64>,
    /// The session's tree is regular (see `store::write::StoredStats::tree_ok`).
    pub tree_ok: bool,
}

/// The read position of session `sid` (`None` when it is gone).
pub fn position(db: &Db, sid: i64) -> crate::error::Result<Option<Position>> {
    let conn = db.conn()?;
    Ok(conn
        .prepare_cached(POSITION)?
        .query_row(named_params! { ":sid": sid }, |r| {
            Ok(Position {
                size: r.get("file_size")?,
                mtime: r.get("file_mtime_ns")?,
                offset: r.get("sync_offset")?,
                tree_ok: r.get::<_, i64>("tree_ok")? != 0,
            })
        })
        .optional()?)
}

/// Records how far a session's file was read and the hash of the bytes before that point.
const SET_POSITION: &str = "UPDATE sessions SET sync_offset = :offset, tail_hash = :tail, missing = 0 WHERE sid = :sid";

/// Records that session `sid`'s file was read up to `offset`, `tail` being the hash of the
/// bytes before it; the file is there.
pub fn set_position(db: &Db, sid: i64, offset: i64, tail: i64) -> crate::error::Result<()> {
    let conn = db.conn()?;
    conn.prepare_cached(SET_POSITION)?.execute(named_params! { ":sid": sid, ":offset": offset, ":tail": tail })?;
    Ok(())
}

/// Marks a session's file as gone or back.
const SET_MISSING: &str = "UPDATE sessions SET missing = :missing WHERE sid = :sid";

/// Marks session `sid`'s file as gone (`missing`) or back.
pub fn set_missing(db: &Db, sid: i64, missing: bool) -> crate::error::Result<()> {
    let conn = db.conn()?;
    conn.prepare_cached(SET_MISSING)?.execute(named_params! { ":sid": sid, ":missing": i64::from(missing) })?;
    Ok(())
}
